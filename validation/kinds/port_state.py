"""Port state: ibstat or ibstatus output a technician or a node uploads (validation.uploads), judged by
validation.uploads.judge. Nothing to start or execute: what it declares is why, and its figure."""

from __future__ import annotations

from .. import criteria
from ..choices import CheckKind
from .base import Kind


def figure(metrics: dict) -> str:
    state = " / ".join(v for v in (metrics.get("state"), metrics.get("physical_state")) if v)
    rate = metrics.get("rate_gbps")
    rate_text = f"{criteria.fmt_num(rate)} Gb/s" if isinstance(rate, int | float) else ""
    return ", ".join(part for part in (state, rate_text) if part)


KIND = Kind(
    CheckKind.PORT_STATE,
    not_startable=f"{CheckKind.PORT_STATE.label}: results of this kind arrive only as uploaded tool outputs.",
    figure=figure,
)
