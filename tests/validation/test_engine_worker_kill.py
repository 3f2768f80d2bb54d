"""A worker killed mid-chunk (issue 11): on PostgreSQL and Redis with real `celery worker` processes, a
link-health run's worker is killed with SIGKILL while it holds a chunk; another worker is started; once
the chunk's lease ends it is handed out again (by the sweeper, or by the dead worker's own message, which
the broker gives back after a short visibility timeout: whichever claims first, the other finds the
targets held), and the run completes with every target measured exactly once: no duplicate row, no lost
target, nothing the dead worker held recorded twice.

Skipped without PostgreSQL (the worker is another process: it needs a database server it can share with
this test) and without CELERY_BROKER_URL; a failure under REQUIRE_SERVICES=1. The workers consume a
queue named for this test alone (CELERY_TASK_DEFAULT_QUEUE), which is deleted at the end.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

from bringup.celery import app
from core.choices import JobStatus
from tests.conftest import REQUIRE_SERVICES
from tests.support import wait_for_job
from validation import services, tasks
from validation.choices import CheckKind, ResultStatus
from validation.models import CheckResult, CheckRun

from .conftest import SEED, make_gpu_nodes

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
NODES = 8  # 64 link-health targets
CHUNK = 32  # two chunks: the first is the one killed
LEASE_MARGIN_S = 2.0
# What a simulated command counts for in a lease (VALIDATION_SIM_COMMAND_S): a chunk of 32 link-health
# targets holds 32 x 0.25 + 2 s, whatever the run's command timeout says (its default here: a minute).
SIM_COMMAND_S = 0.25


def _require(condition: bool, reason: str) -> None:
    if not condition:
        if REQUIRE_SERVICES:
            pytest.fail(f"REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)


@pytest.fixture
def worker_queue():
    """This test's queue: what .delay() sends to (here and in the workers), deleted at the end."""
    _require(bool(os.environ.get("CELERY_BROKER_URL")), "CELERY_BROKER_URL is not set (e.g. redis://127.0.0.1:6379/0)")
    _require(connection.vendor == "postgresql", "the database is not PostgreSQL (a worker process must share it)")
    queue = f"bringup-engine-{uuid.uuid4().hex[:12]}"
    previous = (app.conf.task_always_eager, app.conf.task_default_queue)
    app.conf.task_always_eager = False
    app.conf.task_default_queue = queue
    try:
        yield queue
    finally:
        app.conf.task_always_eager, app.conf.task_default_queue = previous
        with app.connection_for_write() as broker:
            channel = broker.default_channel
            channel.queue_delete(queue)
            channel.client.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")


def _database_url() -> str:
    """This test's database (pytest-django's test database), for the worker processes."""
    settings = connection.settings_dict
    parts = urlsplit(os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/x"))
    return urlunsplit((parts.scheme, parts.netloc, f"/{settings['NAME']}", parts.query, parts.fragment))


class Workers:
    """`celery worker` processes this test starts, each in its own process group (its pool's children
    with it), so each is killed by its own id and nothing else is."""

    def __init__(self, queue: str, logs: Path):
        self.queue = queue
        self.logs = logs
        self.started: list[subprocess.Popen] = []

    def start(self, name: str) -> subprocess.Popen:
        env = {
            **os.environ,
            "DATABASE_URL": _database_url(),
            "CELERY_TASK_DEFAULT_QUEUE": self.queue,
            "VALIDATION_CHUNK_SIZE": str(CHUNK),
            "VALIDATION_LEASE_MARGIN_S": str(LEASE_MARGIN_S),
            "VALIDATION_SIM_COMMAND_S": str(SIM_COMMAND_S),
            # The dead worker's unacknowledged message comes back after this: its chunk, delivered again,
            # must find every target held or finished.
            "CELERY_VISIBILITY_TIMEOUT_S": "5",
        }
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "bringup", "worker", "-Q", self.queue, "-n", f"{name}@%h",
             "--concurrency=1", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "warning"],
            cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
            stderr=open(self.logs / f"{name}.log", "wb"),  # noqa: SIM115 (the worker writes it; closed with it)
        )
        self.started.append(worker)
        return worker

    def kill(self, worker: subprocess.Popen, sig=signal.SIGKILL) -> None:
        if worker.poll() is None:
            os.killpg(worker.pid, sig)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait(timeout=30)

    def stop_all(self) -> None:
        for worker in self.started:
            if worker.poll() is None:
                self.kill(worker, signal.SIGTERM)


@pytest.fixture
def workers(worker_queue, tmp_path):
    started = Workers(worker_queue, tmp_path)
    try:
        yield started
    finally:
        started.stop_all()


def wait_until(predicate, *, seconds: float, what: str, poll: float = 0.005):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(poll)
    pytest.fail(f"{what} did not happen within {seconds:g} s")


def test_a_worker_killed_mid_chunk_loses_nothing_and_measures_nothing_twice(project, workers, settings):
    settings.VALIDATION_LEASE_MARGIN_S = LEASE_MARGIN_S  # the sweeper below runs here, with the workers' lease
    settings.VALIDATION_SIM_COMMAND_S = SIM_COMMAND_S
    make_gpu_nodes(project, NODES)
    doomed = workers.start("doomed")
    run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH,
                                   options={"seed": SEED})
    total = NODES * 8

    # The worker claimed a chunk and is running its targets: kill it there.
    running = CheckResult.objects.filter(run=run, status=ResultStatus.RUNNING)
    wait_until(running.exists, seconds=120, what="the first chunk's claim")
    workers.kill(doomed)
    stranded = dict(running.values_list("pk", "attempt"))
    if not stranded:
        pytest.fail("the worker finished its chunk before it could be killed: nothing was tested")
    assert set(stranded.values()) == {1} and len(stranded) <= CHUNK
    finished_before = dict(
        CheckResult.objects.filter(run=run, status=ResultStatus.DONE).values_list("pk", "finished_at")
    )
    assert not set(stranded) & set(finished_before)

    # Another worker takes what is queued; the dead one's chunk waits out its lease, then the sweeper
    # (Celery beat's task, run here with no idle time required) hands it out again.
    workers.start("successor")
    lease_s = CheckResult.objects.filter(pk__in=stranded).values_list("lease_s", flat=True).first()
    assert lease_s == pytest.approx(len(stranded) * SIM_COMMAND_S + LEASE_MARGIN_S)
    time.sleep(lease_s + 0.5)
    wait_until(lambda: not CheckResult.objects.filter(run=run, status=ResultStatus.PENDING).exists(),
               seconds=120, what="the queued chunks' run")
    for run_id in services.check_runs_to_sweep(stale_after_s=0):
        tasks.check_run_dispatch.delay(run_id)

    run = wait_for_job(CheckRun, run.pk, seconds=120)
    assert run.status == JobStatus.DONE
    results = list(run.results.all())
    assert len(results) == total == len({r.target_key for r in results})  # no duplicate row, none lost
    assert {r.status for r in results} == {ResultStatus.DONE}
    assert run.progress_done == total == services.finished_count(run)  # the counter counted each once
    # Measured exactly once: the dead worker's targets by their second attempt only (nothing of its chunk
    # was recorded), every other target by its first; those finished before the kill were left alone.
    assert {r.pk: r.attempt for r in results if r.pk in stranded} == {pk: 2 for pk in stranded}
    assert {r.attempt for r in results if r.pk not in stranded} == {1}
    assert {r.pk: r.finished_at for r in results if r.pk in finished_before} == finished_before
    assert run.log.count("never finished (its worker was lost); trying again") == len(stranded)
    assert "came after another attempt" not in run.log
