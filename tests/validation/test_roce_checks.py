"""RoCE fabrics checked like InfiniBand ones: a GPU server with Ethernet compute ports and storage ports (the
catalogue's B300-8GPU-ETH, the 1,024-server reference fabric's server) gets link health over its Ethernet
ports (mlxlink in Ethernet terms, ethtool -S counters), the lossless check (mlnx_qos, ECN), and bandwidth
and NCCL commands with the RoCE options, all through the simulated runner and the real parsers."""

from __future__ import annotations

import shlex

import pytest
from django.core.exceptions import ValidationError

from inventory.choices import DeviceRole, Network
from inventory.models import HardwareModel
from inventory.services import device_create
from inventory.services.catalogue import catalogue_load_shipped
from validation import criteria
from validation.choices import CheckKind, ResultStatus, Verdict
from validation.cluster import gpu_nodes, roce_settings, sim_cluster_for
from validation.runners import SimulatedRunner

from .conftest import make_gpu_nodes

pytestmark = pytest.mark.django_db


@pytest.fixture
def eth_model():
    catalogue_load_shipped()
    return HardwareModel.objects.get(part_number="B300-8GPU-ETH")


@pytest.fixture
def eth_nodes(project, eth_model):
    """Two RoCE GPU servers: eth0..eth7 (800G, 2 x 400G planes) on the compute network, stor0/stor1 (400G)
    on the storage network."""
    return [
        device_create(project=project, hardware_model=eth_model, name=f"roce-{i:03d}", role=DeviceRole.GPU_NODE)
        for i in (1, 2)
    ]


def results_by_key(run):
    return {r.target_key: r for r in run.results.all()}


# --- the inventory as the checks see it -------------------------------------------------------------


def test_ethernet_compute_ports_are_rails_and_storage_ports_their_own(eth_nodes, django_assert_num_queries):
    with django_assert_num_queries(4):
        nodes = gpu_nodes(eth_nodes[0].project)
    assert [n.name for n in nodes] == ["roce-001", "roce-002"]
    node = nodes[0]
    assert [r.port.name for r in node.rails] == [f"eth{i}" for i in range(8)]
    assert [r.rdma_device for r in node.rails] == [f"mlx5_{i}" for i in range(8)]
    assert [r.gpu for r in node.rails] == list(range(8))  # rail index = GPU, for compute only
    assert all(r.ethernet and r.network == Network.COMPUTE for r in node.rails)
    assert [(r.port.name, r.rdma_device, r.gpu, r.network) for r in node.storage_rails] == [
        ("stor0", "mlx5_8", None, Network.STORAGE), ("stor1", "mlx5_9", None, Network.STORAGE)]
    # An Ethernet port's plan is an Ethernet speed, not an InfiniBand generation.
    assert node.rails[0].plan.speed == "800G" and node.rails[0].plan.ethernet
    assert node.storage_rails[0].plan.speed == "400G"


def test_infiniband_rails_keep_their_plan(project):
    [node] = gpu_nodes(make_gpu_nodes(project, 1)[0].project)
    assert node.rails[0].plan.speed == "IB-XDR" and not node.rails[0].plan.ethernet
    assert node.storage_rails == ()


# --- link health over Ethernet ports ------------------------------------------------------------------


def test_link_health_runs_over_roce_ports_and_finds_the_planted_faults(eth_nodes, start):
    run = start(CheckKind.LINK_HEALTH)
    results = results_by_key(run)
    assert len(results) == 16 and all(r.status == ResultStatus.DONE for r in results.values())
    runner = SimulatedRunner(sim_cluster_for(run.project), seed=1)
    dirty = "{}:eth{}".format(runner.faults.dirty_fiber[0], runner.faults.dirty_fiber[1].removeprefix("mlx5_"))
    hot = "{}:eth{}".format(runner.faults.hot_optic[0], runner.faults.hot_optic[1].removeprefix("mlx5_"))
    failed = {key for key, r in results.items() if r.verdict == Verdict.FAIL}
    assert failed == {dirty, hot}
    dirty_texts = " | ".join(reason["text"] for reason in results[dirty].reasons)
    assert "effective BER" in dirty_texts and "CRC errors" in dirty_texts  # mlxlink and ethtool -S agree
    healthy = results["roce-001:eth0"] if "roce-001:eth0" not in failed else results["roce-002:eth7"]
    assert healthy.verdict == Verdict.PASS, healthy.reasons
    assert healthy.metrics["speed"] == "800G"
    assert healthy.metrics["port_counters"]["rx_prio3_discards"] == 0
    assert "$ ethtool -S eth" in healthy.raw_output


def test_the_storage_network_is_checked_on_request(eth_nodes, start):
    storage = start(CheckKind.LINK_HEALTH, network="storage")
    assert sorted(results_by_key(storage)) == [f"roce-00{n}:stor{p}" for n in (1, 2) for p in (0, 1)]
    assert all(r.verdict == Verdict.PASS for r in storage.results.all())
    assert {r.metrics["speed"] for r in storage.results.all()} == {"400G"}
    everything = start(CheckKind.LINK_HEALTH, network="all")
    assert everything.results.count() == 20


def test_a_network_that_is_not_one_is_refused(eth_nodes, start):
    with pytest.raises(ValidationError) as refused:
        start(CheckKind.LINK_HEALTH, network="oob")
    assert "options.network" in refused.value.message_dict


def test_a_counter_that_grew_since_the_last_reading_fails(eth_nodes, start):
    """The port's previous reading is its baseline, NIC counters included: the dirty fiber's CRC errors, set
    back to 0 in the first run's stored reading, have grown by the second run."""
    first = start(CheckKind.LINK_HEALTH)
    runner = SimulatedRunner(sim_cluster_for(first.project), seed=1)
    host, device = runner.faults.dirty_fiber
    key = f"{host}:eth{device.removeprefix('mlx5_')}"
    result = first.results.get(target_key=key)
    assert result.metrics["port_counters"]["rx_crc_errors_phy"] > 0
    result.metrics = {**result.metrics, "port_counters": {**result.metrics["port_counters"], "rx_crc_errors_phy": 0}}
    result.save(update_fields=["metrics"])
    second = start(CheckKind.LINK_HEALTH).results.get(target_key=key)
    grown = second.metrics["port_counters"]["rx_crc_errors_phy"]
    assert {"level": "fail", "text": f"CRC errors (rx_crc_errors_phy) grew from 0 to {grown}"} in second.reasons


# --- the lossless check ------------------------------------------------------------------------------


def test_lossless_run_reads_every_roce_port_and_passes_a_lossless_host(eth_nodes, start):
    run = start(CheckKind.LOSSLESS)
    results = results_by_key(run)
    assert len(results) == 20  # compute and storage ports alike
    assert all(r.verdict == Verdict.PASS for r in results.values()), [r.reasons for r in results.values()]
    one = results["roce-001:eth3"]
    assert one.command == "mlnx_qos -i eth3"
    assert one.metrics["pfc_enabled"] == [0, 0, 0, 1, 0, 0, 0, 0] and one.metrics["ecn"] == {"np": 1, "rp": 1}
    assert "/sys/class/net/eth3/ecn/roce_np/enable/3:1" in one.raw_output


def test_an_infiniband_project_has_nothing_to_hold_lossless(nodes, start):
    with pytest.raises(ValidationError) as refused:
        start(CheckKind.LOSSLESS)
    assert "no Ethernet (RoCE) ports" in str(refused.value)


# --- bandwidth and NCCL over RoCE ----------------------------------------------------------------------


def test_bandwidth_tests_over_roce_pass_the_gid_and_the_lossless_traffic_class(eth_nodes, start):
    run = start(CheckKind.GPU_RDMA)
    result = run.results.order_by("id").first()
    argv = shlex.split(result.params["client_command"])
    assert argv[argv.index("-x") + 1] == "3" and argv[argv.index("--tclass") + 1] == "106"
    assert "-R" not in argv  # RDMA-CM would pick the device by the route to the server's name, not by -d
    assert result.status == ResultStatus.DONE and result.metrics["link_type"] == "Ethernet"
    # Two nodes: the planted slow GPU node is in every pair, so each RoCE measurement reads ~60% of the line.
    assert {round(r.metrics["bw_avg_gbps"] / 787.7, 2) for r in run.results.all()} == {0.6}
    assert all(r.verdict == Verdict.FAIL for r in run.results.all())


def test_infiniband_bandwidth_tests_keep_their_command(nodes, start):
    run = start(CheckKind.CPU_BANDWIDTH)
    assert "-x" not in shlex.split(run.results.first().params["client_command"])


def test_nccl_over_roce_uses_the_roce_environment(eth_nodes, start):
    run = start(CheckKind.NCCL)
    argv = shlex.split(run.results.get().command)
    assert "NCCL_IB_GID_INDEX=3" in argv and "NCCL_IB_TC=106" in argv
    assert "NCCL_IB_HCA=" + ",".join(f"mlx5_{i}" for i in range(8)) in argv  # compute rails only
    srun = start(CheckKind.NCCL, launcher="srun")
    assert "NCCL_IB_GID_INDEX=3,NCCL_IB_TC=106" in srun.results.get().command


def test_roce_settings_default_when_the_profile_has_none(project):
    assert roce_settings(project) == criteria.RoceSettings(pfc_priority=3, dscp=26, gid_index=3, traffic_class=106)


def test_roce_overrides_are_checked_by_the_profile_service(project, manager):
    from validation.services import profiles

    with pytest.raises(ValidationError) as refused:
        profiles.acceptance_profile_update(project=project, user=manager, roce={"pfc_priority": 9})
    assert refused.value.message_dict == {"roce": ["roce.pfc_priority: expected a whole number from 0 to 7"]}
    with pytest.raises(ValidationError) as refused:
        profiles.acceptance_profile_update(project=project, user=manager, roce=[3])
    assert "Give an object of RoCE settings" in str(refused.value)
    assert roce_settings(project).pfc_priority == 3  # nothing of the refused ones was kept
    profiles.acceptance_profile_update(project=project, user=manager, roce={"pfc_priority": 5, "dscp": 40})
    assert (roce_settings(project).pfc_priority, roce_settings(project).dscp) == (5, 40)
