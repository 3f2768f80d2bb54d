"""The bandwidth matrix's `nodes` option: a matrix of some of the project's GPU nodes (one scalable unit, the
racks handed over so far; the demo's is six racks of DEMO-72) is the pairs of those nodes only, and a name
that is no GPU node of the project is refused before anything is created; so are a list that is not of host
names, fewer than two distinct nodes (no pair), more names than the project has nodes, and the unknown names
are echoed back few and short."""

import pytest
from django.core.exceptions import ValidationError

from validation import services
from validation.choices import CheckKind, RunnerKind
from validation.kinds.base import HOST_MAX_LENGTH
from validation.models import CheckRun

from .conftest import SEED, make_gpu_nodes

pytestmark = pytest.mark.django_db


@pytest.fixture
def six_nodes(project):
    return make_gpu_nodes(project, 6)


def _pairs(run: CheckRun) -> set[frozenset[str]]:
    return {frozenset((r.device.name, r.peer_device.name)) for r in run.results.select_related("device", "peer_device")}


def test_the_matrix_of_the_named_nodes_is_their_pairs_only(start, six_nodes):
    named = ["gpu-002", "gpu-004", "gpu-005"]
    run = start(CheckKind.BANDWIDTH_MATRIX, nodes=named)
    assert run.progress_total == 3 and run.options["nodes"] == named
    assert _pairs(run) == {frozenset(("gpu-002", "gpu-004")), frozenset(("gpu-002", "gpu-005")),
                           frozenset(("gpu-004", "gpu-005"))}
    assert run.progress_done == 3


def test_without_the_option_every_pair_of_every_node(start, six_nodes):
    run = start(CheckKind.BANDWIDTH_MATRIX)
    assert run.progress_total == 15 and len(_pairs(run)) == 15


def refusal(project, nodes) -> str:
    """What starting a matrix with this `nodes` option is refused with; nothing may have been created."""
    with pytest.raises(ValidationError) as refused:
        services.check_run_start(project=project, kind=CheckKind.BANDWIDTH_MATRIX, runner=RunnerKind.SIMULATED,
                                 options={"seed": SEED, "nodes": nodes})
    assert not CheckRun.objects.exists()
    return " ".join(refused.value.message_dict["options.nodes"])


@pytest.mark.parametrize(("nodes", "message"), [
    (["gpu-001", "gpu-404"], "not GPU nodes of the project: gpu-404"),
    ("gpu-001", "expected a list of host names"),
    ([1, 2], "expected a list of host names"),
    (["gpu-001", ""], "expected a host name"),
    (["gpu-001", "x" * (HOST_MAX_LENGTH + 1)], f"expected a host name of at most {HOST_MAX_LENGTH} characters"),
    ([], "name at least two GPU nodes"),
    (["gpu-003"], "name at least two GPU nodes"),
    (["gpu-003", " gpu-003 "], "name at least two GPU nodes"),  # the same node twice is one node
])
def test_a_name_that_is_no_gpu_node_or_not_a_list_is_refused_and_nothing_is_created(project, six_nodes, nodes,
                                                                                      message):
    assert message in refusal(project, nodes)


def test_a_single_named_node_is_refused_for_what_it_is(project, six_nodes):
    said = refusal(project, ["gpu-003"])
    assert "pairs" in said and "compute-fabric" not in said


def test_duplicates_are_dropped_and_names_trimmed(start, six_nodes):
    run = start(CheckKind.BANDWIDTH_MATRIX, nodes=["gpu-002", " gpu-004", "gpu-002", "gpu-004 "])
    assert run.options["nodes"] == ["gpu-002", "gpu-004"] and run.progress_total == 1
    assert _pairs(run) == {frozenset(("gpu-002", "gpu-004"))}


def test_more_names_than_the_project_has_nodes_are_refused(project, six_nodes):
    said = refusal(project, [f"gpu-{i:03d}" for i in range(1, 8)])
    assert said == "names 7 nodes; the project has 6 GPU nodes"


def test_a_long_list_is_refused_before_each_name_is_looked_at(project, six_nodes):
    assert "at most 20,000 host names" in refusal(project, ["gpu-001"] * 20_001)


def test_unknown_names_echoed_back_are_few_and_short(project, six_nodes):
    unknown = [f"{'n' * 90}-{i}" for i in range(5)]
    said = refusal(project, ["gpu-001", *unknown])
    listed = said.removeprefix("not GPU nodes of the project: ")
    assert listed == ", ".join(["n" * 39 + "…"] * 5)
    strangers = [f"stranger-{i}" for i in range(6)]
    assert refusal(project, strangers).endswith("stranger-3, stranger-4 and 1 more")
