"""Finished check runs for the demo project: a link-health run, a bandwidth matrix and an NCCL run on the
simulated cluster with a fixed seed, so the demo shows the injected faults found (the dirty fiber and the
hot optic, every pair with the slow GPU RDMA node, the NCCL run with wrong values) and nothing else; and,
for DEMO-72, a topology check run whose comparison finds the fabric faults planted in the simulated fabric
(a swapped pair, a cable on the wrong leaf, a link at half width, a missing link) and nothing else
(`demo_topology_ensure`).

`demo_checks_ensure(project)` is idempotent: a kind that already has its finished demo run is left alone.
The runs execute here and now, in this process, whatever broker is configured: seed_demo must leave a
demo that is complete when it returns.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from celery import current_app
from django.db import transaction

from core.choices import JobStatus
from delivery.models import Project

from . import services, tasks
from .choices import CheckKind, RunnerKind, Verdict
from .models import CheckResult, CheckRun, TopologyComparison

DEMO_SEED = 7
DEMO_KINDS = (CheckKind.LINK_HEALTH, CheckKind.BANDWIDTH_MATRIX, CheckKind.NCCL)
# What a passing pair of the demo matrix keeps of each rail's ib_write_bw output: the title and the table.
_TABLE_LINE = re.compile(r"^\s*(?:RDMA_Write BW Test|#bytes\s|[0-9]+\s+[0-9]+\s)")
COMPACTED_NOTE = "[demo: passing pair, CUDA set-up, settings and QP lines of each rail left out]\n"


@contextmanager
def eager_tasks():
    """Run Celery tasks in this process for the duration (as the tests' conftest does). The project's
    Celery app is the current one (bringup/__init__.py loads it with Django), reached without importing
    the project package from an app."""
    app = current_app
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        yield
    finally:
        app.conf.task_always_eager = previous


def compact_passing_raw_output(run: CheckRun) -> None:
    """A 72-node matrix is 2,556 pairs x 8 rails of ib_write_bw text, about 43 MB; the demo keeps the full
    output of the pairs that did not pass and only the result tables of those that did (about 5 MB)."""
    passing = list(run.results.filter(verdict=Verdict.PASS).only("id", "raw_output"))
    for result in passing:
        table = [line for line in result.raw_output.splitlines() if _TABLE_LINE.match(line)]
        result.raw_output = COMPACTED_NOTE + "\n".join(table) + "\n"
    CheckResult.objects.bulk_update(passing, ["raw_output"], batch_size=500)


def demo_run(project: Project, kind: str) -> CheckRun | None:
    """The finished demo run of this kind: the system's simulated run with the demo seed."""
    return (
        CheckRun.objects.filter(
            project=project,
            kind=kind,
            runner=RunnerKind.SIMULATED,
            requested_by=None,
            options__seed=DEMO_SEED,
            status=JobStatus.DONE,
        )
        .order_by("-created_at", "-id")
        .first()
    )


def demo_checks_ensure(project: Project) -> list[CheckRun]:
    """Run what is missing of the demo's checks to the end; returns the runs it created (none the second
    time). The dispatch is driven here; the copy check_run_start queues on commit then finds the run
    finished and does nothing, so a worker on a configured broker never runs a target twice."""
    created = []
    for kind in DEMO_KINDS:
        if demo_run(project, kind) is not None:
            continue
        # One transaction per run: on SQLite, a commit per target (thousands for the matrix) costs more
        # than the measuring itself.
        with eager_tasks(), transaction.atomic():
            run = services.check_run_start(
                project=project, kind=kind, runner=RunnerKind.SIMULATED, options={"seed": DEMO_SEED}
            )
            tasks.check_run_dispatch.apply(args=(run.pk,))
            if kind == CheckKind.BANDWIDTH_MATRIX:
                compact_passing_raw_output(run)
        run.refresh_from_db()
        created.append(run)
    return created


def demo_topology_ensure(project: Project) -> TopologyComparison | None:
    """The demo's topology comparison: a topology check run on the simulated fabric with the demo seed,
    collected through the runner and compared at its end. Returns the comparison it made, None when the
    demo already has it (a second seed_demo adds nothing)."""
    if demo_run(project, CheckKind.TOPOLOGY) is not None:
        return None
    with eager_tasks(), transaction.atomic():
        run = services.check_run_start(
            project=project, kind=CheckKind.TOPOLOGY, runner=RunnerKind.SIMULATED, options={"seed": DEMO_SEED}
        )
        tasks.check_run_dispatch.apply(args=(run.pk,))
    return TopologyComparison.objects.filter(run=run).first()
