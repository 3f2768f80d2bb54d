"""validation 0004 turns check runs and uploads into job rows without losing one: a run's counters and an
upload's uploader, status and error survive. (The reverse mapping, jobs_to_uploads, is the forward one read
the other way.)"""

import pytest
from django.utils import timezone

from tests.support import migrated_to, scratch_database

BEFORE = [("validation", "0003_target_key_fits_pair_keys")]
AFTER = [("validation", "0004_job_rows")]

pytestmark = pytest.mark.django_db


@pytest.fixture
def executor(tmp_path):
    with scratch_database(tmp_path) as executor:
        yield executor


@pytest.fixture
def old_rows(executor):
    """Rows in the shape before 0004 (built with the models of that state)."""
    apps = migrated_to(executor, BEFORE)
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
    return {"user": user.pk, "run": run.pk, "parsed": parsed.pk, "failed": failed.pk}


def test_check_runs_and_uploads_keep_their_rows_as_job_rows(executor, old_rows):
    apps = migrated_to(executor, AFTER)
    run = apps.get_model("validation", "CheckRun").objects.get(pk=old_rows["run"])
    assert (run.status, run.progress_total, run.progress_done, run.requested_by_id) == ("running", 8, 3,
                                                                                        old_rows["user"])
    assert (run.log, run.errors, run.progress_step) == ("started\n", [], "")
    ToolUpload = apps.get_model("validation", "ToolUpload")
    parsed, failed = ToolUpload.objects.get(pk=old_rows["parsed"]), ToolUpload.objects.get(pk=old_rows["failed"])
    assert (parsed.status, parsed.requested_by_id, parsed.errors, parsed.result_count) == ("done", old_rows["user"],
                                                                                         [], 8)
    assert (failed.status, failed.errors, failed.error_line) == ("failed", ["line 3: not mlxlink output"], 3)

