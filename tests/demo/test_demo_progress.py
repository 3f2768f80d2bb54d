"""What a first `make run` shows while seed_demo works (issue 11: progress printed, so a newcomer sees it
moving): each step's headline "[n/6] ...", the build's steps with their times, each check run's targets
counted as they finish; and the demo's bandwidth matrix, which covers the racks DEMO_MATRIX_RACKS name (a
full 72-node matrix was most of a first `make run`) and still names the node the demo makes slow."""

from __future__ import annotations

import re

import pytest
from django.db import transaction

from demo.build import DEMO_CODE, LAB_CODE
from demo.checks import DEMO_MATRIX_RACKS, DEMO_SEED, demo_run, eager_tasks, progress_told
from demo.management.commands.seed_demo import STEPS
from inventory.models import Device
from projects.models import Project
from tests.validation.conftest import make_gpu_nodes
from validation import services
from validation.choices import CheckKind, RunnerKind, Verdict
from validation.runners import plan_faults
from validation.services import sim_cluster_for

pytestmark = pytest.mark.django_db

COUNTED = re.compile(r"^  (?P<code>\S+) (?P<kind>.+?): (?P<done>[\d,]+)/(?P<total>[\d,]+) targets \((?P<share>\d+)%\)")


def test_seed_demo_prints_each_step_in_order_with_its_progress(demo_db):
    lines = demo_db.splitlines()
    headlines = [line for line in lines if re.match(r"^\[\d/\d\] ", line)]
    assert [line.split(" (at ")[0] for line in headlines] == [f"[{n}/6] {step}" for n, step in
                                                               enumerate(STEPS, start=1)]
    assert any(line.startswith(f"  {DEMO_CODE}: the fabric from examples/demo-72.yaml") for line in lines)
    counted = [match for line in lines if (match := COUNTED.match(line))]
    runs = {(m["code"], m["kind"]) for m in counted}
    assert {(DEMO_CODE, "Link health (mlxlink)"), (DEMO_CODE, "Bandwidth matrix (pairwise ib_write_bw)"),
            (LAB_CODE, "NCCL all_reduce_perf")} <= runs
    for code, kind in runs:  # each run's counts only grow, up to its total
        shares = [int(m["share"]) for m in counted if (m["code"], m["kind"]) == (code, kind)]
        assert shares == sorted(shares) and shares[-1] == 100
    assert "seed_demo done in" in demo_db


@pytest.mark.usefixtures("demo_db")
def test_the_demo_matrix_covers_its_racks_and_names_the_slow_node():
    demo = Project.objects.get(code=DEMO_CODE)
    run = demo_run(demo, CheckKind.BANDWIDTH_MATRIX)
    in_racks = sorted(Device.objects.filter(project=demo, rack__name__in=DEMO_MATRIX_RACKS, name__startswith="gpu-")
                      .values_list("name", flat=True))
    assert sorted(run.options["nodes"]) == in_racks and len(in_racks) == 4 * len(DEMO_MATRIX_RACKS)
    assert run.progress_total == len(in_racks) * (len(in_racks) - 1) // 2
    slow = plan_faults(sim_cluster_for(demo), DEMO_SEED).slow_gpu_rdma_node
    assert slow in in_racks
    failing = run.results.exclude(verdict=Verdict.PASS).select_related("device", "peer_device")
    assert {frozenset((r.device.name, r.peer_device.name)) for r in failing} == {
        frozenset((slow, other)) for other in in_racks if other != slow}
    assert f"{slow} is the likely cause" in run.log
    # LAB-8 has no such racks: its matrix is every pair of its 8 nodes.
    lab = demo_run(Project.objects.get(code=LAB_CODE), CheckKind.BANDWIDTH_MATRIX)
    assert "nodes" not in lab.options and lab.progress_total == 28


def test_a_run_tells_its_progress_as_its_targets_finish(project):
    make_gpu_nodes(project, 2)
    told: list[str] = []
    with eager_tasks(), transaction.atomic():
        run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SIMULATED,
                                       options={"seed": 1})
        from validation import tasks

        with progress_told(run, told.append, every_s=0):
            tasks.check_run_dispatch.apply(args=(run.pk,))
    counts = [(int(m["done"]), int(m["total"])) for line in told if (m := COUNTED.match(line))]
    assert counts and counts[-1] == (16, 16) and all(total == 16 for _, total in counts)
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)
    # Once the block is left, nothing more is told.
    told.clear()
    with eager_tasks():
        tasks.check_run_dispatch.apply(args=(run.pk,))
    assert told == []


def test_without_anyone_to_tell_nothing_is_listened_to(project):
    from celery.signals import task_postrun

    make_gpu_nodes(project, 2)
    run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SIMULATED)
    before = len(task_postrun.receivers)
    with progress_told(run, None):
        assert len(task_postrun.receivers) == before
