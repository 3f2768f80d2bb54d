"""Check runs end to end in eager mode with the simulated runner: the injected faults and nothing
else are found; redelivery never duplicates; cancel stops scheduling; re-run repeats only failures;
transient errors retry; the acceptance profile is the managers'; selectors are scoped."""

import shutil
from datetime import timedelta
from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError
from django.utils import timezone

from cabling.choices import CableType, Side
from cabling.models import Cable, CableEnd
from core.choices import JobStatus
from inventory.choices import Network
from inventory.models import Port
from inventory.services import device_update, optic_install
from tests.factories import OpticFactory, RackFactory
from validation import criteria, selectors, services, tasks
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import AcceptanceProfile, CheckResult, CheckRun
from validation.parsers import perftest
from validation.runners import plan_faults
from validation.runners.commands import mlxlink_command

from .conftest import SEED, make_gpu_nodes, two_plane_server_model

pytestmark = pytest.mark.django_db



@pytest.fixture
def faults(project, gpu_nodes):
    return plan_faults(services.sim_cluster_for(project), SEED)


def not_passed(run):
    return {r.target_key: r for r in run.results.exclude(verdict=Verdict.PASS)}


def involves(key: str, node: str) -> bool:
    return any(part.split(":")[0] == node for part in key.split("~"))


# -- finding exactly the injected faults ---------------------------------------------------------------


def test_link_health_finds_the_dirty_fiber_and_the_hot_optic_only(start, gpu_nodes, faults):
    run = start(CheckKind.LINK_HEALTH)
    assert (run.status, run.progress_done, run.progress_total) == (JobStatus.DONE, 32, 32)
    expected = {
        f"{node}:ib{device.removeprefix('mlx5_')}" for node, device in (faults.dirty_fiber, faults.hot_optic)
    }
    failed = not_passed(run)
    assert set(failed) == expected
    dirty = failed[f"{faults.dirty_fiber[0]}:ib{faults.dirty_fiber[1][-1]}"]
    assert dirty.verdict == Verdict.FAIL
    assert any(r["text"].startswith("effective BER") for r in dirty.reasons)
    assert dirty.metrics["counters"]["effective_ber"] > 1e-12
    assert dirty.port.name == f"ib{faults.dirty_fiber[1][-1]}" and dirty.device.name == faults.dirty_fiber[0]
    hot = failed[f"{faults.hot_optic[0]}:ib{faults.hot_optic[1][-1]}"]
    assert any(r["text"].startswith("Rx power lane") for r in hot.reasons)


def test_every_result_keeps_raw_output_metrics_and_command(start, gpu_nodes):
    run = start(CheckKind.LINK_HEALTH)
    result = run.results.first()
    assert result.command == mlxlink_command(result.params["rdma_device"])
    assert "Physical Counters and BER Info" in result.raw_output
    assert result.metrics["state"] == "Active" and result.attempt == 1
    assert result.started_at <= result.finished_at


def test_gpu_rdma_fails_exactly_the_pairs_with_the_slow_node(start, gpu_nodes, faults):
    run = start(CheckKind.GPU_RDMA)
    assert run.progress_total == 16  # 2 disjoint pairs x 8 rails
    failed = not_passed(run)
    assert failed and all(involves(key, faults.slow_gpu_rdma_node) for key in failed)
    assert len(failed) == 8  # its one pair, every rail
    assert {r.verdict for r in failed.values()} == {Verdict.FAIL}
    sample = next(iter(failed.values()))
    assert (
        "GPU RDMA write" in sample.reasons[0]["text"]
        and "< fail level 95% (760 Gb/s)" in sample.reasons[0]["text"]
    )
    assert (
        sample.metrics["use_cuda"] is True and sample.peer_device is not None and sample.peer_port is not None
    )
    kept = perftest.parse(sample.raw_output)  # the raw output is the client's, as the tool printed it
    assert [r.role for r in kept] == ["client"]
    assert kept[0].rows[0].bw_avg_gbps == sample.metrics["bw_avg_gbps"]


def test_cpu_path_bandwidth_is_clean(start, gpu_nodes):
    run = start(CheckKind.CPU_BANDWIDTH)
    assert run.status == JobStatus.DONE and not not_passed(run)
    assert all(440 < r.metrics["bw_avg_gbps"] < 470 for r in run.results.all())


def test_pair_bandwidth_rounds_never_put_a_node_in_two_tests(start, gpu_nodes):
    run = start(CheckKind.GPU_RDMA)
    by_round: dict[int, list[str]] = {}
    for result in run.results.select_related("device", "peer_device"):
        by_round.setdefault(result.round, []).extend([result.device.name, result.peer_device.name])
    assert len(by_round) == 8
    for members in by_round.values():
        assert len(members) == len(set(members))


def test_bandwidth_matrix_flags_every_pair_with_the_slow_node_and_names_it(start, project, gpu_nodes, faults):
    run = start(CheckKind.BANDWIDTH_MATRIX)
    assert run.progress_total == 6 and run.status == JobStatus.DONE
    failed = not_passed(run)
    assert set(failed) == {
        key
        for key in run.results.values_list("target_key", flat=True)
        if involves(key, faults.slow_gpu_rdma_node)
    }
    assert f"{faults.slow_gpu_rdma_node} is the likely cause" in run.log
    rounds: dict[int, list[str]] = {}
    for result in run.results.select_related("device", "peer_device"):
        rounds.setdefault(result.round, []).extend([result.device.name, result.peer_device.name])
        assert len(result.metrics["rails"]) == 8
    assert all(len(m) == len(set(m)) for m in rounds.values())
    matrix = selectors.bandwidth_matrix(user=_staff(), run=run)
    assert matrix.nodes == [d.name for d in gpu_nodes]
    assert len(matrix.cells) == 6
    healthy = [n for n in matrix.nodes if n != faults.slow_gpu_rdma_node]
    assert matrix.value(healthy[1], healthy[0]) > 780
    assert matrix.value(faults.slow_gpu_rdma_node, healthy[0]) < 480


def test_matrix_outliers_warn_even_above_the_absolute_floor(start, project, gpu_nodes, faults):
    services.acceptance_profile_update(
        project=project, user=_staff(), gpu_rdma_fail_fraction=0.5, gpu_rdma_warn_fraction=0.5
    )
    run = start(CheckKind.BANDWIDTH_MATRIX)
    flagged = not_passed(run)
    assert flagged and {r.verdict for r in flagged.values()} == {Verdict.WARN}
    assert all("of the run's median" in r.reasons[-1]["text"] for r in flagged.values())


def test_nccl_finds_the_wrong_values(start, gpu_nodes, faults):
    run = start(CheckKind.NCCL)
    result = run.results.get()
    assert result.target_key == "nccl:all" and result.verdict == Verdict.FAIL
    assert result.reasons[0]["text"].startswith("wrong values at 1 MiB (out-of-place 96, in-place 32)")
    assert result.command.startswith("mpirun ") and all(d.name in result.command for d in gpu_nodes)
    assert result.metrics["curve"][-1]["size_bytes"] == 1 << 34
    assert result.metrics["n_ranks"] == 32


def test_nccl_in_groups_flags_only_groups_holding_a_faulty_node(start, project):
    make_gpu_nodes(project, 8)
    faults = plan_faults(services.sim_cluster_for(project), SEED)
    run = start(CheckKind.NCCL, group_size=2, launcher="srun")
    assert run.progress_total == 4
    bad_nodes = {faults.nccl_corruption_node, faults.slow_gpu_rdma_node}
    for result in run.results.all():
        hosts = set(result.params["hosts"])
        assert result.command.startswith("srun ")
        assert (result.verdict == Verdict.FAIL) == bool(hosts & bad_nodes), result.target_key
        texts = " ".join(r["text"] for r in result.reasons)
        assert ("wrong values" in texts) == (faults.nccl_corruption_node in hosts)


def test_node_inventory_is_clean_and_reads_every_version(start, gpu_nodes):
    run = start(CheckKind.NODE_INVENTORY)
    assert not not_passed(run)
    versions = run.results.first().metrics["versions"]
    assert versions["gpu_driver"] == "580.65.06" and versions["gpu_count"] == "8"


def test_node_inventory_against_pinned_versions(start, project, gpu_nodes):
    services.acceptance_profile_update(
        project=project, user=_staff(), pinned_versions={"gpu_driver": "570.86.15"}
    )
    run = start(CheckKind.NODE_INVENTORY)
    assert {r.verdict for r in run.results.all()} == {Verdict.FAIL}
    assert run.results.first().reasons == [
        {"level": "fail", "text": "gpu_driver 580.65.06 != pinned 570.86.15"}
    ]


def test_results_link_to_the_cable_and_optic_of_the_port(start, project, gpu_nodes, faults):
    node, device = faults.hot_optic
    port = Port.objects.get(device__name=node, name=f"ib{device[-1]}")
    cable = Cable.objects.create(
        project=project,
        label="C00001",
        network=Network.COMPUTE,
        cable_type=CableType.FIBER,
        length_m=Decimal("5.0"),
        speed_gbps=800,
    )
    CableEnd.objects.create(cable=cable, side=Side.A, port=port.lanes.get(lane=0))
    optic = optic_install(optic=OpticFactory(project=project), port=port)
    run = start(CheckKind.LINK_HEALTH)
    result = run.results.get(port=port)
    assert result.verdict == Verdict.FAIL
    assert (result.cable, result.optic) == (cable, optic)
    assert result.raw_output.count(optic.serial) == 1  # the simulator reports the inventory's optic


def test_a_dac_rail_reports_no_dom_and_still_passes(start, project, gpu_nodes, faults):
    healthy = next(d for d in gpu_nodes if d.name not in (faults.dirty_fiber[0], faults.hot_optic[0]))
    port = Port.objects.get(device=healthy, name="ib0")
    cable = Cable.objects.create(
        project=project,
        label="C00002",
        network=Network.COMPUTE,
        cable_type=CableType.DAC,
        length_m=Decimal("1.0"),
        speed_gbps=800,
    )
    CableEnd.objects.create(cable=cable, side=Side.A, port=port)
    run = start(CheckKind.LINK_HEALTH)
    result = run.results.get(port=port)
    assert result.verdict == Verdict.PASS
    assert {"level": "pass", "text": "passive copper cable: no DOM to check"} in result.reasons


def test_counters_growing_since_the_last_link_run_fail(start, gpu_nodes, faults):
    first = start(CheckKind.LINK_HEALTH)
    healthy = first.results.filter(verdict=Verdict.PASS).first()
    # Pretend the previous reading was lower: the same counters now read as growth.
    healthy.metrics["counters"]["link_error_recovery"] = -1
    healthy.save()
    second = start(CheckKind.LINK_HEALTH)
    again = second.results.get(port=healthy.port)
    assert again.verdict == Verdict.FAIL
    assert again.reasons == [{"level": "fail", "text": "link error recovery counter grew from -1 to 0"}]


# -- the run row: queued until commit, progress, log -----------------------------------------------------


def test_run_is_enqueued_only_when_the_transaction_commits(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = services.check_run_start(project=project, kind=CheckKind.NODE_INVENTORY)
    assert len(callbacks) == 1
    run.refresh_from_db()
    assert (run.status, run.progress_done, run.progress_total) == (JobStatus.QUEUED, 0, 4)
    assert set(run.results.values_list("status", flat=True)) == {ResultStatus.PENDING}
    callbacks[0]()
    run.refresh_from_db()
    assert (run.status, run.progress_done) == (JobStatus.DONE, 4)
    assert "simulated faults:" in run.log and "finished: 4 pass" in run.log


def test_dispatcher_hands_out_one_round_at_a_time(project, gpu_nodes, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.check_run_start(project=project, kind=CheckKind.BANDWIDTH_MATRIX)
    first = services.check_run_advance(run_id=run.pk)
    assert len(first) == 2 and set(
        CheckResult.objects.filter(pk__in=first).values_list("round", flat=True)
    ) == {0}
    # Round 0 is not finished: asked again, the dispatcher hands out what of it is still pending (the
    # first hand-out may have been lost) and never round 1.
    assert services.check_run_advance(run_id=run.pk) == first
    for result_id in first:
        services.check_target_claim(result_id=result_id)
    assert services.check_run_advance(run_id=run.pk) == []  # claimed, within their leases
    CheckResult.objects.filter(pk__in=first).update(status=ResultStatus.DONE, verdict=Verdict.PASS)
    second = services.check_run_advance(run_id=run.pk)
    assert set(CheckResult.objects.filter(pk__in=second).values_list("round", flat=True)) == {1}
    run.refresh_from_db()
    assert (run.status, run.current_round) == (JobStatus.RUNNING, 1)


# -- redelivery, cancel, re-run, retries ---------------------------------------------------------------


def test_redelivered_task_for_a_finished_target_changes_nothing(start, gpu_nodes):
    run = start(CheckKind.LINK_HEALTH)
    result = run.results.first()
    before = (result.attempt, result.finished_at, result.raw_output)
    tasks.check_target.delay(result.pk)
    tasks.check_target.apply(args=(result.pk,))
    result.refresh_from_db()
    assert (result.attempt, result.finished_at, result.raw_output) == before
    assert run.results.count() == 32 and CheckResult.objects.filter(target_key=result.target_key).count() == 1


@pytest.fixture
def handed_out(project, django_capture_on_commit_callbacks):
    """A run whose first round the dispatcher handed out, with no worker having run anything yet."""

    def make(kind):
        with django_capture_on_commit_callbacks(execute=False):
            run = services.check_run_start(project=project, kind=kind, options={"seed": SEED})
        services.check_run_advance(run_id=run.pk)
        return run

    return make


def lose_the_worker(result):
    """The worker that claimed the target died: its lease started long enough ago to have run out."""
    lease = services.target_lease_seconds(result.run, result)
    started = timezone.now() - timedelta(seconds=lease + 1)
    CheckResult.objects.filter(pk=result.pk).update(started_at=started)


def test_a_target_running_within_its_lease_is_not_run_again(handed_out, gpu_nodes):
    run = handed_out(CheckKind.LINK_HEALTH)
    result = run.results.first()
    services.check_target_claim(result_id=result.pk)  # a worker is measuring it...
    tasks.check_target.delay(result.pk)  # ... when the broker delivers it again (visibility timeout)
    result.refresh_from_db()
    assert (result.status, result.attempt, result.verdict, result.raw_output) == (ResultStatus.RUNNING, 1, "", "")


def test_a_target_whose_worker_was_lost_runs_again_on_the_same_row_once_its_lease_ends(handed_out, gpu_nodes):
    run = handed_out(CheckKind.LINK_HEALTH)
    first_claim = services.check_target_claim(result_id=run.results.first().pk)
    lose_the_worker(first_claim)
    assert first_claim.pk in services.check_run_advance(run_id=run.pk)  # the dispatcher hands it out again
    tasks.check_target.delay(first_claim.pk)
    result = CheckResult.objects.get(pk=first_claim.pk)
    assert (result.status, result.verdict, result.attempt) == (ResultStatus.DONE, Verdict.PASS, 2)
    assert result.metrics["state"] == "Active"
    assert f"{result.target_key}: attempt 1 started" in CheckRun.objects.get(pk=run.pk).log
    # The lost worker's outcome, should it still arrive, is dropped: attempt 2 holds the row.
    late = services.Measurement(verdict=criteria.error_verdict("late"))
    assert services.check_target_record(result=first_claim, measurement=late) is None
    result.refresh_from_db()
    assert (result.verdict, result.attempt) == (Verdict.PASS, 2)
    assert run.results.count() == 32


def test_a_target_that_loses_its_worker_every_time_is_given_up_naming_the_attempts(
    handed_out, gpu_nodes, settings
):
    settings.VALIDATION_MAX_RETRIES = 2  # three attempts
    run = handed_out(CheckKind.LINK_HEALTH)
    result_id = run.results.first().pk
    for _ in range(3):
        lose_the_worker(services.check_target_claim(result_id=result_id))
    tasks.check_target.delay(result_id)
    result = CheckResult.objects.get(pk=result_id)
    assert (result.status, result.verdict, result.attempt) == (ResultStatus.ERROR, Verdict.ERROR, 3)
    assert result.reasons == [
        {
            "level": "error",
            "text": "gave up after 3 attempts: none finished within its 121 s lease "
            "(the worker was lost or the command hung)",
        }
    ]


def test_a_dispatch_redelivered_after_it_recorded_its_round_still_hands_the_round_out(handed_out, gpu_nodes):
    run = handed_out(CheckKind.BANDWIDTH_MATRIX)  # round 0 recorded; its check_target tasks were lost
    tasks.check_run_dispatch.delay(run.pk)  # the redelivered dispatch (eager: it walks every round)
    run.refresh_from_db()
    assert (run.status, run.progress_done, run.progress_total) == (JobStatus.DONE, 6, 6)


def test_a_target_key_is_unique_within_its_run(start, gpu_nodes):
    run = start(CheckKind.NODE_INVENTORY)
    with pytest.raises(IntegrityError):
        CheckResult.objects.create(run=run, target_key=run.results.first().target_key)


def test_cancel_stops_scheduling(project, gpu_nodes, technician, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, requested_by=technician)
    services.check_run_cancel(run=run, user=technician)
    callbacks[0]()  # the dispatch that was already queued
    run.refresh_from_db()
    assert (run.status, run.progress_done) == (JobStatus.CANCELLED, 32)
    assert set(run.results.values_list("status", flat=True)) == {ResultStatus.CANCELLED}
    assert not run.results.filter(attempt__gt=0).exists()
    assert "cancelled by tech" in run.log
    with pytest.raises(ValidationError, match="already cancelled"):
        services.check_run_cancel(run=run, user=technician)


def test_a_target_already_queued_when_its_run_is_cancelled_does_not_run(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH)
    queued = services.check_run_advance(run_id=run.pk)
    CheckRun.objects.filter(pk=run.pk).update(status=JobStatus.CANCELLED)
    tasks.check_target.delay(queued[0])
    result = CheckResult.objects.get(pk=queued[0])
    assert (result.status, result.attempt) == (ResultStatus.CANCELLED, 0)


def test_rerun_failed_repeats_only_the_failed_targets(
    start, project, gpu_nodes, faults, technician, django_capture_on_commit_callbacks
):
    run = start(CheckKind.LINK_HEALTH)
    failed_keys = set(not_passed(run))
    with django_capture_on_commit_callbacks(execute=True):
        child = services.check_run_rerun_failed(run=run, requested_by=technician)
    child.refresh_from_db()
    assert child.parent == run and child.progress_total == 2 and child.status == JobStatus.DONE
    assert set(child.results.values_list("target_key", flat=True)) == failed_keys
    assert {r.verdict for r in child.results.all()} == {Verdict.FAIL}  # the fiber is still dirty
    assert child.results.filter(port__isnull=False).count() == 2
    clean = start(CheckKind.CPU_BANDWIDTH)
    with pytest.raises(ValidationError, match="no failed targets"):
        services.check_run_rerun_failed(run=clean, requested_by=technician)


def test_transient_errors_retry_then_succeed(start, settings, gpu_nodes):
    settings.VALIDATION_MAX_RETRIES = 3
    run = start(CheckKind.NODE_INVENTORY, flaky_hosts={"gpu-002": 2})
    result = run.results.get(target_key="gpu-002")
    assert (result.status, result.verdict, result.attempt) == (ResultStatus.DONE, Verdict.PASS, 3)
    assert run.log.count("gpu-002: gpu-002:22: Connection refused") == 2


def test_a_node_that_stays_down_is_an_error_after_the_retries(start, settings, gpu_nodes):
    settings.VALIDATION_MAX_RETRIES = 2
    run = start(CheckKind.NODE_INVENTORY, down_hosts=["gpu-003"])
    result = run.results.get(target_key="gpu-003")
    assert (result.status, result.verdict, result.attempt) == (ResultStatus.ERROR, Verdict.ERROR, 3)
    assert result.reasons == [
        {"level": "error", "text": "gpu-003:22: Connection refused (gave up after 3 attempts)"}
    ]
    assert run.status == JobStatus.DONE and run.progress_done == 4  # the other nodes were measured
    assert run.results.filter(verdict=Verdict.PASS).count() == 3


def test_backoff_grows_exponentially_up_to_the_cap(settings):
    settings.VALIDATION_RETRY_BASE_S = 5
    settings.VALIDATION_RETRY_MAX_S = 30
    delays = [tasks.backoff_seconds(n) for n in range(5)]
    assert 5 <= delays[0] <= 10 and 10 <= delays[1] <= 15 and 20 <= delays[2] <= 25
    assert 30 <= delays[4] <= 35


def test_every_target_unreachable_fails_the_run(start, settings, gpu_nodes):
    settings.VALIDATION_MAX_RETRIES = 0
    run = start(CheckKind.NODE_INVENTORY, down_hosts=[d.name for d in gpu_nodes])
    assert run.status == JobStatus.FAILED
    assert set(run.results.values_list("verdict", flat=True)) == {Verdict.ERROR}


# -- starting: permissions and clear errors -------------------------------------------------------------


def test_customers_and_outsiders_cannot_start_runs(project, gpu_nodes, customer, outsider):
    for user in (customer, outsider):
        with pytest.raises(PermissionDenied):
            services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, requested_by=user)
    assert not CheckRun.objects.exists()


@pytest.mark.parametrize(
    ("kind", "options", "field", "message"),
    [
        (CheckKind.NCCL, {"group_size": 1}, "options.group_size", "at least 2"),
        (CheckKind.NCCL, {"launcher": "pdsh"}, "options.launcher", "mpirun, srun"),
        (CheckKind.LINK_HEALTH, {"use_cuda": True}, "options.use_cuda", "not an option of a link_health run"),
        (CheckKind.LINK_HEALTH, {"seed": "x"}, "options.seed", "whole number"),
        ("bogus", {}, "kind", "not a check kind"),
        (CheckKind.SOAK, {}, "kind", "start and stop it from the soak page"),
        (CheckKind.PORT_STATE, {}, "kind", "arrive only as uploaded tool outputs"),
    ],
)
def test_bad_input_is_a_validation_error_naming_the_field(project, gpu_nodes, kind, options, field, message):
    with pytest.raises(ValidationError) as excinfo:
        services.check_run_start(project=project, kind=kind, options=options)
    assert message in " ".join(excinfo.value.message_dict[field])


def test_the_local_runner_is_only_for_nccl(project, gpu_nodes):
    with pytest.raises(ValidationError) as excinfo:
        services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.LOCAL)
    assert "only NCCL" in excinfo.value.message_dict["runner"][0]


@pytest.mark.skipif(shutil.which("mpirun") is not None, reason="would really launch mpirun here")
def test_nccl_with_the_local_runner_launches_from_here(
    project, gpu_nodes, django_capture_on_commit_callbacks
):
    # This machine has no mpirun: the run finishes with an error verdict that quotes the shell.
    with django_capture_on_commit_callbacks(execute=True):
        run = services.check_run_start(project=project, kind=CheckKind.NCCL, runner=RunnerKind.LOCAL)
    result = CheckResult.objects.get(run=run)
    assert result.verdict == Verdict.ERROR and result.exit_code == 127
    assert "nccl-tests on gpu-001 exited 127" in result.reasons[0]["text"] and "not found" in result.stderr


def test_a_project_without_gpu_nodes_has_nothing_to_check(project):
    with pytest.raises(ValidationError, match="no GPU nodes"):
        services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH)


# -- acceptance profile ----------------------------------------------------------------------------------


def test_profile_is_created_with_defaults_on_first_use(project):
    assert not AcceptanceProfile.objects.exists()
    profile = services.acceptance_profile_for(project=project)
    assert profile.effective_ber_fail == 1e-12 and profile.cpu_bw_fail_gbps == 440
    assert services.acceptance_profile_for(project=project).pk == profile.pk


def test_managers_edit_the_profile_and_the_change_is_kept(project, manager):
    profile = services.acceptance_profile_update(
        project=project, user=manager, cpu_bw_fail_gbps=430, cpu_bw_warn_gbps=435
    )
    assert profile.as_criteria().cpu_bw_fail_gbps == 430
    assert profile.history.count() == 2  # created with the defaults, then changed


def test_technicians_customers_and_outsiders_cannot_edit_the_profile(project, technician, customer, outsider):
    for user in (technician, customer, outsider):
        with pytest.raises(PermissionDenied):
            services.acceptance_profile_update(project=project, user=user, cpu_bw_fail_gbps=1)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"effective_ber_warn": 1e-11}, "effective_ber_warn"),
        ({"gpu_rdma_warn_fraction": 0.9}, "gpu_rdma_warn_fraction"),
        ({"gpu_rdma_fail_fraction": 1.5}, "gpu_rdma_fail_fraction"),
        ({"pinned_versions": {"gpu_driver": 580}}, "pinned_versions"),
        ({"no_such_threshold": 1}, "no_such_threshold"),
    ],
)
def test_bad_profile_values_name_the_field(project, manager, changes, field):
    with pytest.raises(ValidationError) as excinfo:
        services.acceptance_profile_update(project=project, user=manager, **changes)
    assert field in excinfo.value.message_dict


# -- selectors -------------------------------------------------------------------------------------------


def _staff():
    from tests.factories import UserFactory

    return UserFactory(username="staff-h9", is_staff=True)


def test_outsiders_see_no_runs_results_or_profile(start, project, gpu_nodes, outsider):
    run = start(CheckKind.NODE_INVENTORY)
    assert not selectors.check_run_list(user=outsider).exists()
    assert not selectors.check_result_list(user=outsider, run=run).exists()
    assert selectors.acceptance_profile_get(user=outsider, project=project) is None
    from django.http import Http404

    with pytest.raises(Http404):
        selectors.check_run_detail(user=outsider, project=project, pk=run.pk)


def test_run_list_counts_verdicts(start, project, gpu_nodes, customer):
    start(CheckKind.LINK_HEALTH)
    run = selectors.check_run_list(user=customer, project=project).get()
    assert (run.passed, run.warned, run.failed, run.errored) == (30, 0, 2, 0)
    assert selectors.latest_runs_by_kind(user=customer, project=project)[CheckKind.LINK_HEALTH].pk == run.pk


def test_result_filters(start, project, gpu_nodes, customer, faults):
    run = start(CheckKind.LINK_HEALTH)
    assert selectors.check_result_list(user=customer, run=run, verdict=Verdict.FAIL).count() == 2
    assert selectors.check_result_list(user=customer, run=run, network=Network.COMPUTE).count() == 32
    assert selectors.check_result_list(user=customer, run=run, network=Network.STORAGE).count() == 0
    assert (
        selectors.check_result_list(user=customer, run=run, plane=2).count() == 32
    )  # every rail has plane 2
    history = selectors.port_link_history(user=customer, port=run.results.first().port)
    assert history.count() == 1
    punch = selectors.failed_results(user=customer, project=project)
    assert {r.target_key for r in punch} == set(not_passed(run))


def test_run_list_query_count_does_not_grow(start, project, gpu_nodes, customer, django_assert_num_queries):
    start(CheckKind.NODE_INVENTORY)
    with django_assert_num_queries(1) as few:
        list(selectors.check_run_list(user=customer, project=project))
    start(CheckKind.NODE_INVENTORY)
    start(CheckKind.LINK_HEALTH)
    with django_assert_num_queries(len(few.captured_queries)):
        runs = list(selectors.check_run_list(user=customer, project=project))
    assert len(runs) == 3


def test_result_list_query_count_does_not_grow(start, project, customer, django_assert_num_queries):
    make_gpu_nodes(project, 1)
    small = start(CheckKind.LINK_HEALTH)
    make_gpu_nodes(project, 3, prefix="big")
    big = start(CheckKind.LINK_HEALTH)
    with django_assert_num_queries(1):
        rows = [
            (r.device.rack, r.port.name, r.cable, r.optic)
            for r in selectors.check_result_list(user=customer, run=small)
        ]
    assert len(rows) == 8
    with django_assert_num_queries(1):
        rows = [
            (r.device.rack, r.port.name, r.cable, r.optic)
            for r in selectors.check_result_list(user=customer, run=big)
        ]
    assert len(rows) == 32


# -- the management command ---------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_run_checks_command_prints_the_failures(project, gpu_nodes, faults, capsys):
    # A real commit, as on the command line: the eager run finishes before the summary is printed.
    call_command(
        "run_checks", "--project", project.code, "--kind", "link_health", "--seed", str(SEED), "--wait"
    )
    out = capsys.readouterr().out
    assert "Run #" in out and "32 target(s)" in out
    assert "Status done: 30 pass, 0 warn, 2 fail, 0 error" in out
    assert f"FAIL  {faults.dirty_fiber[0]}:ib{faults.dirty_fiber[1][-1]}: effective BER" in out


def test_run_checks_command_reruns_failed_targets(
    project, gpu_nodes, capsys, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        call_command("run_checks", "--project", project.code, "--kind", "link_health", "--seed", str(SEED))
    run = CheckRun.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("run_checks", "--project", project.code, "--rerun-failed", str(run.pk))
    assert CheckRun.objects.get(parent=run).progress_total == 2


def test_run_checks_wait_gives_up_after_its_timeout(project, gpu_nodes):
    # No worker and no commit here: the run stays queued, and --wait must not wait forever.
    with pytest.raises(CommandError, match="still queued after 0.2 s"):
        call_command(
            "run_checks",
            "--project",
            project.code,
            "--kind",
            "nccl",
            "--wait",
            "--poll",
            "0.05",
            "--wait-timeout",
            "0.2",
        )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--project", "NOPE", "--kind", "nccl"], "No project with code 'NOPE'"),
        (["--project", "ACME-72", "--kind", "nccl", "--option", "group_size=1"], "options.group_size"),
        (["--project", "ACME-72", "--kind", "nccl", "--option", "oops"], "use NAME=VALUE"),
        (["--project", "ACME-72"], "Give --kind"),
        (["--project", "ACME-72", "--kind", "nccl", "--user", "cust"], "does not allow running checks"),
        (["--project", "ACME-72", "--kind", "soak"], "invalid choice: 'soak'"),
        (["--project", "ACME-72", "--kind", "port_state"], "invalid choice: 'port_state'"),
        (["--project", "ACME-72", "--kind", "nccl", "--runner", "upload"], "invalid choice: 'upload'"),
    ],
)
def test_run_checks_command_errors_are_clear(project, gpu_nodes, customer, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("run_checks", *args)


# -- review fixes (issue 4): plans, keys, refusals, selectors --------------------------------------------


def test_a_two_plane_breakout_port_is_planned_at_its_full_width_and_passes(start, project):
    make_gpu_nodes(project, 2, model=two_plane_server_model())
    faults = plan_faults(services.sim_cluster_for(project), SEED)
    run = start(CheckKind.LINK_HEALTH)
    injected = {f"{node}:ib{device[-1]}" for node, device in (faults.dirty_fiber, faults.hot_optic)}
    assert run.progress_total == 4 and set(not_passed(run)) == injected  # the faults, and no width or speed
    assert not [r for r in run.results.all() for reason in r.reasons if "planned" in reason["text"]]
    result = run.results.get(target_key="gpu-001:ib1")
    # Two 400G child ports are two planes of one XDR 4x port, not a 2x link of unknown speed.
    assert result.params["plan"] == {
        "speed": "IB-XDR", "width": "4x", "lane_ports": ["ib1/0", "ib1/0", "ib1/1", "ib1/1"], "problems": [],
    }
    assert (result.metrics["speed"], result.metrics["width"]) == ("IB-XDR", "4x")


def test_nccl_on_one_node_is_refused_saying_it_needs_two(project):
    make_gpu_nodes(project, 1)
    with pytest.raises(ValidationError) as refused:
        services.check_run_start(project=project, kind=CheckKind.NCCL)
    assert refused.value.message_dict["kind"] == [
        "NCCL tests the network between nodes: it needs at least two GPU nodes with compute-fabric ports, "
        "and ACME-72 has one (gpu-001)."
    ]
    assert not CheckRun.objects.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout_s": 5 * 3600}, "at most 14400 seconds"),
        ({"launcher": "srun", "launch_host": "h" * 201}, "at most 200 characters"),
    ],
)
def test_options_the_columns_or_the_broker_cannot_hold_are_refused(project, gpu_nodes, options, message):
    with pytest.raises(ValidationError) as refused:
        services.check_run_start(project=project, kind=CheckKind.NCCL, options=options)
    assert message in " ".join(sum(refused.value.message_dict.values(), []))


def test_the_longest_pair_key_fits_its_column(start, project):
    from inventory.models import Device

    column = CheckResult._meta.get_field("target_key").max_length
    name, port = Device._meta.get_field("name").max_length, Port._meta.get_field("name").max_length
    assert 2 * (name + 1 + port) + 1 <= column  # "<node>:<port>~<node>:<port>"
    make_gpu_nodes(project, 2, prefix="n" * (name - 4))
    run = start(CheckKind.GPU_RDMA)
    key = run.results.first().target_key
    assert run.status == JobStatus.DONE and len(key) == 2 * (name + 1 + 3) + 1 and "~" in key


def test_a_key_longer_than_its_column_keeps_its_start_and_stays_unique():
    column = CheckResult._meta.get_field("target_key").max_length
    one, two = "x" * 300 + ":a", "x" * 300 + ":b"
    assert len(CheckResult.fit_key(one)) == column and CheckResult.fit_key(one) != CheckResult.fit_key(two)
    assert CheckResult.fit_key(one).startswith("x" * 200) and CheckResult.fit_key("gpu-001:ib0") == "gpu-001:ib0"


def _upload_run(project, port=None, **metrics) -> CheckRun:
    """A run as the upload service files it: runner "upload", finished, one result."""
    run = CheckRun.objects.create(
        project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.UPLOAD, status=JobStatus.DONE,
        progress_total=1, progress_done=1,
    )
    CheckResult.objects.create(
        run=run, target_key="upload", port=port, status=ResultStatus.DONE, verdict=Verdict.FAIL,
        metrics=metrics, finished_at=timezone.now(),
    )
    return run


def test_upload_and_soak_runs_cannot_be_cancelled_or_re_run(project, gpu_nodes, technician):
    upload = _upload_run(project)
    for action in (
        lambda: services.check_run_cancel(run=upload, user=technician),
        lambda: services.check_run_rerun_failed(run=upload, requested_by=technician),
    ):
        with pytest.raises(ValidationError, match=f"Run #{upload.pk} holds uploaded results"):
            action()
    assert CheckRun.objects.count() == 1


def test_counter_growth_is_judged_against_the_last_reading_that_has_counters(start, project, gpu_nodes):
    first = start(CheckKind.LINK_HEALTH)
    healthy = first.results.filter(verdict=Verdict.PASS).first()
    healthy.metrics["counters"]["link_error_recovery"] = -1
    healthy.save()
    # A newer reading of the port without counters (mlxlink without -c): it says nothing about growth.
    empty = {key: None for key in healthy.metrics["counters"]}
    _upload_run(project, port=healthy.port, counters=empty)
    second = start(CheckKind.LINK_HEALTH)
    again = second.results.get(port=healthy.port)
    assert again.reasons == [{"level": "fail", "text": "link error recovery counter grew from -1 to 0"}]


def test_result_list_filters_by_the_rack_name_of_either_node(start, project, gpu_nodes, customer):
    rack = RackFactory(project=project, name="R01")
    device_update(device=gpu_nodes[0], rack=rack, position_u=10)
    link = start(CheckKind.LINK_HEALTH)
    in_rack = selectors.check_result_list(user=customer, run=link, rack="R01")
    assert {r.device for r in in_rack} == {gpu_nodes[0]} and len(in_rack) == 8
    matrix = start(CheckKind.BANDWIDTH_MATRIX)
    pairs = list(selectors.check_result_list(user=customer, run=matrix, rack="R01"))
    assert len(pairs) == 3 and all(gpu_nodes[0] in (r.device, r.peer_device) for r in pairs)
    assert not selectors.check_result_list(user=customer, run=link, rack="R99").exists()


def test_latest_runs_leave_uploads_and_soak_out_in_one_query(
    start, project, gpu_nodes, customer, django_assert_num_queries
):
    full = start(CheckKind.LINK_HEALTH)
    with django_assert_num_queries(1):
        assert selectors.latest_runs_by_kind(user=customer, project=project)[CheckKind.LINK_HEALTH] == full
    _upload_run(project)  # a one-node upload, newer than the full run
    CheckRun.objects.create(project=project, kind=CheckKind.SOAK, status=JobStatus.RUNNING)
    start(CheckKind.NODE_INVENTORY)
    newest_inventory = start(CheckKind.NODE_INVENTORY)
    with django_assert_num_queries(1):
        latest = selectors.latest_runs_by_kind(user=customer, project=project)
    assert latest == {CheckKind.LINK_HEALTH: full, CheckKind.NODE_INVENTORY: newest_inventory}
    punch = selectors.failed_results(user=customer, project=project)
    assert {r.target_key for r in punch} == set(not_passed(full))  # the upload hides nothing


def test_the_services_send_tasks_by_the_names_the_tasks_have():
    """Services enqueue by name (core.jobs) so that they need not import the tasks that call them."""
    from celery import current_app

    from validation.services.runs import DISPATCH_TASK
    from validation.soak.services import SAMPLE_TASK
    from validation.uploads.services import PARSE_TASK

    sent = {DISPATCH_TASK: tasks.check_run_dispatch, SAMPLE_TASK: tasks.soak_sample_node,
            PARSE_TASK: tasks.tool_upload_parse}
    for name, task in sent.items():
        assert current_app.tasks[name].name == task.name == name
