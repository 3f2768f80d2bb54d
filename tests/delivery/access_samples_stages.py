"""The access matrix's samples for the stages pages (tests/access_world.py): the default template's stages
in the project, one stage by key, and one checklist item."""

from __future__ import annotations

from delivery.models import ChecklistItem
from delivery.stages.services import stages_create_from_template


def samples(project) -> dict[str, dict]:
    stages_create_from_template(project=project)
    item = ChecklistItem.objects.filter(stage__project=project).order_by("pk").first()
    one = {"key": "racking"}
    return {
        "stages:detail": one,
        "stages:start": one,
        "stages:complete": one,
        "stages:skip": one,
        "stages:waive": one,
        "stages:checklist-confirm": {"key": item.stage.key, "pk": item.pk},
    }
