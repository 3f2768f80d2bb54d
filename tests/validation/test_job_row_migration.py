"""validation 0004 turns check runs and uploads into job rows without losing one: a run's counters and an
upload's uploader, status and error survive. (Migrating back costs another 8 s of rendering states on
this machine; the reverse mapping, jobs_to_uploads, is the forward one read the other way.)"""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

BEFORE = [("validation", "0003_target_key_fits_pair_keys")]
AFTER = [("validation", "0004_job_rows")]

pytestmark = pytest.mark.django_db(transaction=True)


def migrate(targets):
    """Migrate the test database to `targets` and answer the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    executor.loader.build_graph()  # what was just applied
    return executor.loader.project_state(targets).apps


@pytest.fixture
def old_rows():
    """Rows in the shape before 0004 (built with the models of that state)."""
    apps = migrate(BEFORE)
    try:
        user = apps.get_model("auth", "User").objects.create(username="tech")
        project = apps.get_model("delivery", "Project").objects.create(code="OLD-1", name="Old")
        CheckRun = apps.get_model("validation", "CheckRun")
        ToolUpload = apps.get_model("validation", "ToolUpload")
        run = CheckRun.objects.create(project=project, kind="link_health", status="running", total=8, done=3,
                                      requested_by=user, log="started\n")
        parsed = ToolUpload.objects.create(project=project, file="uploads/OLD-1/a.txt", original_name="a.txt",
                                           host="gpu-001", status="parsed", uploaded_by=user, result_count=8,
                                           finished_at=timezone.now())
        failed = ToolUpload.objects.create(project=project, file="uploads/OLD-1/b.txt", original_name="b.txt",
                                           host="gpu-001", status="failed", uploaded_by=user,
                                           error="line 3: not mlxlink output", error_line=3)
        yield {"user": user.pk, "run": run.pk, "parsed": parsed.pk, "failed": failed.pk}
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())  # leave the database as it was (if a
        # test failed half-way; otherwise it is there already)


def test_check_runs_and_uploads_keep_their_rows_as_job_rows(old_rows):
    apps = migrate(AFTER)
    run = apps.get_model("validation", "CheckRun").objects.get(pk=old_rows["run"])
    assert (run.status, run.progress_total, run.progress_done, run.requested_by_id) == ("running", 8, 3,
                                                                                        old_rows["user"])
    assert (run.log, run.errors, run.progress_step) == ("started\n", [], "")
    ToolUpload = apps.get_model("validation", "ToolUpload")
    parsed, failed = ToolUpload.objects.get(pk=old_rows["parsed"]), ToolUpload.objects.get(pk=old_rows["failed"])
    assert (parsed.status, parsed.requested_by_id, parsed.errors, parsed.result_count) == ("done", old_rows["user"],
                                                                                         [], 8)
    assert (failed.status, failed.errors, failed.error_line) == ("failed", ["line 3: not mlxlink output"], 3)

