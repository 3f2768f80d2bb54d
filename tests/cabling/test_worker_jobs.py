"""The cabling jobs through a real broker: the services send their tasks by name (core.jobs), a Celery
worker runs them and the rows settle. Runs when CELERY_BROKER_URL is set (see tests/test_worker.py)."""

from __future__ import annotations

import pytest

from bringup.celery import app
from cabling.models import Cable, FabricPlan, LabelSheetExport
from cabling.services import fabric_plan_confirm, fabric_plan_preview, label_sheet_export_start
from core.choices import JobStatus
from tests.support import wait_for_job

from .test_label_pdf import printed_labels
from .test_plan_apply import fabric72_catalogue, small_spec

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]



def test_a_plan_is_applied_and_a_label_sheet_rendered_by_a_real_worker(real_celery_worker, project, manager):
    assert not app.conf.task_always_eager
    fabric72_catalogue()
    plan = fabric_plan_preview(project=project, user=manager, spec_text=small_spec(2))
    assert plan.status == JobStatus.WAITING
    fabric_plan_confirm(fabric_plan=plan, user=manager)
    plan = wait_for_job(FabricPlan, plan.pk)
    assert plan.status == JobStatus.DONE, plan.errors
    cables = Cable.objects.filter(project=project).count()
    assert cables == plan.summary["cables"] > 0

    export = label_sheet_export_start(project=project, user=manager)
    export = wait_for_job(LabelSheetExport, export.pk)
    assert export.status == JobStatus.DONE, export.errors
    with export.output.open("rb") as pdf:
        labels = printed_labels(pdf.read())
    assert len(labels) == export.progress_total == 2 * cables and labels[0].startswith("C00001 ")
