"""The demo's check runs: finished link-health, bandwidth-matrix and NCCL runs on the simulated cluster
whose failures are exactly the planted faults; a second call creates nothing; runs finish in-process
even when a broker is configured."""

import pytest

from core.choices import JobStatus
from demo.checks import COMPACTED_NOTE, DEMO_KINDS, DEMO_SEED, demo_checks_ensure, demo_run
from tests.validation.conftest import make_gpu_nodes
from validation.choices import CheckKind, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun
from validation.runners import plan_faults
from validation.services import sim_cluster_for

pytestmark = pytest.mark.django_db

NODES = 6


@pytest.fixture
def cluster(project):
    make_gpu_nodes(project, NODES)
    return plan_faults(sim_cluster_for(project), DEMO_SEED)


def not_passed(run) -> dict[str, CheckResult]:
    return {r.target_key: r for r in run.results.exclude(verdict=Verdict.PASS)}


def test_the_demo_runs_find_exactly_the_planted_faults(project, cluster):
    runs = {run.kind: run for run in demo_checks_ensure(project)}
    assert set(runs) == set(DEMO_KINDS)
    for run in runs.values():
        assert (run.status, run.runner, run.options, run.requested_by) == (
            JobStatus.DONE, RunnerKind.SIMULATED, {"seed": DEMO_SEED}, None
        )
        assert run.progress_done == run.progress_total > 0

    link = not_passed(runs[CheckKind.LINK_HEALTH])
    planted = {f"{node}:ib{device.removeprefix('mlx5_')}" for node, device in (cluster.dirty_fiber, cluster.hot_optic)}
    assert set(link) == planted and {r.verdict for r in link.values()} == {Verdict.FAIL}

    matrix = not_passed(runs[CheckKind.BANDWIDTH_MATRIX])
    slow = cluster.slow_gpu_rdma_node
    assert len(matrix) == NODES - 1 and all(slow in key.split("~") for key in matrix)
    assert {r.verdict for r in matrix.values()} == {Verdict.FAIL}
    assert f"every pair with {slow} is slow or failing: {slow} is the likely cause" in runs["bw_matrix"].log

    [nccl] = not_passed(runs[CheckKind.NCCL]).values()
    texts = [r["text"] for r in nccl.reasons]
    assert nccl.verdict == Verdict.FAIL and any(t.startswith("wrong values at") for t in texts)
    # the slow GPU node is in the one all-node NCCL run, so its bus bandwidth is low too: a planted fault
    assert all(t.startswith(("wrong values", "out-of-bounds", "bus bandwidth")) for t in texts)


def test_passing_matrix_pairs_keep_only_their_tables_failing_ones_everything(project, cluster):
    demo_checks_ensure(project)
    run = demo_run(project, CheckKind.BANDWIDTH_MATRIX)
    passing = run.results.filter(verdict=Verdict.PASS).first()
    assert passing.raw_output.startswith(COMPACTED_NOTE)
    assert passing.raw_output.count("BW average[Gb/sec]") == 8 and "cuMemAlloc" not in passing.raw_output
    failing = run.results.filter(verdict=Verdict.FAIL).first()
    assert failing.raw_output.count("cuMemAlloc") == 8 and COMPACTED_NOTE not in failing.raw_output
    assert passing.metrics["min_gbps"] > 760  # the metrics are untouched


def test_a_second_call_creates_nothing(project, cluster):
    demo_checks_ensure(project)
    counts = (CheckRun.objects.count(), CheckResult.objects.count())
    assert demo_checks_ensure(project) == []
    assert (CheckRun.objects.count(), CheckResult.objects.count()) == counts == (3, 8 * NODES + 15 + 1)


def test_an_unfinished_demo_run_of_one_kind_is_replaced_by_a_finished_one(project, cluster):
    demo_checks_ensure(project)
    demo_run(project, CheckKind.NCCL).delete()
    [again] = demo_checks_ensure(project)
    assert again.kind == CheckKind.NCCL and again.status == JobStatus.DONE


def test_runs_finish_here_even_with_a_broker_configured(project, cluster):
    from bringup.celery import app

    app.conf.task_always_eager = False  # as with CELERY_BROKER_URL set
    try:
        runs = demo_checks_ensure(project)
        assert app.conf.task_always_eager is False  # put back as it was
    finally:
        app.conf.task_always_eager = True
    assert [r.status for r in runs] == [JobStatus.DONE] * 3
