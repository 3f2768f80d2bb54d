"""The check engine's chunks, hardened (issue 11, after review): a simulated chunk's lease sized on the
simulated runner's pace (not on timeouts it never waits out); a chunk arriving late on a cancelled run
leaves the targets another claim still measures to it; one output the database refuses costs only its
own target; a worker keeps a few runs' cluster snapshots, not two dozen; the per-chunk round check and
the runner's node lookups do not grow with the run or the cluster. Eager, on whichever database the tests
run (SQLite by default; a few checks are PostgreSQL's own)."""

import dataclasses
import gc
import weakref
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.choices import JobStatus
from validation import criteria, kinds, services, tasks
from validation.choices import CheckKind, ResultStatus, RunnerKind
from validation.models import CheckResult, CheckRun
from validation.runners import SimCluster, SimNode, SimRail, SimulatedRunner, plan_faults
from validation.services import execution

from .conftest import SEED

pytestmark = pytest.mark.django_db


def queued_run(project, capture, kind=CheckKind.LINK_HEALTH, **options):
    """A run started with its dispatch held back (as if the message were still on its way)."""
    options.setdefault("seed", SEED)
    with capture(execute=False):
        return services.check_run_start(project=project, kind=kind, options=options)


@pytest.fixture
def small_chunks(settings):
    settings.VALIDATION_CHUNK_SIZE = 5


def passed() -> services.Measurement:
    return services.Measurement(verdict=criteria.Verdict(criteria.Outcome.PASS))


def assert_counter_is_a_recount(run: CheckRun) -> None:
    run.refresh_from_db()
    assert run.progress_done == services.finished_count(run)


# -- 1. a simulated chunk's lease ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [CheckKind.LINK_HEALTH, CheckKind.BANDWIDTH_MATRIX, CheckKind.NODE_INVENTORY])
def test_a_simulated_chunks_lease_is_sized_on_the_simulated_pace_not_on_timeouts(
    project, gpu_nodes, django_capture_on_commit_callbacks, settings, kind
):
    settings.VALIDATION_LEASE_MARGIN_S = 120
    run = queued_run(project, django_capture_on_commit_callbacks, kind=kind)
    results = list(run.results.all())
    commands = sum(kinds.kind_of(kind).commands_per_target(r.params) for r in results)
    lease = services.chunk_lease_seconds(run, results)
    assert lease == commands * 1 + 120  # a second a command: a lost chunk waits minutes, not hours
    # The same targets on real nodes wait for every command's full timeout.
    real = CheckRun(project=project, kind=kind, runner=RunnerKind.SSH, options=run.options)
    timeout = services.command_timeout(real)
    assert services.chunk_lease_seconds(real, results) == commands * (timeout + 1) + 120
    assert timeout >= 30  # a real command's timeout is tens of seconds: the simulated lease is far shorter


def test_a_chunk_of_fifty_link_health_targets_holds_minutes_not_an_hour(
    project, django_capture_on_commit_callbacks, settings
):
    from .conftest import make_gpu_nodes

    make_gpu_nodes(project, 7)  # 56 ports
    run = queued_run(project, django_capture_on_commit_callbacks)
    claimed = services.check_chunk_claim(result_ids=list(run.results.values_list("pk", flat=True)[:50]))
    assert {r.lease_s for r in CheckResult.objects.filter(pk__in=[r.pk for r in claimed])} == {50 * 1 + 120}


# -- 2. a late chunk on a cancelled run ------------------------------------------------------------------------


def test_a_late_chunk_on_a_cancelled_run_leaves_a_held_target_to_its_holder(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    run = queued_run(project, django_capture_on_commit_callbacks)
    held_id, lost_id, pending_id = run.results.order_by("pk").values_list("pk", flat=True)[:3]
    (held,) = services.check_chunk_claim(result_ids=[held_id])  # a worker is measuring it
    (lost,) = services.check_chunk_claim(result_ids=[lost_id])
    CheckResult.objects.filter(pk=lost_id).update(started_at=timezone.now() - timedelta(seconds=lost.lease_s + 1))
    services.check_run_cancel(run=run)

    tasks.check_chunk.apply(args=([held_id, lost_id, pending_id],))  # a duplicate, delivered late

    rows = {r.pk: r for r in CheckResult.objects.filter(pk__in=[held_id, lost_id, pending_id])}
    assert (rows[held_id].status, rows[held_id].attempt) == (ResultStatus.RUNNING, 1)  # still its holder's
    assert rows[lost_id].status == ResultStatus.CANCELLED  # its worker was lost: nobody holds it
    assert rows[pending_id].status == ResultStatus.CANCELLED
    assert_counter_is_a_recount(run)

    recorded = services.check_chunk_record(outcomes=[(held, passed())])  # the holder finishes

    assert [r.pk for r in recorded] == [held_id]
    assert CheckResult.objects.get(pk=held_id).status == ResultStatus.DONE
    run.refresh_from_db()
    assert run.status == JobStatus.CANCELLED
    assert "came after another attempt" not in run.log  # no false line about a take-over
    assert_counter_is_a_recount(run)


# -- 3. outputs the database refuses ------------------------------------------------------------------------------


def test_nul_bytes_and_non_finite_numbers_are_stored_as_what_json_and_text_can_hold(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    run = queued_run(project, django_capture_on_commit_callbacks)
    claimed = services.check_chunk_claim(result_ids=list(run.results.values_list("pk", flat=True)[:2]))
    odd = services.Measurement(
        verdict=criteria.Verdict(criteria.Outcome.PASS),
        raw_output="Vendor Name : NVIDIA\x00\x00\nState : Active\n",
        stderr="warn\x00",
        metrics={"ber": float("nan"), "lanes": [1.0, float("inf"), -float("inf")], "vendor": "NV\x00IDIA",
                 "nested": {"temp": float("nan"), "ok": 2.5}},
    )
    services.check_chunk_record(outcomes=[(claimed[0], odd), (claimed[1], passed())])

    row = CheckResult.objects.get(pk=claimed[0].pk)
    assert row.status == ResultStatus.DONE
    assert (row.raw_output, row.stderr) == ("Vendor Name : NVIDIA\nState : Active\n", "warn")
    assert row.metrics == {"ber": None, "lanes": [1.0, None, None], "vendor": "NVIDIA",
                           "nested": {"temp": None, "ok": 2.5}}
    assert CheckResult.objects.get(pk=claimed[1].pk).status == ResultStatus.DONE
    assert_counter_is_a_recount(run)


def _record_with_one_bad(project, capture, bad: services.Measurement):
    run = queued_run(project, capture)
    claimed = services.check_chunk_claim(result_ids=list(run.results.order_by("pk").values_list("pk", flat=True)[:3]))
    outcomes = [(claimed[0], passed()), (claimed[1], bad), (claimed[2], passed())]
    recorded = services.check_chunk_record(outcomes=outcomes)
    rows = {r.pk: r for r in CheckResult.objects.filter(pk__in=[r.pk for r in claimed])}
    return run, [rows[r.pk] for r in claimed], recorded


def test_a_value_that_cannot_be_written_costs_only_its_own_target(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    # Something no JSON holds (a set, from a kind's bug): preparing the bulk write fails for the chunk.
    bad = services.Measurement(verdict=criteria.Verdict(criteria.Outcome.PASS), metrics={"lanes": {1, 2}})
    run, (first, refused, third), recorded = _record_with_one_bad(project, django_capture_on_commit_callbacks, bad)

    assert len(recorded) == 3
    assert (first.status, third.status) == (ResultStatus.DONE, ResultStatus.DONE)
    assert refused.status == ResultStatus.ERROR and refused.verdict == "error"
    assert refused.reasons[0]["text"].startswith("the database refused this target's output: ")
    assert "set" in refused.reasons[0]["text"]  # says why
    assert_counter_is_a_recount(run)


def test_a_value_postgresql_refuses_costs_only_its_own_target(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL's own refusal (an integer out of range): SQLite stores it")
    bad = services.Measurement(verdict=criteria.Verdict(criteria.Outcome.PASS), exit_code=2**40)
    run, (first, refused, third), recorded = _record_with_one_bad(project, django_capture_on_commit_callbacks, bad)

    assert (first.status, third.status) == (ResultStatus.DONE, ResultStatus.DONE)
    assert refused.status == ResultStatus.ERROR
    assert "out of range" in refused.reasons[0]["text"]
    assert_counter_is_a_recount(run)


# -- 4. what a worker keeps ------------------------------------------------------------------------------------------


def test_a_worker_keeps_the_snapshots_of_a_few_runs_only(project, gpu_nodes, django_capture_on_commit_callbacks):
    runs = [queued_run(project, django_capture_on_commit_callbacks) for _ in range(6)]
    alive = []
    for run in runs:
        runner = services.runner_for(run)
        plan_faults(runner.cluster, SEED + 1)  # the soak sampler plans for another seed: kept on the snapshot
        alive.append(weakref.ref(runner.cluster))
    del runner
    gc.collect()
    kept = [ref for ref in alive if ref() is not None]
    assert len(kept) == execution.SIM_RUNNERS_KEPT <= 3
    assert alive[-1]() is not None  # the latest runs' are the ones kept


def test_a_fault_plan_is_made_once_per_snapshot_and_seed():
    rails = (SimRail(index=0, rdma_device="mlx5_0", port_name="ib0"),)
    cluster = SimCluster(nodes=(SimNode("a", rails), SimNode("b", rails)))
    first = plan_faults(cluster, 7)
    assert plan_faults(cluster, 7) is first and plan_faults(cluster, 8) is not first
    same_inventory = SimCluster(nodes=cluster.nodes)
    assert plan_faults(same_inventory, 7) == first  # deterministic, planned again for another snapshot


# -- 5. costs that must not grow with the run or the cluster ------------------------------------------------------


def test_the_round_check_after_each_chunk_seeks_the_index_to_the_waiting_targets(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    if connection.vendor != "sqlite":
        pytest.skip("reads SQLite's query plan")
    run = queued_run(project, django_capture_on_commit_callbacks)
    services.check_run_chunks(run_id=run.pk)
    with CaptureQueriesContext(connection) as captured:
        assert services.next_round_due(result_id=run.results.first().pk) is None
    waiting = captured.captured_queries[-1]["sql"]
    assert "LIMIT 1" in waiting
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {waiting}")
        plan = " ".join(str(row[-1]) for row in cursor.fetchall())
    # The run and the unfinished statuses are the index's seek, not a filter over every finished target.
    assert "checkresult_run_status_idx (run_id=? AND status=?" in plan


class CountedNodes(tuple):
    """A cluster's nodes that count how often they are walked through."""

    walks = 0

    def __iter__(self):
        CountedNodes.walks += 1
        return super().__iter__()


def test_the_runner_finds_a_node_without_walking_the_cluster():
    rails = tuple(SimRail(index=i, rdma_device=f"mlx5_{i}", port_name=f"ib{i}") for i in range(2))
    nodes = CountedNodes(SimNode(f"gpu-{n:04d}", rails) for n in range(1024))
    cluster = SimCluster(nodes=nodes)
    runner = SimulatedRunner(cluster, seed=SEED)
    CountedNodes.walks = 0
    for n in range(0, 1024, 8):
        host = f"gpu-{n:04d}"
        assert cluster.node(host).name == host and cluster.node_position(host) == n
        output = runner.run(host, "ib_write_bw -d mlx5_1 --report_gbits", timeout=10)
        assert output.exit_code == 0 and f"local address: LID 0x{n * 16 + 2:04x}" in output.stdout
    assert CountedNodes.walks <= 2  # each lookup table built once, then looked up
    assert cluster.node("nowhere") is None
    with pytest.raises(ValueError):
        cluster.node_position("nowhere")


def test_a_chunk_whose_record_fails_is_recorded_as_errors_not_left_running(
    start, gpu_nodes, small_chunks, monkeypatch
):
    # A kind's bug: one target's measurement has no verdict, which no write can store.
    entry = kinds.kind_of(CheckKind.LINK_HEALTH)

    def execute(result, inputs):
        if result.target_key.endswith(":ib3"):
            return services.Measurement(verdict=None)
        return entry.execute(result, inputs)

    monkeypatch.setitem(kinds.KINDS, CheckKind.LINK_HEALTH, dataclasses.replace(entry, execute=execute))
    run = start(CheckKind.LINK_HEALTH)

    statuses = set(run.results.values_list("status", flat=True))
    assert ResultStatus.RUNNING not in statuses and ResultStatus.PENDING not in statuses
    broken = run.results.filter(target_key__endswith=":ib3").first()
    assert broken.status == ResultStatus.ERROR
    assert broken.reasons[0]["text"].startswith("internal error while recording: AttributeError")
    assert "worker was lost" not in run.log
    assert_counter_is_a_recount(run)
