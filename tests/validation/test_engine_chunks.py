"""The check engine's chunks (issue 11): targets handed out, claimed, run and recorded a chunk at a time;
the run's progress a counter that equals a recount; a chunk's queries independent of the cluster's size;
a chunk's lease covering all of its targets; late outcomes dropped; the runner and its fault plan built
once per run. Eager, on whichever database the tests run (SQLite by default)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from core.choices import JobStatus
from tests.support import count_queries
from validation import criteria, kinds, services, tasks
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun
from validation.runners import SimulatedRunner, plan_faults

from .conftest import SEED, make_gpu_nodes

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_chunks(settings):
    settings.VALIDATION_CHUNK_SIZE = 5
    return 5


def queued_run(project, kind=CheckKind.LINK_HEALTH, capture=None, **options):
    """A run started with its dispatch held back (as if the message were still on its way)."""
    options.setdefault("seed", SEED)
    with capture(execute=False):
        return services.check_run_start(project=project, kind=kind, options=options)


def assert_counter_is_a_recount(run: CheckRun) -> None:
    run.refresh_from_db()
    assert run.progress_done == services.finished_count(run)


# -- handing out in chunks -------------------------------------------------------------------------------


def test_a_round_is_handed_out_in_chunks_of_the_configured_size(
    project, gpu_nodes, small_chunks, django_capture_on_commit_callbacks
):
    run = queued_run(project, capture=django_capture_on_commit_callbacks)
    chunks = services.check_run_chunks(run_id=run.pk)
    assert [len(chunk) for chunk in chunks] == [5, 5, 5, 5, 5, 5, 2]  # 32 ports
    every = [pk for chunk in chunks for pk in chunk]
    assert sorted(every) == sorted(run.results.values_list("pk", flat=True))  # each target once


def test_runners_that_reach_real_nodes_keep_one_target_per_task(project, gpu_nodes, small_chunks):
    run = CheckRun(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SSH)
    assert services.chunk_size(run) == 1
    assert services.chunk_size(CheckRun(project=project, kind=CheckKind.LINK_HEALTH)) == small_chunks


def test_a_bandwidth_matrix_is_still_handed_out_one_round_at_a_time(
    project, gpu_nodes, small_chunks, django_capture_on_commit_callbacks
):
    run = queued_run(project, kind=CheckKind.BANDWIDTH_MATRIX, capture=django_capture_on_commit_callbacks)
    (first,) = services.check_run_chunks(run_id=run.pk)
    assert set(CheckResult.objects.filter(pk__in=first).values_list("round", flat=True)) == {0}
    tasks.check_chunk.apply(args=(first,))
    (second,) = services.check_run_chunks(run_id=run.pk)
    assert set(CheckResult.objects.filter(pk__in=second).values_list("round", flat=True)) == {1}


# -- claiming a chunk --------------------------------------------------------------------------------------


def test_a_chunk_claims_its_free_targets_at_once_with_one_lease_for_them_all(
    project, gpu_nodes, django_capture_on_commit_callbacks, settings
):
    settings.VALIDATION_LEASE_MARGIN_S = 30
    run = queued_run(project, capture=django_capture_on_commit_callbacks, timeout_s=10)
    finished, held, lost, *free = list(run.results.order_by("pk")[:6])
    CheckResult.objects.filter(pk=finished.pk).update(status=ResultStatus.DONE, verdict=Verdict.PASS)
    services.check_target_claim(result_id=held.pk)  # another worker measures it, within its lease
    gone = services.check_target_claim(result_id=lost.pk)
    CheckResult.objects.filter(pk=lost.pk).update(started_at=timezone.now() - timedelta(seconds=gone.lease_s + 1))

    claimed = services.check_chunk_claim(result_ids=[finished.pk, held.pk, lost.pk, *(r.pk for r in free)])

    assert [r.pk for r in claimed] == [lost.pk, *(r.pk for r in free)]
    # Four link-health targets, one simulated command each (a second a command, whatever the run's
    # 10 s timeout: the simulated runner answers in milliseconds), then one margin for the whole chunk.
    lease = 4 * 1 + 30
    assert services.chunk_lease_seconds(run, claimed) == lease
    rows = {r.pk: r for r in CheckResult.objects.filter(pk__in=[r.pk for r in claimed])}
    assert {(r.status, r.lease_s) for r in rows.values()} == {(ResultStatus.RUNNING, lease)}
    assert rows[lost.pk].attempt == 2 and {rows[r.pk].attempt for r in free} == {1}
    assert f"{lost.target_key}: attempt 1 started" in CheckRun.objects.get(pk=run.pk).log
    held.refresh_from_db()
    assert (held.status, held.attempt) == (ResultStatus.RUNNING, 1)  # left to its claim


def test_a_chunks_lease_runs_from_its_claim_to_the_end_of_its_last_target(
    project, gpu_nodes, django_capture_on_commit_callbacks, settings
):
    settings.VALIDATION_LEASE_MARGIN_S = 30
    run = queued_run(project, capture=django_capture_on_commit_callbacks, timeout_s=10)
    ids = list(run.results.order_by("pk").values_list("pk", flat=True)[:8])
    claimed_at = timezone.now()
    services.check_chunk_claim(result_ids=ids, now=claimed_at)
    lease = 8 * 1 + 30
    within = claimed_at + timedelta(seconds=lease - 1)  # a lone target's lease (31 s) is over
    assert services.check_run_advance(run_id=run.pk, now=within) == list(
        run.results.order_by("round", "id").exclude(pk__in=ids).values_list("pk", flat=True)
    )
    after = claimed_at + timedelta(seconds=lease + 1)
    assert set(ids) <= set(services.check_run_advance(run_id=run.pk, now=after))


def test_a_chunk_queued_when_its_run_was_cancelled_cancels_its_targets_and_counts_them(
    project, gpu_nodes, small_chunks, django_capture_on_commit_callbacks
):
    run = queued_run(project, capture=django_capture_on_commit_callbacks)
    first = services.check_run_chunks(run_id=run.pk)[0]
    CheckRun.objects.filter(pk=run.pk).update(status=JobStatus.CANCELLED)
    tasks.check_chunk.apply(args=(first,))
    assert set(CheckResult.objects.filter(pk__in=first).values_list("status", "attempt")) == {
        (ResultStatus.CANCELLED, 0)
    }
    assert_counter_is_a_recount(run)
    assert CheckRun.objects.get(pk=run.pk).progress_done == 5


# -- recording a chunk --------------------------------------------------------------------------------------


def test_a_chunks_outcomes_are_recorded_only_where_its_claim_still_holds(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    run = queued_run(project, capture=django_capture_on_commit_callbacks)
    ids = list(run.results.order_by("pk").values_list("pk", flat=True)[:4])
    claimed = services.check_chunk_claim(result_ids=ids)
    # The chunk's worker stalled past its lease; another claim took its first target over.
    CheckResult.objects.filter(pk=ids[0]).update(started_at=timezone.now() - timedelta(days=1))
    taken_over = services.check_target_claim(result_id=ids[0])
    assert taken_over.attempt == 2

    measured = [(result, services.Measurement(verdict=criteria.Verdict(criteria.Outcome.PASS))) for result in claimed]
    recorded = services.check_chunk_record(outcomes=measured)

    assert [r.pk for r in recorded] == ids[1:]
    rows = {r.pk: r for r in CheckResult.objects.filter(pk__in=ids)}
    assert (rows[ids[0]].status, rows[ids[0]].attempt) == (ResultStatus.RUNNING, 2)  # attempt 2's, untouched
    assert {rows[pk].status for pk in ids[1:]} == {ResultStatus.DONE}
    assert CheckRun.objects.get(pk=run.pk).progress_done == 3
    assert f"{claimed[0].target_key}: the outcome of attempt 1 came after another attempt took the target over" in (
        CheckRun.objects.get(pk=run.pk).log
    )
    assert_counter_is_a_recount(run)


# -- the counter ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, options",
    [
        (CheckKind.LINK_HEALTH, {}),
        (CheckKind.NODE_INVENTORY, {"flaky_hosts": {"gpu-002": 2}, "down_hosts": ["gpu-003"]}),
        (CheckKind.BANDWIDTH_MATRIX, {}),
    ],
)
def test_after_a_run_the_progress_counter_equals_a_recount(start, gpu_nodes, small_chunks, settings, kind, options):
    settings.VALIDATION_MAX_RETRIES = 2
    run = start(kind, **options)
    assert run.status == JobStatus.DONE
    assert run.progress_done == run.progress_total == services.finished_count(run) == run.results.count()


def test_the_counter_survives_redelivered_chunks_without_counting_twice(start, gpu_nodes, small_chunks):
    run = start(CheckKind.LINK_HEALTH)
    ids = list(run.results.values_list("pk", flat=True))
    tasks.check_chunk.apply(args=(ids[:5],))  # the broker delivers finished chunks again
    tasks.check_chunk.apply(args=(ids,))
    run.refresh_from_db()
    assert run.progress_done == 32 == services.finished_count(run)
    assert set(run.results.values_list("attempt", flat=True)) == {1}


# -- queries per chunk ------------------------------------------------------------------------------------------


def chunk_queries(project, nodes: int, capture, settings) -> int:
    """The queries of one chunk of 8 link-health targets whose ports have a previous reading (after a
    first chunk built the run's runner)."""
    settings.VALIDATION_CHUNK_SIZE = 8
    make_gpu_nodes(project, nodes)
    with capture(execute=True):
        services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, options={"seed": SEED})
    run = queued_run(project, capture=capture)
    first, second, *_ = services.check_run_chunks(run_id=run.pk)
    tasks.check_chunk.apply(args=(first,))
    queries = count_queries(lambda: tasks.check_chunk.apply(args=(second,)))
    assert set(CheckResult.objects.filter(pk__in=second).values_list("status", flat=True)) == {ResultStatus.DONE}
    return queries


def test_a_chunks_queries_do_not_grow_with_the_cluster_nor_with_the_chunk(
    project, other_project, django_capture_on_commit_callbacks, settings
):
    small = chunk_queries(project, 2, django_capture_on_commit_callbacks, settings)
    larger = chunk_queries(other_project, 12, django_capture_on_commit_callbacks, settings)
    assert small == larger
    # The claim's read, run and UPDATE; the profile; the ports' previous readings (link health's
    # baselines, one query for the chunk); the record's read, bulk write and counter; and the six
    # statements of three savepoints, inside the test's transaction (the claim's, the record's, and the
    # bulk write's own, which lets one refused row be written apart from the others).
    assert small == 1 + 1 + 1 + 1 + 1 + 3 + 6


def test_a_chunks_baselines_are_each_targets_own(start, nodes, django_capture_on_commit_callbacks):
    start(CheckKind.LINK_HEALTH)
    # One port's last reading carried no counters (an upload of `mlxlink -m`): its baseline is older.
    first = start(CheckKind.LINK_HEALTH)
    bare = first.results.order_by("pk").first()
    CheckResult.objects.filter(pk=bare.pk).update(metrics={"state": "Active"})
    run = queued_run(first.project, capture=django_capture_on_commit_callbacks)
    claimed = services.check_chunk_claim(result_ids=list(run.results.values_list("pk", flat=True)))
    entry = kinds.kind_of(CheckKind.LINK_HEALTH)
    batched = services.check_chunk_inputs(results=claimed).baselines
    assert batched == {result.pk: entry.baseline(result) for result in claimed}
    assert all(batched.values())  # every port had counters before, the bare one's from the first run


# -- built once per run --------------------------------------------------------------------------------------------


def test_the_runner_and_its_fault_plan_are_built_once_per_run(project, gpu_nodes, django_capture_on_commit_callbacks):
    run = queued_run(project, capture=django_capture_on_commit_callbacks, flaky_hosts={"gpu-002": 1})
    runner = services.runner_for(run)
    assert isinstance(runner, SimulatedRunner)
    assert services.runner_for(CheckRun.objects.get(pk=run.pk)) is runner
    second_attempt = services.runner_for(run, attempt=2)
    assert second_attempt.attempt == 2 and runner.attempt == 1  # the cached one is never changed
    assert second_attempt.cluster is runner.cluster and second_attempt.faults is runner.faults
    assert plan_faults(runner.cluster, SEED) is runner.faults  # planned once for this snapshot and seed
