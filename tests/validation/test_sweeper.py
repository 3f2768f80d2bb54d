"""Runs that stop moving are picked up again: the sweeper (Celery beat) re-dispatches runs whose dispatch
was lost or whose worker died, and closes runs whose targets all finished; a target redelivered after
its round ended still moves the run on; a busy database delays a target but never strands it.

Eager mode (no broker): the tasks run in this process, and the rows are set up the way a lost message or
a dead worker leaves them."""

import threading
import time
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from core.choices import JobStatus
from validation import services, tasks
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun

pytestmark = pytest.mark.django_db

SEED = 1
STALE_S = 600


@pytest.fixture
def lost_dispatch(project, gpu_nodes, django_capture_on_commit_callbacks):
    """A run whose on-commit dispatch never reached a worker (the broker was down at that moment)."""

    def make(kind=CheckKind.NODE_INVENTORY):
        with django_capture_on_commit_callbacks(execute=False):
            return services.check_run_start(project=project, kind=kind, options={"seed": SEED})

    return make


def later(minutes: float):
    return timezone.now() + timedelta(minutes=minutes)


def test_a_run_whose_dispatch_was_lost_is_left_alone_until_stale_then_finished(lost_dispatch, settings):
    run = lost_dispatch()
    assert services.check_runs_to_sweep(stale_after_s=STALE_S) == []  # just queued: give the queue time
    assert services.check_runs_to_sweep(now=later(11), stale_after_s=STALE_S) == [run.pk]
    assert "no progress for 11 min: handing out 4 waiting target(s) again" in CheckRun.objects.get(pk=run.pk).log
    settings.VALIDATION_STALE_RUN_S = 0
    tasks.check_runs_sweep.delay()
    run.refresh_from_db()
    assert (run.status, run.progress_done, run.progress_total) == (JobStatus.DONE, 4, 4)
    assert set(run.results.values_list("verdict", flat=True)) == {Verdict.PASS}


def test_a_round_whose_next_dispatch_was_lost_goes_on_once_stale(lost_dispatch, settings):
    run = lost_dispatch(CheckKind.BANDWIDTH_MATRIX)
    first = services.check_run_advance(run_id=run.pk)
    for result_id in first:  # round 0 measured, but the dispatch its last target asked for was lost
        tasks.check_target.delay(result_id)
    run.refresh_from_db()
    assert (run.status, run.progress_done, run.current_round) == (JobStatus.RUNNING, 2, 0)
    settings.VALIDATION_STALE_RUN_S = 0
    tasks.check_runs_sweep.delay()
    run.refresh_from_db()
    assert (run.status, run.progress_done) == (JobStatus.DONE, 6)


def test_a_run_whose_targets_all_finished_is_closed_at_once(lost_dispatch):
    run = lost_dispatch()
    CheckRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING)
    run.results.update(status=ResultStatus.DONE, verdict=Verdict.PASS, finished_at=timezone.now())
    assert services.check_runs_to_sweep(stale_after_s=STALE_S) == [run.pk]  # no need to wait
    tasks.check_runs_sweep.delay()
    run.refresh_from_db()
    assert run.status == JobStatus.DONE and "finished: 4 pass" in run.log


def test_a_target_running_within_its_lease_is_not_swept_and_one_past_it_is(lost_dispatch):
    run = lost_dispatch(CheckKind.NCCL)  # one long target
    # On real nodes (a simulated command's lease is a second, whatever its timeout: leases.py).
    CheckRun.objects.filter(pk=run.pk).update(runner=RunnerKind.SSH)
    run.refresh_from_db()
    services.check_run_advance(run_id=run.pk)
    claimed = services.check_target_claim(result_id=run.results.get().pk)
    lease = services.target_lease_seconds(run, claimed)
    assert lease == 3600 + 1 + 120  # NCCL's command timeout, the server start, the margin
    assert services.check_runs_to_sweep(now=later(30), stale_after_s=STALE_S) == []  # an hour-long run
    past_lease = timezone.now() + timedelta(seconds=lease + 1)
    assert services.check_runs_to_sweep(now=past_lease, stale_after_s=STALE_S) == [run.pk]
    assert services.check_run_advance(run_id=run.pk, now=past_lease) == [claimed.pk]


def test_uploads_and_soak_windows_are_never_swept(project, gpu_nodes):
    old = timezone.now() - timedelta(days=1)
    upload = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.UPLOAD)
    soak = CheckRun.objects.create(project=project, kind=CheckKind.SOAK, status=JobStatus.RUNNING)
    for run in (upload, soak):
        CheckRun.objects.filter(pk=run.pk).update(created_at=old)
        CheckResult.objects.create(run=run, target_key="gpu-001:ib0")
    assert services.check_runs_to_sweep(stale_after_s=0) == []


def test_a_redelivered_target_whose_round_is_over_still_asks_for_the_next_round(lost_dispatch):
    run = lost_dispatch(CheckKind.BANDWIDTH_MATRIX)
    first = services.check_run_advance(run_id=run.pk)
    for result_id in first:
        tasks.check_target.delay(result_id)
    # The redelivered copy finds its target finished: nothing to run, but round 0 is over.
    assert services.check_target_claim(result_id=first[0]) is None
    assert services.next_round_due(result_id=first[0]) == run.pk
    services.check_run_advance(run_id=run.pk)  # what the dispatch it asks for does: round 1
    # Redelivered once more, it does not ask again: round 1 is handed out and not finished.
    assert services.next_round_due(result_id=first[0]) is None


# -- a busy database ----------------------------------------------------------------------------------------


def hold_the_run_row(run_id: int, held: threading.Event, seconds: float) -> None:
    """Another worker's transaction holding the run row (SQLite: its table) while it writes."""
    try:
        with transaction.atomic():
            CheckRun.objects.filter(pk=run_id).update(progress_done=F("progress_done"))
            held.set()
            time.sleep(seconds)
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_a_busy_database_delays_a_target_but_never_strands_it(project, gpu_nodes, caplog):
    run = services.check_run_start(project=project, kind=CheckKind.NODE_INVENTORY, options={"seed": SEED})
    target = run.results.get(target_key=gpu_nodes[0].name)
    # The target as a dispatcher hands it out: pending, never tried.
    CheckResult.objects.filter(pk=target.pk).update(
        status=ResultStatus.PENDING, verdict="", reasons=[], metrics={}, attempt=0, started_at=None, finished_at=None
    )
    CheckRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, finished_at=None, progress_done=3)
    held = threading.Event()
    holder = threading.Thread(target=hold_the_run_row, args=(run.pk, held, 0.5))
    holder.start()
    assert held.wait(5)
    tasks.check_target.apply(args=(target.pk,))
    holder.join()
    target.refresh_from_db()
    assert (target.status, target.verdict, target.attempt) == (ResultStatus.DONE, Verdict.PASS, 1)
    assert CheckRun.objects.get(pk=run.pk).progress_done == 4
    if connection.vendor == "sqlite":  # PostgreSQL waits for the row lock instead of refusing
        assert "database busy in" in caplog.text


def test_beat_schedule_sends_the_sweeper():
    from bringup.celery import app

    entry = app.conf.beat_schedule["check-runs-sweep"]
    assert entry["task"] == tasks.check_runs_sweep.name
    assert entry["schedule"] > 0
