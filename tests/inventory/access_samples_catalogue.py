"""The hardware catalogue pages' objects for the access matrix (tests/test_access_matrix.py). The catalogue
is shared by every project, so its sample is a hardware model of no project, reached through `project`:
members read it, technicians and customers may not import (MANAGE_PROJECT), outsiders get 404 for the
project in the URL."""

from __future__ import annotations

from tests.factories import HardwareModelFactory


def samples(project) -> dict[str, dict]:
    model = HardwareModelFactory()
    return {
        "inventory:catalogue": {},
        "inventory:catalogue-import": {},
        "inventory:catalogue-detail": {"pk": model.pk},
    }
