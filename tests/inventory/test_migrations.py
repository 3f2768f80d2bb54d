"""Making ImportJob a core job row (migration 0006) keeps the jobs already stored: who asked, the
errors and preview, and a status in the new words (a preview waits, an applied import is done); the
reverse gives the old words back."""

import pytest

from tests.support import migrated_to, scratch_database

BEFORE = [("inventory", "0005_optic_in_port_iff_installed")]
AFTER = [("inventory", "0006_importjob_is_a_job")]

OLD_TO_NEW = {"queued": "queued", "running": "running", "preview": "waiting", "applied": "done", "failed": "failed"}
ERRORS = [{"file": "devices.csv", "sheet": "", "row": 7, "column": "rack", "message": 'unknown rack "R99"',
           "text": 'devices.csv row 7, column rack: unknown rack "R99"'}]


pytestmark = pytest.mark.django_db


@pytest.fixture
def executor(tmp_path):
    with scratch_database(tmp_path) as executor:
        yield executor


def test_import_jobs_keep_their_rows_across_migration_0006_and_back(executor):
    old = migrated_to(executor, BEFORE)
    user = old.get_model("auth", "User").objects.create(username="uploader")
    project = old.get_model("delivery", "Project").objects.create(code="MIG-1", name="Old", customer_name="C")
    OldJob = old.get_model("inventory", "ImportJob")
    for status in OLD_TO_NEW:
        OldJob.objects.create(
            project=project, file=f"imports/MIG-1/{status}.csv", original_name=f"{status}.csv", status=status,
            created_by=user, errors=ERRORS if status == "failed" else [], kinds=["devices"],
            summary={"counts": {"devices": {"created": 6}}} if status == "preview" else {},
            progress_done=3, progress_total=6,
        )
    created = dict(OldJob.objects.values_list("original_name", "created_at"))

    new = migrated_to(executor, AFTER)
    jobs = {job.original_name: job for job in new.get_model("inventory", "ImportJob").objects.all()}
    assert {name: job.status for name, job in jobs.items()} == {f"{old}.csv": new for old, new in OLD_TO_NEW.items()}
    assert {job.requested_by_id for job in jobs.values()} == {user.pk}
    assert jobs["failed.csv"].errors == ERRORS
    assert jobs["preview.csv"].summary == {"counts": {"devices": {"created": 6}}}
    assert {name: job.created_at for name, job in jobs.items()} == created
    assert (jobs["running.csv"].progress_done, jobs["running.csv"].progress_step) == (3, "")

    back = migrated_to(executor, BEFORE)
    statuses = dict(back.get_model("inventory", "ImportJob").objects.values_list("original_name", "status"))
    assert statuses == {f"{old}.csv": old for old in OLD_TO_NEW}
