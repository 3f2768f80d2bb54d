"""The queue path, for real: an import job goes through Redis to a Celery worker and back to the database.

Runs when CELERY_BROKER_URL is set (skipped otherwise, unless REQUIRE_SERVICES=1, where a missing broker is
a failure). The worker runs in a thread of this process (celery.contrib.testing.worker), so it uses the
same test database, SQLite or PostgreSQL; it consumes a queue of its own so no other worker on the same
Redis can take these tasks, nor this one theirs.
"""


import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from bringup.celery import app
from core.choices import JobStatus
from inventory.imports.services import import_job_confirm, import_job_create
from inventory.models import Device, ImportJob, Port
from tests.support import wait_for_job

from .inventory.test_import import catalogue, fixture_bytes, run_import  # noqa: F401 - fixture used by name

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]



def test_an_import_is_previewed_and_applied_by_a_real_worker(real_celery_worker, project, technician, catalogue):  # noqa: F811
    assert not app.conf.task_always_eager
    assert run_import(project, "racks.csv").applied

    upload = SimpleUploadedFile("devices.csv", fixture_bytes("devices.csv"))
    job = import_job_create(project=project, user=technician, upload=upload)  # enqueued on commit
    job = wait_for_job(ImportJob, job.pk, {JobStatus.WAITING, JobStatus.FAILED})
    assert job.status == JobStatus.WAITING, job.errors
    assert job.summary["counts"]["devices"]["created"] == 6
    assert not Device.objects.filter(project=project).exists()  # a preview writes nothing

    import_job_confirm(job=job, user=technician)
    job = wait_for_job(ImportJob, job.pk, {JobStatus.DONE, JobStatus.FAILED})
    assert job.status == JobStatus.DONE, job.errors
    assert Device.objects.filter(project=project).count() == 6
    assert Port.objects.filter(device__name="gpu-001", parent__name="ib0").count() == 4
