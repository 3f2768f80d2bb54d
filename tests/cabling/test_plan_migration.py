"""Migration 0004 turns FabricPlan into a job row and keeps every plan: rows written in the old shape
(created_by, statuses preview/queued/applying/applied/failed) come out with requested_by and the job
statuses (waiting/queued/running/done/failed), and migrating back restores the old statuses."""

from __future__ import annotations

import pytest

from cabling.models import FabricPlan as CurrentPlan
from core.choices import JobStatus
from tests.support import migrated_to, scratch_database

BEFORE = [("cabling", "0003_cable_end_optic_count")]
AFTER = [("cabling", "0004_fabric_plan_is_a_job")]
OLD_TO_NEW = {
    "preview": JobStatus.WAITING,
    "queued": JobStatus.QUEUED,
    "applying": JobStatus.RUNNING,
    "applied": JobStatus.DONE,
    "failed": JobStatus.FAILED,
}


@pytest.mark.django_db
def test_plans_keep_their_rows_requester_and_status_across_the_migration(tmp_path):
    with scratch_database(tmp_path) as executor:
        old = migrated_to(executor, BEFORE)
        user = old.get_model("auth", "User").objects.create(username="planner")
        project = old.get_model("delivery", "Project").objects.create(code="OLD-1", name="Old", customer_name="C")
        OldPlan = old.get_model("cabling", "FabricPlan")
        ids = {
            status: OldPlan.objects.create(project=project, spec_text="name: old", status=status, created_by=user,
                                           progress_done=3, progress_total=5, errors=["why"]).pk
            for status in OLD_TO_NEW
        }

        FabricPlan = migrated_to(executor, AFTER).get_model("cabling", "FabricPlan")
        plans = {plan.pk: plan for plan in FabricPlan.objects.filter(pk__in=ids.values())}
        assert {status: plans[pk].status for status, pk in ids.items()} == OLD_TO_NEW
        for plan in plans.values():
            assert plan.requested_by_id == user.pk and plan.spec_text == "name: old"
            assert (plan.progress_done, plan.progress_total, plan.errors, plan.log) == (3, 5, ["why"], "")
        # What the pages make of the new statuses (the model of today, on the migrated rows' values).
        applied = CurrentPlan(status=plans[ids["applied"]].status)
        preview = CurrentPlan(status=plans[ids["preview"]].status)
        assert applied.status_label == "Applied" and preview.is_settled

        OldPlan = migrated_to(executor, BEFORE).get_model("cabling", "FabricPlan")
        back = dict(OldPlan.objects.values_list("pk", "status"))
        assert {status: back[pk] for status, pk in ids.items()} == {status: status for status in OLD_TO_NEW}
