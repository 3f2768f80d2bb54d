"""The access matrix's samples for delivery (tests/access_world.py): the project home under /p/<code>/. The
stages, punch list, reports, activity, dashboard and handover keep theirs beside it (access_samples_*.py)."""

from __future__ import annotations


def samples(project) -> dict[str, dict]:
    return {"delivery:project-home": {}}
