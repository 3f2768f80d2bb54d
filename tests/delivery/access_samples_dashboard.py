"""The access matrix's samples for the dashboard (tests/access_world.py): /p/<code>/dashboard/ takes only
the project's code, so no URL kwargs; the rows it makes give the page something in each panel when the
matrix and the tablet layout test call it (stages, a check run in progress, a verified cable's day)."""

from __future__ import annotations

from django.utils import timezone

from cabling.choices import CableStatus
from cabling.models import Cable
from core.choices import JobStatus
from delivery.stages.services import stages_create_from_template
from validation.choices import CheckKind
from validation.models import CheckRun


def samples(project) -> dict[str, dict]:
    stages_create_from_template(project=project)
    CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.RUNNING,
                            progress_total=8, progress_done=3)
    cable = Cable.objects.filter(project=project).order_by("pk").first()
    if cable is not None:
        Cable.objects.filter(pk=cable.pk).update(status=CableStatus.VERIFIED, verified_at=timezone.now())
    return {}
