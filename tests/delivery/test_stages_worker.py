"""The gate recompute on a real Celery worker (Redis): evidence committed in one transaction, the task
sent by name after commit, run by the worker, the gates stored. Skipped without CELERY_BROKER_URL, a
failure under REQUIRE_SERVICES=1 (tests/conftest.py's real_celery_worker)."""

import time

import pytest
from django.db import OperationalError

from bringup.celery import app
from delivery.models import GateRecompute, Stage
from delivery.stages.services import gates_recompute_request

from .stages_world import build_world

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]


def wait_until(condition, what: str, seconds: float = 60) -> None:
    """Poll as a page would while the worker runs; SQLite may be held by the worker for a moment."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if condition():
                return
        except OperationalError:
            pass
        time.sleep(0.2)
    pytest.fail(f"{what} within {seconds:g} s")


def test_the_gate_recompute_runs_on_a_real_worker(real_celery_worker, project, manager, settings):
    assert not app.conf.task_always_eager
    settings.GATES_RECOMPUTE_DELAY_S = 0.5  # the delay that coalesces a burst of scans: sent with the task
    build_world(project)  # committed: creating the stages queued a first recompute
    wait_until(lambda: not Stage.objects.filter(project=project, gate_computed_at=None).exists()
               and not GateRecompute.objects.get(project=project).pending, "the worker did not recompute the gates")
    racking = Stage.objects.get(project=project, key="racking")
    assert racking.gate_passed is False and racking.gate_missing_count == 3
    assert Stage.objects.get(project=project, key="site_readiness").gate_passed
    row = GateRecompute.objects.get(project=project)
    assert not row.pending and row.computed_at is not None

    # Asked again: queued once more and run again by the worker.
    first = row.computed_at
    assert gates_recompute_request(project_id=project.pk)
    wait_until(lambda: GateRecompute.objects.get(project=project).computed_at != first,
               "the second recompute did not run")
