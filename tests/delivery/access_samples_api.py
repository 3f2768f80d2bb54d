"""The access matrix's samples for the stages and punch list API (tests/access_world.py): a stage, a
checklist item, and a punch item the customer may see (so a customer's read is the 200 the matrix expects;
an internal item's 404 to a customer, and the writes a customer may not make, are
tests/delivery/test_punch_api.py's and test_stages_api.py's)."""

from __future__ import annotations

from django.utils import timezone

from delivery.models import ChecklistItem, PunchItem, Stage
from delivery.stages.services import stages_create_from_template


def samples(project) -> dict[str, dict]:
    stages_create_from_template(project=project)  # a second application writes nothing
    stage = Stage.objects.get(project=project, key="racking")
    item = ChecklistItem.objects.filter(stage__project=project).order_by("pk").first()
    punch = PunchItem.objects.create(project=project, title="Cable tray cover missing in row A",
                                     customer_visible=True, opened_at=timezone.now())
    one_stage, one_item = {"pk": stage.pk}, {"pk": punch.pk}
    return {
        "api:stage-detail": one_stage,
        "api:stage-start": one_stage,
        "api:stage-skip": one_stage,
        "api:stage-complete": one_stage,
        "api:stage-waive": one_stage,
        "api:checklist-item-detail": {"pk": item.pk},
        "api:checklist-item-confirm": {"pk": item.pk},
        "api:punch-item-detail": one_item,
        "api:punch-item-status": one_item,
    }
