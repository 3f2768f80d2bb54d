"""Check runs through Redis and a real Celery worker, with the simulated runner: the dispatcher, the
per-target tasks, the rounds of a bandwidth matrix and a retried transient error all travel the broker.

Runs when CELERY_BROKER_URL is set (skipped otherwise; a failure under REQUIRE_SERVICES=1). The worker
is celery.contrib.testing's embedded worker in a thread of this process, so it shares the test
database; it consumes a queue named for this test only, so no other worker takes these tasks.
"""


import pytest

from bringup.celery import app
from core.choices import JobStatus
from tests.support import wait_for_job
from validation import services, tasks
from validation.choices import CheckKind, ResultStatus, Verdict
from validation.models import CheckRun
from validation.runners import plan_faults

from .validation.conftest import make_gpu_nodes

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

WAIT_SECONDS = 90


def test_check_runs_through_redis_and_a_real_worker(real_celery_worker, project, settings):
    settings.VALIDATION_RETRY_BASE_S = 0.2  # a real countdown through the broker, kept short
    assert not app.conf.task_always_eager
    nodes = make_gpu_nodes(project, 4)
    faults = plan_faults(services.sim_cluster_for(project), 5)

    link = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, options={"seed": 5})
    link = wait_for_job(CheckRun, link.pk, seconds=WAIT_SECONDS)
    assert (link.status, link.progress_done, link.progress_total) == (JobStatus.DONE, 32, 32)
    failed = {(r.device.name, f"mlx5_{r.port.name[2:]}") for r in link.results.exclude(verdict=Verdict.PASS)}
    assert failed == {faults.dirty_fiber, faults.hot_optic}

    matrix = services.check_run_start(project=project, kind=CheckKind.BANDWIDTH_MATRIX, options={"seed": 5})
    matrix = wait_for_job(CheckRun, matrix.pk, seconds=WAIT_SECONDS)
    assert (matrix.status, matrix.progress_done, matrix.progress_total) == (JobStatus.DONE, 6, 6)
    slow = faults.slow_gpu_rdma_node
    for result in matrix.results.select_related("device", "peer_device"):
        involved = slow in (result.device.name, result.peer_device.name)
        assert (result.verdict == Verdict.FAIL) == involved, result.target_key
    assert matrix.current_round == 2  # three rounds of two pairs, handed out one after another
    assert f"{slow} is the likely cause" in matrix.log

    flaky = nodes[1].name
    inventory = services.check_run_start(
        project=project, kind=CheckKind.NODE_INVENTORY, options={"seed": 5, "flaky_hosts": {flaky: 1}}
    )
    inventory = wait_for_job(CheckRun, inventory.pk, seconds=WAIT_SECONDS)
    assert inventory.status == JobStatus.DONE
    retried = inventory.results.get(target_key=flaky)
    assert (retried.status, retried.verdict, retried.attempt) == (ResultStatus.DONE, Verdict.PASS, 2)
    assert f"{flaky}: {flaky}:22: Connection refused (attempt 1); retry 1 of 3" in inventory.log
    assert inventory.results.count() == 4


def stall_after_round(run: CheckRun, round_no: int) -> None:
    """Leave a finished run as a lost message would have: the rounds after `round_no` never handed out."""
    later = run.results.filter(round__gt=round_no)
    later.update(
        status=ResultStatus.PENDING, verdict="", reasons=[], metrics={}, raw_output="", attempt=0,
        started_at=None, finished_at=None,
    )
    CheckRun.objects.filter(pk=run.pk).update(
        status=JobStatus.RUNNING,
        finished_at=None,
        current_round=round_no,
        progress_done=run.progress_total - later.count(),
    )


def test_stalled_runs_move_on_through_redis_and_a_real_worker(real_celery_worker, project, settings):
    make_gpu_nodes(project, 4)
    started = services.check_run_start(project=project, kind=CheckKind.BANDWIDTH_MATRIX)
    matrix = wait_for_job(CheckRun, started.pk, seconds=WAIT_SECONDS)

    # The worker died after recording round 0's last target, before asking for round 1: the broker
    # redelivers that target, which finds it finished and must still ask for the next round.
    stall_after_round(matrix, 0)
    tasks.check_target.delay(matrix.results.filter(round=0).first().pk)
    matrix = wait_for_job(CheckRun, matrix.pk, seconds=WAIT_SECONDS)
    assert (matrix.status, matrix.progress_done, matrix.current_round) == (JobStatus.DONE, 6, 2)

    # The dispatch for round 1 was lost with nothing to redeliver: the sweeper (beat) picks the run up.
    stall_after_round(matrix, 0)
    settings.VALIDATION_STALE_RUN_S = 0
    tasks.check_runs_sweep.delay()
    matrix = wait_for_job(CheckRun, matrix.pk, seconds=WAIT_SECONDS)
    assert (matrix.status, matrix.progress_done) == (JobStatus.DONE, 6)
    assert "no progress for 0 min: handing out 2 waiting target(s) again" in matrix.log
    assert set(matrix.results.values_list("attempt", flat=True)) == {1}  # nothing ran twice
