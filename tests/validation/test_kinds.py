"""The check-kind table (validation.kinds): every CheckKind has its entry; a kind people start builds,
times and executes its targets; and the generic machinery (start, dispatch, lease, record, finalise,
the run page) learns everything about a kind from the table, so a kind is one module and one line."""

import dataclasses

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from core.choices import JobStatus
from validation import criteria, kinds, presenters, services
from validation.choices import CheckKind
from validation.kinds import STARTABLE_CHECK_KINDS, Measurement, Target, kind_of
from validation.services.options import COMMON_OPTIONS

pytestmark = pytest.mark.django_db


def test_every_check_kind_has_its_entry_in_the_table():
    assert set(kinds.KINDS) == set(CheckKind)
    assert all(entry.kind == kind for kind, entry in kinds.KINDS.items())


def test_the_kinds_people_start_build_execute_and_time_their_targets():
    assert set(STARTABLE_CHECK_KINDS) == set(CheckKind) - {CheckKind.SOAK, CheckKind.PORT_STATE}
    for kind in STARTABLE_CHECK_KINDS:
        entry = kind_of(kind)
        assert callable(entry.build_targets) and callable(entry.execute), kind
        assert entry.timeout_s > 0 and not entry.not_startable, kind


@pytest.mark.parametrize("kind", [CheckKind.SOAK, CheckKind.PORT_STATE])
def test_a_kind_that_is_not_started_as_a_run_says_why(kind, project, technician):
    entry = kind_of(kind)
    assert not entry.startable and entry.not_startable
    with pytest.raises(ValidationError) as refused:
        services.check_run_start(project=project, kind=kind, requested_by=technician)
    assert entry.not_startable in str(refused.value)


def test_a_kinds_own_options_are_told_apart_from_the_common_ones():
    for kind in STARTABLE_CHECK_KINDS:
        assert not set(kind_of(kind).options) & set(COMMON_OPTIONS), kind
    assert set(services.run_options(CheckKind.NCCL)) == {*COMMON_OPTIONS, "launcher", "launch_host", "group_size"}
    assert set(services.run_options(CheckKind.LINK_HEALTH)) == {*COMMON_OPTIONS, "network"}


def test_every_chart_a_kind_declares_has_a_builder():
    for entry in kinds.KINDS.values():
        assert set(entry.run_charts) <= set(presenters.RUN_CHARTS), entry.kind
        assert set(entry.result_charts) <= set(presenters.RESULT_CHARTS), entry.kind


@pytest.mark.parametrize("kind", STARTABLE_CHECK_KINDS)
def test_a_run_of_each_kind_goes_through_its_entry(kind, start, nodes, monkeypatch):
    """Building and executing are the entry's: spies in the table see every call, with the timeout the
    entry declares, and the run finishes."""
    entry = kind_of(kind)
    built, executed = [], []

    def build(nodes_, options, project):
        built.append(len(nodes_))
        return entry.build_targets(nodes_, options, project)

    def execute(result, inputs):
        executed.append((result.pk, inputs.timeout))
        return entry.execute(result, inputs)

    monkeypatch.setitem(kinds.KINDS, kind, dataclasses.replace(entry, build_targets=build, execute=execute))
    if kind == CheckKind.TOPOLOGY:  # a fabric to read: both nodes' first rail cabled to one switch
        from .topology_support import cable, devices, switch_model

        devices(nodes[0].project, switch_model("TEST-KIND-SW", ports=4, speed=800), "sw-01")
        for number, node in enumerate(nodes, start=1):
            cable(node.project, f"K{number}", f"{node.name}:ib0", f"sw-01:p{number}", speed=800)
    if kind == CheckKind.LOSSLESS:  # a RoCE port to hold lossless: a storage port on each node
        from inventory.choices import Network, PortKind
        from inventory.models import Port

        for node in nodes:
            Port.objects.create(device=node, name="stor0", kind=PortKind.ETHERNET, speed_gbps=400,
                                network=Network.STORAGE)
    run = start(kind)
    assert built == [2]
    assert sorted(pk for pk, _ in executed) == sorted(run.results.values_list("pk", flat=True))
    assert {timeout for _, timeout in executed} == {entry.timeout_s}
    assert (run.status, run.progress_done) == (JobStatus.DONE, run.progress_total)


def test_a_kind_replaced_in_the_table_is_all_the_machinery_knows(start, nodes, client_for, manager, project,
                                                                 monkeypatch):
    """A made-up kind in node inventory's place: one cluster-wide target, its own execution, lease,
    whole-run judgement, figure and chart. Nothing else is told about it."""

    def build(nodes_, options, project_):
        return [Target(key="cluster", params={"nodes": [n.name for n in nodes_]}, host=nodes_[0].name,
                       device=nodes_[0].device)]

    def execute(result, inputs):
        reason = criteria.Reason(criteria.Outcome.WARN, f"{len(result.params['nodes'])} nodes looked at")
        return Measurement(raw_output="made up\n", metrics={"answer": 42}, verdict=criteria.Verdict.of([reason]))

    def finalise(run, profile):
        return [f"judged {run.results.count()} target(s) together"]

    made_up = kinds.base.Kind(
        CheckKind.NODE_INVENTORY,
        build_targets=build,
        execute=execute,
        timeout_s=7,
        commands_per_target=lambda params: 3,
        finalise=finalise,
        figure=lambda metrics: f"the answer is {metrics['answer']}",
        run_charts=("answer",),
    )
    monkeypatch.setitem(kinds.KINDS, CheckKind.NODE_INVENTORY, made_up)
    monkeypatch.setitem(presenters.RUN_CHARTS, "answer", lambda user, run, profile: {"answer_chart": run.pk})

    run = start(CheckKind.NODE_INVENTORY)
    result = run.results.get()
    assert (run.status, run.progress_total, result.target_key, result.verdict) == (JobStatus.DONE, 1, "cluster", "warn")
    assert "judged 1 target(s) together" in run.log
    assert services.command_timeout(run) == 7
    margin = services.target_lease_seconds(run, result) - 3 * 1
    assert margin == pytest.approx(120)  # three commands (a simulated one counts a second), plus the margin
    assert presenters.run_charts(user=manager, run=run, profile=None) == {"answer_chart": run.pk}
    page = client_for(manager).get(reverse("validation:run-detail", args=[project.code, run.pk])).content.decode()
    assert "the answer is 42" in page


@pytest.mark.parametrize(
    ("kind", "metrics", "figure"),
    [
        (CheckKind.LINK_HEALTH, {"state": "Active", "speed": "IB-XDR", "counters": {"effective_ber": 1.5e-15}},
         "Active IB-XDR, eff. BER 1.5e-15"),
        (CheckKind.CPU_BANDWIDTH, {"bw_avg_gbps": 391.2}, "391.2 Gb/s"),
        (CheckKind.BANDWIDTH_MATRIX, {"min_gbps": 380.0, "mean_gbps": 390.0},
         "slowest rail 380 Gb/s, mean 390 Gb/s"),
        (CheckKind.NCCL, {"avg_busbw_gbps": 350.25}, "avg busbw 350.25 GB/s"),
        (CheckKind.NODE_INVENTORY, {"versions": {"gpu_driver": "580.65.06"}}, "gpu_driver 580.65.06"),
        (CheckKind.PORT_STATE, {"state": "Active", "physical_state": "LinkUp", "rate_gbps": 400.0},
         "Active / LinkUp, 400 Gb/s"),
        (CheckKind.SOAK, {"growth": {"symbol_errors": {}}, "last_sweep": 4}, "symbol errors grew"),
        (CheckKind.SOAK, {"last_sweep": 4}, "no growth up to sample 4"),
        (CheckKind.NCCL, {}, ""),
    ],
)
def test_a_results_table_prints_the_figure_its_kind_names(kind, metrics, figure):
    assert presenters.result_figure(kind, metrics) == figure
