import os

import pytest

from delivery.choices import Role

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
