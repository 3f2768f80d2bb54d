"""Migration 0004 turns FabricPlan into a job row and keeps every plan: rows written in the old shape
(created_by, statuses preview/queued/applying/applied/failed) come out with requested_by and the job
statuses (waiting/queued/running/done/failed), and migrating back restores the old statuses."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from cabling.models import FabricPlan
from core.choices import JobStatus

BEFORE = [("cabling", "0003_cable_end_optic_count")]
OLD_TO_NEW = {
    "preview": JobStatus.WAITING,
    "queued": JobStatus.QUEUED,
    "applying": JobStatus.RUNNING,
    "applied": JobStatus.DONE,
    "failed": JobStatus.FAILED,
}


def migrate(targets) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets or executor.loader.graph.leaf_nodes())
    return executor


@pytest.mark.django_db(transaction=True)
def test_plans_keep_their_rows_requester_and_status_across_the_migration():
    try:
        executor = migrate(BEFORE)
        old = executor.loader.project_state(BEFORE).apps
        user = old.get_model("auth", "User").objects.create(username="planner")
        project = old.get_model("delivery", "Project").objects.create(code="OLD-1", name="Old", customer_name="C")
        OldPlan = old.get_model("cabling", "FabricPlan")
        ids = {
            status: OldPlan.objects.create(project=project, spec_text="name: old", status=status, created_by=user,
                                           progress_done=3, progress_total=5, errors=["why"]).pk
            for status in OLD_TO_NEW
        }

        migrate(None)
        plans = {plan.pk: plan for plan in FabricPlan.objects.filter(pk__in=ids.values())}
        assert {status: plans[pk].status for status, pk in ids.items()} == OLD_TO_NEW
        for plan in plans.values():
            assert plan.requested_by_id == user.pk and plan.spec_text == "name: old"
            assert (plan.progress_done, plan.progress_total, plan.errors, plan.log) == (3, 5, ["why"], "")
        assert plans[ids["applied"]].status_label == "Applied" and plans[ids["preview"]].is_settled

        migrate(BEFORE)
        back = dict(OldPlan.objects.values_list("pk", "status"))
        assert {status: back[pk] for status, pk in ids.items()} == {status: status for status in OLD_TO_NEW}
    finally:
        migrate(None)  # leave the schema as the other tests expect it
