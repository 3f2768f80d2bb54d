"""The queue path, for real: an import job goes through Redis to a Celery worker and back to the database.

Runs when CELERY_BROKER_URL is set (skipped otherwise, unless REQUIRE_SERVICES=1, where a missing broker is
a failure). The worker runs in a thread of this process (celery.contrib.testing.worker), so it uses the
same test database, SQLite or PostgreSQL; it consumes a queue of its own so no other worker on the same
Redis can take these tasks, nor this one theirs.
"""

import os
import time
import uuid

import pytest
from celery.contrib.testing.worker import start_worker
from celery.signals import task_postrun
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import OperationalError, connections

from bringup.celery import app
from inventory.choices import ImportJobStatus
from inventory.imports.services import import_job_confirm, import_job_create
from inventory.models import Device, ImportJob, Port

from .inventory.test_import import catalogue, fixture_bytes, run_import  # noqa: F401 - fixture used by name

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 60


@pytest.fixture(autouse=True)
def _eager_celery():
    """Overrides the suite's eager mode: here tasks must leave the process through the broker."""
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = False
    yield
    app.conf.task_always_eager = previous


@pytest.fixture
def broker_url():
    url = settings.CELERY_BROKER_URL
    if not url:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("REQUIRE_SERVICES=1 but CELERY_BROKER_URL is not set: the real-worker test must run")
        pytest.skip("CELERY_BROKER_URL is not set (set it to run the real-worker test)")
    return url


@pytest.fixture
def worker(broker_url):
    queue = f"bringup-test-{uuid.uuid4().hex[:12]}"
    previous_queue = app.conf.task_default_queue
    app.conf.task_default_queue = queue  # what .delay() routes to; read by celery at send time

    def close_worker_connections(**kwargs):
        # A `celery worker` process gets this from celery's Django fixup; the embedded worker does not,
        # and a connection left open would keep PostgreSQL from dropping the test database.
        connections.close_all()

    task_postrun.connect(close_worker_connections, weak=False)
    try:
        options = {"pool": "solo", "perform_ping_check": False, "shutdown_timeout": 30}
        with start_worker(app, queues=[queue], **options) as w:
            yield w
    finally:
        task_postrun.disconnect(close_worker_connections)
        app.conf.task_default_queue = previous_queue
        with app.connection_for_write() as connection:  # leave nothing of this run in Redis
            channel = connection.default_channel
            channel.queue_delete(queue)
            # kombu's Redis transport keeps the queue's binding sets; they are ours, named after the queue.
            channel.client.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")


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


def test_an_import_is_previewed_and_applied_by_a_real_worker(worker, project, technician, catalogue):  # noqa: F811
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
