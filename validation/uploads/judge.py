"""Pure helpers for uploads (no Django import): which compute rail a tool's device name means, how to
judge an ibstat/ibstatus port, and how to cut a captured loop into one piece of text per result."""

from __future__ import annotations

import re
from collections.abc import Sequence

from validation import criteria

# mlx5_3 is RDMA device 3; /dev/mst/mt4131_pciconf3 is the fourth ConnectX of its type in PCI order, which on
# a node of identical NICs is the same card. Rail i of a node is its i-th compute port (validation.cluster).
_RAIL_DEVICE = re.compile(r"^(?:/dev/mst/)?(?:mlx5_(?P<rdma>\d+)|mt\d+_pciconf(?P<mst>\d+))$")


def rail_index(device_name: str | None) -> int | None:
    """The rail a tool's device name points at, or None for a name we cannot place (a PCI address, a
    second PCI function such as mt4123_pciconf0.1)."""
    if not device_name:
        return None
    match = _RAIL_DEVICE.match(device_name.strip())
    if match is None:
        return None
    return int(match.group("rdma") or match.group("mst"))


def evaluate_port_state(
    *, state: str | None, physical_state: str | None, rate_gbps: float | None, planned_gbps: float | None
) -> criteria.Verdict:
    """ibstat / ibstatus: the port is Active, physically LinkUp, at the rate the inventory plans."""
    reasons = []
    if (state or "").strip().lower() != "active":
        reasons.append(criteria.Reason(criteria.Outcome.FAIL, f"port state {state or 'unknown'}, expected Active"))
    if (physical_state or "").strip().lower() != "linkup":
        reasons.append(
            criteria.Reason(criteria.Outcome.FAIL, f"physical state {physical_state or 'unknown'}, expected LinkUp")
        )
    if planned_gbps and rate_gbps is not None and rate_gbps != planned_gbps:
        reasons.append(
            criteria.Reason(
                criteria.Outcome.FAIL,
                f"rate {criteria.fmt_num(rate_gbps)} Gb/s, planned {criteria.fmt_num(planned_gbps)} Gb/s",
            )
        )
    return criteria.Verdict.of(reasons)


_SEPARATOR = re.compile(r"^\s*(?:[=#*-]{3,}.*|\$ .*|.*\bmlxlink\b.*|)$")


def split_text(text: str, start_lines: Sequence[int]) -> list[str]:
    """The text of each result of a multi-result file: from its first line up to the next result's. Banner
    and command lines just above a result (a captured loop's `===== mlx5_1 =====`) go with the result they
    announce, not with the one before."""
    lines = text.splitlines()
    starts = []
    for index, line_no in enumerate(start_lines):
        start = max(1, min(line_no, len(lines) + 1))
        floor = starts[-1] + 1 if starts else 1
        if index == 0:
            start = 1  # whatever precedes the first result (the command) belongs to it
        while start - 1 >= floor and start - 1 >= 1 and _SEPARATOR.match(lines[start - 2]):
            start -= 1
        starts.append(start)
    ends = [*starts[1:], len(lines) + 1]
    return ["\n".join(lines[a - 1 : b - 1]).strip("\n") + "\n" for a, b in zip(starts, ends, strict=True)]
