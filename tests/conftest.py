import os

import pytest

from projects.choices import Role

from .factories import MembershipFactory, ProjectFactory, UserFactory

REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"


@pytest.fixture(autouse=True)
def _eager_celery(settings):
    """Tasks run in-process in tests, except where a test starts a real worker (tests/test_worker.py)."""
    from bringup.celery import app

    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Full-strength PBKDF2 costs a quarter of a second per test user; tests do not need it."""
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",  # hashes made outside a test (module fixtures)
    ]


@pytest.fixture(autouse=True)
def _media_root(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def project(db):
    return ProjectFactory(code="ACME-72", name="ACME 72-node cluster")


@pytest.fixture
def other_project(db):
    return ProjectFactory(code="OTHER-8", name="Someone else's cluster", customer_name="Other Corp")


def _member(project, role, username):
    user = UserFactory(username=username)
    MembershipFactory(user=user, project=project, role=role)
    return user


@pytest.fixture
def manager(project):
    return _member(project, Role.MANAGER, "mgr")


@pytest.fixture
def technician(project):
    return _member(project, Role.TECHNICIAN, "tech")


@pytest.fixture
def customer(project):
    return _member(project, Role.CUSTOMER, "cust")


@pytest.fixture
def outsider(other_project):
    """A customer of another project: must see nothing of `project`."""
    return _member(other_project, Role.CUSTOMER, "outsider")


@pytest.fixture
def client_for(client):
    def login(user):
        client.force_login(user)
        return client

    return login


@pytest.fixture
def api_for():
    from rest_framework.test import APIClient

    def login(user):
        api = APIClient()
        api.force_authenticate(user)
        return api

    return login


@pytest.fixture
def real_celery_worker():
    """A real Celery worker consuming from the broker in CELERY_BROKER_URL (Redis in CI), in a thread of
    this process so it shares the test database; use it with `django_db(transaction=True)` so the worker
    sees committed rows. It consumes a queue named for this test alone, so no other worker on the same
    Redis takes these tasks, nor this one theirs. Skipped without a broker, a failure under
    REQUIRE_SERVICES=1."""
    import uuid

    from celery.contrib.testing.worker import start_worker
    from celery.signals import task_postrun
    from django.db import connections

    from bringup.celery import app

    if not os.environ.get("CELERY_BROKER_URL"):
        if REQUIRE_SERVICES:
            pytest.fail("REQUIRE_SERVICES=1 but CELERY_BROKER_URL is not set: the real-worker tests must run")
        pytest.skip("CELERY_BROKER_URL is not set (e.g. redis://127.0.0.1:6379/0)")

    queue = f"bringup-test-{uuid.uuid4().hex[:12]}"
    previous = (app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue  # what .delay() routes to; read by celery at send time

    def close_connections(**kwargs):
        # A `celery worker` process gets this from celery's Django fixup; the embedded worker does not,
        # and a connection left open would keep PostgreSQL from dropping the test database.
        connections.close_all()

    task_postrun.connect(close_connections, weak=False)
    try:
        with start_worker(app, queues=[queue], pool="solo", perform_ping_check=False, shutdown_timeout=30) as w:
            yield w
    finally:
        task_postrun.disconnect(close_connections)
        app.conf.task_always_eager, app.conf.task_default_queue = previous
        with app.connection_for_write() as connection:  # leave nothing of this run in Redis
            channel = connection.default_channel
            channel.queue_delete(queue)
            # kombu's Redis transport keeps the queue's binding sets; they are ours, named after the queue.
            channel.client.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")
