"""The queue path, for real: an import job goes through Redis to a Celery worker and back to the database.

Runs when CELERY_BROKER_URL is set (skipped otherwise, unless REQUIRE_SERVICES=1, where a missing broker is
a failure). The worker runs in a thread of this process (celery.contrib.testing.worker), so it uses the
same test database, SQLite or PostgreSQL; it consumes a queue of its own so no other worker on the same
Redis can take these tasks, nor this one theirs.
"""

import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError

from bringup.celery import app
from inventory.choices import ImportJobStatus
from inventory.imports.services import import_job_confirm, import_job_create
from inventory.models import Device, ImportJob, Port

from .inventory.test_import import catalogue, fixture_bytes, run_import  # noqa: F401 - fixture used by name

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 60


def wait_for(job_id: int, statuses: set[str]) -> ImportJob:
    deadline = time.monotonic() + WAIT_SECONDS
    job = None
    while time.monotonic() < deadline:
        try:
            job = ImportJob.objects.get(pk=job_id)
        except OperationalError:  # SQLite: the worker holds the table for a moment
            job = None
        if job is not None and job.status in statuses:
            return job
        time.sleep(0.1)
    pytest.fail(f"job {job_id} did not reach {statuses} within {WAIT_SECONDS}s (last: {job and job.status})")


def test_an_import_is_previewed_and_applied_by_a_real_worker(real_celery_worker, project, technician, catalogue):  # noqa: F811
    assert not app.conf.task_always_eager
    assert run_import(project, "racks.csv").applied

    upload = SimpleUploadedFile("devices.csv", fixture_bytes("devices.csv"))
    job = import_job_create(project=project, user=technician, upload=upload)  # enqueued on commit
    job = wait_for(job.pk, {ImportJobStatus.PREVIEW, ImportJobStatus.FAILED})
    assert job.status == ImportJobStatus.PREVIEW, job.errors
    assert job.summary["counts"]["devices"]["created"] == 6
    assert not Device.objects.filter(project=project).exists()  # a preview writes nothing

    import_job_confirm(job=job, user=technician)
    job = wait_for(job.pk, {ImportJobStatus.APPLIED, ImportJobStatus.FAILED})
    assert job.status == ImportJobStatus.APPLIED, job.errors
    assert Device.objects.filter(project=project).count() == 6
    assert Port.objects.filter(device__name="gpu-001", parent__name="ib0").count() == 4
