"""Soak: every compute port's error counters read at an interval across a long window (validation.soak).
Not a run a person starts from the runs page: a window is started and stopped on its own page, and its
readings come from the beat tick. What it declares here is what it shares with the other kinds: the
time one reading may take, the options a window takes, and the figure its results show."""

from __future__ import annotations

import re

from ..choices import CheckKind
from .base import Kind, Option, host_list, positive_seconds, whole_number


def port_list(value):
    if not isinstance(value, list) or not all(isinstance(v, str) and re.fullmatch(r"[^:\s]+:\S+", v) for v in value):
        raise ValueError('expected a list of "host:rdma_device" entries, e.g. ["gpu-002:mlx5_3"]')
    return value


def figure(metrics: dict) -> str:
    """Which counters grew, or the last sample up to which none did."""
    growth = metrics.get("growth") or {}
    if growth:
        return ", ".join(key.replace("_", " ") for key in growth) + " grew"
    last = metrics.get("last_sweep")
    return f"no growth up to sample {last}" if isinstance(last, int) else ""


KIND = Kind(
    CheckKind.SOAK,
    timeout_s=60,
    options={
        "seed": Option(whole_number(0), simulated_only=True),
        "growing_ports": Option(port_list, simulated_only=True),
        "grow_from_sample": Option(whole_number(0), simulated_only=True),
        "down_hosts": Option(host_list, simulated_only=True),  # these refuse every connection
        "timeout_s": Option(positive_seconds),
    },
    not_startable="A soak is not a run of targets: start and stop it from the soak page.",
    figure=figure,
)
