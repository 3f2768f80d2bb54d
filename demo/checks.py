"""Finished check runs for the demo project: a link-health run, a bandwidth matrix and an NCCL run on the
simulated cluster with a fixed seed, so the demo shows the injected faults found (the dirty fiber and the
hot optic, every pair with the slow GPU RDMA node, the NCCL run with wrong values) and nothing else; and,
for DEMO-72, a topology check run whose comparison finds the fabric faults planted in the simulated fabric
(a swapped pair, a cable on the wrong leaf, a link at half width, a missing link) and nothing else
(`demo_topology_ensure`).

`demo_checks_ensure(project)` is idempotent: a kind that already has its finished demo run is left alone.
The runs execute here and now, in this process, whatever broker is configured: seed_demo must leave a
demo that is complete when it returns. While a run executes, `say` (seed_demo's output) is told its progress
("312/576 targets (54%)") every few seconds, so a first `make run` is seen moving.

The demo's bandwidth matrix covers the nodes of DEMO_MATRIX_RACKS (the run option `nodes`), not all 72: a
full matrix is 2,556 pairs x 8 rails of ib_write_bw, most of a first `make run`, and shows nothing the
24 nodes' 276 pairs do not: the slow node's row of failing pairs, and the run naming it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from celery import current_app
from celery.signals import task_postrun
from django.db import transaction

from core.choices import JobStatus
from inventory.models import Device
from projects.models import Project
from validation import services, tasks
from validation.choices import CheckKind, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun, TopologyComparison

DEMO_SEED = 7
DEMO_KINDS = (CheckKind.LINK_HEALTH, CheckKind.BANDWIDTH_MATRIX, CheckKind.NCCL)
# DEMO-72's matrix: the last six racks of row B (gpu-049 to gpu-072), which hold the node the demo seed makes
# slow; LAB-8's racks are not named here, so its matrix covers its 8 nodes.
DEMO_MATRIX_RACKS = ("B04", "B05", "B06", "B07", "B08", "B09")
PROGRESS_EVERY_S = 2.0  # how often a running demo run's progress is printed at most
Say = Callable[[str], None]
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


@contextmanager
def progress_told(run: CheckRun, say: Say | None, *, every_s: float = PROGRESS_EVERY_S) -> Iterator[None]:
    """While the block runs `run`'s tasks in this process (eagerly), tell `say` how far it is, at most every
    `every_s` seconds: after a task finishes, its counter is read (one query, in this thread's connection,
    so inside the run's transaction too). The last line is the caller's to print."""
    if say is None:
        yield
        return
    title = run.get_kind_display()
    last = [time.perf_counter()]

    def told(sender=None, **kwargs):
        now = time.perf_counter()
        if now - last[0] < every_s:
            return
        last[0] = now
        done, total = CheckRun.objects.filter(pk=run.pk).values_list("progress_done", "progress_total").get()
        if total:
            say(f"  {run.project.code} {title}: {done:,}/{total:,} targets ({100 * done // total}%)")

    task_postrun.connect(told, weak=False)
    try:
        yield
    finally:
        task_postrun.disconnect(told)


def demo_options(project: Project, kind: str) -> dict:
    """The options of the demo's run of `kind`: the demo seed, and for a matrix the nodes it covers."""
    options = {"seed": DEMO_SEED}
    if kind == CheckKind.BANDWIDTH_MATRIX:
        nodes = matrix_nodes(project)
        if nodes:
            options["nodes"] = nodes
    return options


def matrix_nodes(project: Project) -> list[str]:
    """The GPU nodes in DEMO_MATRIX_RACKS, by name (none when the project has no such racks)."""
    in_racks = Device.objects.filter(project=project, rack__name__in=DEMO_MATRIX_RACKS)
    racked = set(in_racks.values_list("name", flat=True))
    return [node.name for node in services.gpu_nodes(project) if node.name in racked]


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


def demo_checks_ensure(project: Project, *, say: Say | None = None) -> list[CheckRun]:
    """Run what is missing of the demo's checks to the end; returns the runs it created (none the second
    time). The dispatch is driven here; the copy check_run_start queues on commit then finds the run
    finished and does nothing, so a worker on a configured broker never runs a target twice. `say` is
    told each run's start, progress and end."""
    created = []
    for kind in DEMO_KINDS:
        if demo_run(project, kind) is not None:
            continue
        # One transaction per run: on SQLite, a commit per target (thousands for the matrix) costs more
        # than the measuring itself.
        started = time.perf_counter()
        with eager_tasks(), transaction.atomic():
            run = services.check_run_start(
                project=project, kind=kind, runner=RunnerKind.SIMULATED, options=demo_options(project, kind)
            )
            if say:
                say(f"  {project.code} {run.get_kind_display()}: {run.progress_total:,} targets ...")
            with progress_told(run, say):
                tasks.check_run_dispatch.apply(args=(run.pk,))
            if kind == CheckKind.BANDWIDTH_MATRIX:
                compact_passing_raw_output(run)
        run.refresh_from_db()
        if say:
            done, total, took = run.progress_done, max(run.progress_total, 1), time.perf_counter() - started
            say(f"  {project.code} {run.get_kind_display()}: {done:,}/{run.progress_total:,} targets "
                f"({100 * done // total}%), {run.get_status_display().lower()} in {took:.1f} s")
        created.append(run)
    return created


def demo_topology_ensure(project: Project, *, say: Say | None = None) -> TopologyComparison | None:
    """The demo's topology comparison: a topology check run on the simulated fabric with the demo seed,
    collected through the runner and compared at its end. Returns the comparison it made, None when the
    demo already has it (a second seed_demo adds nothing)."""
    if demo_run(project, CheckKind.TOPOLOGY) is not None:
        return None
    with eager_tasks(), transaction.atomic():
        run = services.check_run_start(
            project=project, kind=CheckKind.TOPOLOGY, runner=RunnerKind.SIMULATED, options={"seed": DEMO_SEED}
        )
        with progress_told(run, say):
            tasks.check_run_dispatch.apply(args=(run.pk,))
    return TopologyComparison.objects.filter(run=run).first()
