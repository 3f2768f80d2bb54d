"""The topology check kind: targets per InfiniBand fabric and per Ethernet switch, outputs collected through
the runner (the simulated fabric, with its planted faults), compared at the run's end; and the link-health
kind reporting each cable's result to the cables."""

import pytest

from cabling.choices import CableStatus, FabricState
from cabling.models import Cable
from core.choices import JobStatus
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind, PortStatus
from inventory.models import Port
from validation import services
from validation.choices import CheckKind, RunnerKind, TopologySource, Verdict
from validation.cluster import sim_cluster_for
from validation.models import TopologyComparison
from validation.runners import SimulatedRunner
from validation.runners.simfabric import plan_fabric_faults

from .conftest import SEED
from .topology_support import cable, devices, host_model, port, switch_model

pytestmark = pytest.mark.django_db
HOSTS = 4


@pytest.fixture
def small_fabric(project):
    """Two InfiniBand leaves and a spine, four hosts with two 400G rails (rail 0 on leaf-01, rail 1 on
    leaf-02) and one storage port each on two Ethernet leaves (two free ports on each)."""
    leaf = switch_model("TEST-IB-LEAF", ports=8, speed=400)
    storage = switch_model("TEST-ETH-LEAF", ports=4, speed=100, kind=HardwareKind.ETH_SWITCH,
                           port_kind=PortKind.ETHERNET, os_port_format="swp{n}", network=Network.STORAGE)
    host = host_model("TEST-2RAIL", ports=["ib0", "ib1"], speed=400)
    devices(project, leaf, "leaf-01", "leaf-02", role=DeviceRole.LEAF)
    devices(project, leaf, "spine-01", role=DeviceRole.SPINE)
    devices(project, storage, "stor-a", "stor-b", role=DeviceRole.LEAF)
    hosts = devices(project, host, *(f"h{i}" for i in range(1, HOSTS + 1)), role=DeviceRole.GPU_NODE)
    for h in hosts:  # a storage port the catalogue model lacks: added the way an import would
        Port.objects.create(device=h, name="stor0", kind=PortKind.ETHERNET, speed_gbps=100, network=Network.STORAGE)
    for i in range(1, HOSTS + 1):
        cable(project, f"C{i}0", f"h{i}:ib0", f"leaf-01:p{i}", speed=400, status=CableStatus.PLANNED)
        cable(project, f"C{i}1", f"h{i}:ib1", f"leaf-02:p{i}", speed=400, status=CableStatus.PLANNED)
        cable(project, f"S{i}", f"h{i}:stor0", f"{'stor-a' if i <= 2 else 'stor-b'}:p{(i - 1) % 2 + 1}",
              network=Network.STORAGE, status=CableStatus.PLANNED)
    for n, (leaf_name, leaf_port) in enumerate([("leaf-01", 7), ("leaf-01", 8), ("leaf-02", 7), ("leaf-02", 8)], 1):
        cable(project, f"U{n}", f"{leaf_name}:p{leaf_port}", f"spine-01:p{n}", speed=400, status=CableStatus.PLANNED)
    return project


def test_targets_one_iblinkinfo_per_fabric_and_lldpcli_per_ethernet_switch(small_fabric):
    targets = services.build_targets(project=small_fabric, kind=CheckKind.TOPOLOGY, options={})
    assert [(t.key, t.host, t.command) for t in targets] == [
        ("iblinkinfo@h1:mlx5_0", "h1", "iblinkinfo -C mlx5_0 -P 1"),
        ("lldp@stor-a", "stor-a", "lldpcli -f json show neighbors details"),
        ("lldp@stor-b", "stor-b", "lldpcli -f json show neighbors details"),
    ]


def test_a_simulated_run_finds_the_planted_faults_and_nothing_else(small_fabric, start):
    planted = plan_fabric_faults(sim_cluster_for(small_fabric, with_fabric=True).fabric, SEED)
    expected = planted.expected()
    assert set(expected.values()) == {"miswired", "degraded", "missing"} and len(expected) == 5
    run = start(CheckKind.TOPOLOGY)
    assert (run.status, run.progress_done, run.progress_total) == (JobStatus.DONE, 3, 3)
    assert set(run.results.values_list("verdict", flat=True)) == {Verdict.PASS}
    assert "simulated faults: swapped pair: " in run.log and "cable on the wrong leaf: " in run.log
    comparison = TopologyComparison.objects.get(run=run)
    assert comparison.source == TopologySource.CHECK_RUN
    found = {link.key: link.state for link in comparison.links.all()}
    assert found == expected
    total = Cable.objects.filter(project=small_fabric).count()
    assert comparison.counts["ok"] == total - len(expected) and comparison.counts["unplanned"] == 0
    assert comparison.counts["swaps"] == 1
    assert f"topology comparison #{comparison.pk}: {total - 5} ok, 1 missing, 3 miswired, 0 unplanned, 1 degraded" \
        in run.log
    # The cables follow the evidence.
    states = dict(Cable.objects.filter(project=small_fabric).values_list("label", "fabric_state"))
    assert {label for label, state in states.items() if state != FabricState.OK} == set(expected)
    ok = Cable.objects.get(project=small_fabric, label=next(k for k in states if k not in expected))
    assert ok.status == CableStatus.VERIFIED and ok.status_cause == f"topology comparison #{comparison.pk}"


def test_the_wrong_leaf_lands_on_a_free_port_of_another_leaf(small_fabric):
    runner = SimulatedRunner(sim_cluster_for(small_fabric, with_fabric=True), seed=SEED)
    key, landed = runner.fabric_faults.wrong_leaf
    assert key.startswith("S") and landed.device in {"stor-a", "stor-b"} and landed.port in {"p3", "p4"}
    planned = Cable.objects.get(project=small_fabric, label=key).ends.get(side="B").port.device.name
    assert landed.device != planned


def test_a_head_node_collects_the_fabric(small_fabric):
    from inventory.services import device_update

    h3 = port(small_fabric, "h3:ib0").device
    device_update(device=h3, role=DeviceRole.HEAD_NODE)
    targets = services.build_targets(project=small_fabric, kind=CheckKind.TOPOLOGY, options={})
    assert targets[0].key == "iblinkinfo@h3:mlx5_0"


def test_link_health_moves_each_cable_by_its_result(small_fabric, start):
    run = start(CheckKind.LINK_HEALTH)
    failed = {r.cable_id for r in run.results.filter(verdict=Verdict.FAIL)}
    passed = {r.cable_id for r in run.results.filter(verdict__in=[Verdict.PASS, Verdict.WARN])}
    assert failed and passed and run.runner == RunnerKind.SIMULATED
    for row in Cable.objects.filter(pk__in=failed):
        assert row.status == CableStatus.FAULTY and row.status_cause.startswith(f"link health run #{run.pk}: ")
        assert set(row.ends.values_list("port__status", flat=True)) == {PortStatus.DOWN}
    for row in Cable.objects.filter(pk__in=passed):
        assert (row.status, row.status_cause) == (CableStatus.INSTALLED, f"link health run #{run.pk}")
    assert "cables: " in run.log and "changed status" in run.log
    # Untouched: cables the run did not measure (the spine uplinks and the storage network).
    assert set(Cable.objects.filter(label__startswith="U").values_list("status", flat=True)) == {CableStatus.PLANNED}
