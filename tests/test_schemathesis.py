"""The API against its own schema: schemathesis reads /api/schema/, generates requests for every operation
(valid ones and invalid ones) and sends them to the application in this process (WSGI, no server), as a
manager and as a customer of a project holding one row of each kind (tests/access_world.py). Any 5xx,
any status the operation does not document and any response that does not match the schema fails.

A bounded budget (MAX_EXAMPLES per operation and generation mode, no shrinking) keeps it to about a
minute; `derandomize` makes every run send the same requests. It runs in CI (PostgreSQL, or
REQUIRE_SERVICES=1) and is skipped on a local SQLite run.
"""

from __future__ import annotations

import os
import time

import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections

from tests.access_world import world_for_module

pytestmark = [pytest.mark.services, pytest.mark.django_db]

ON_POSTGRES = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))
REQUIRE_SERVICES = os.environ.get("REQUIRE_SERVICES") == "1"
MAX_EXAMPLES = int(os.environ.get("SCHEMATHESIS_MAX_EXAMPLES", "3"))  # per operation and mode
SCHEMA_PATH = "/api/schema/?format=json"

if not (ON_POSTGRES or REQUIRE_SERVICES):
    pytest.skip("schemathesis runs in CI, on PostgreSQL (DATABASE_URL=postgres://...) or with REQUIRE_SERVICES=1",
                allow_module_level=True)

import schemathesis  # noqa: E402 - only where it runs
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.generation import GenerationMode  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    """One project with one row of each kind, built once and rolled back at the end."""
    with world_for_module(django_db_blocker, tmp_path_factory, "schemathesis") as built:
        yield built


@pytest.fixture
def wsgi_app(world, settings):
    """Django's WSGI application, sharing this test's database connection: as Django's test client does,
    requests do not close it (that would end the test's transaction)."""
    settings.MEDIA_ROOT = str(world.media_root)
    settings.ALLOWED_HOSTS = ["*"]
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def token_headers(user) -> dict[str, str]:
    from rest_framework.authtoken.models import Token

    token, _ = Token.objects.get_or_create(user=user)
    return {"Authorization": f"Token {token.key}"}


def run_operation(operation, mode: GenerationMode, headers: dict) -> str | None:
    """The operation's generated cases, each sent and checked; the first failure in words, or None."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: the budget stays bounded when a case fails
        suppress_health_check=list(HealthCheck),
    )
    def check(case):
        case.call_and_validate(headers=headers, checks=CHECKS)

    try:
        check()
    except Unsatisfiable:  # nothing to generate: a string path parameter has no invalid value
        return None
    except (Exception, BaseExceptionGroup) as exc:  # noqa: BLE001 - every failure is reported, with the operation
        return f"{operation.label} ({mode.value}): {exc}"
    return None


@pytest.mark.parametrize("role", ["manager", "customer"])
def test_the_api_keeps_to_its_schema(world, wsgi_app, role):
    headers = token_headers(world.users[role])
    schema = schemathesis.openapi.from_wsgi(SCHEMA_PATH, wsgi_app, headers=headers)
    started, failures, operations = time.monotonic(), [], 0
    for result in schema.get_all_operations():
        operation = result.ok()
        operations += 1
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            failure = run_operation(operation, mode, headers)
            if failure:
                failures.append(failure)
    elapsed = time.monotonic() - started
    assert operations >= 40, operations
    assert not failures, f"{len(failures)} operation(s) failed ({elapsed:.0f} s):\n\n" + "\n\n".join(failures)
