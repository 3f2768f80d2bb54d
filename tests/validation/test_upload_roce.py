"""Uploads of the RoCE tools on the real fixtures: `ethtool -S` (judged as link health judges a RoCE port's
counters, with the port's previous reading as the baseline), `mlnx_qos -i <if>` (judged as the lossless
check judges a host port), NVUE `nv show [interface <if>] qos roce` (a switch's side, filed against the
switch or its port by the name Cumulus prints), and mlxlink of a storage port (mlx5_8 is the first storage
port, not "no compute port"). Each is detected without naming the tool; a broken file fails with its line,
keeps the raw file and files nothing; outsiders get 404 and customers 403."""
# ruff: noqa: F811  (the fixtures imported from test_uploads are parameters here)

from __future__ import annotations

import pytest
from django.urls import reverse

from core.choices import JobStatus
from inventory.choices import DeviceRole
from inventory.models import HardwareModel
from inventory.services import device_create
from inventory.services.catalogue import catalogue_load_shipped
from validation.choices import CheckKind, Verdict
from validation.cluster import sim_cluster_for
from validation.kinds.link_health import previous_link_counters
from validation.models import CheckResult, CheckRun, ToolUpload
from validation.runners import SimulatedRunner

from .conftest import fixture_text
from .test_uploads import node_api, page_upload  # noqa: F401  (fixtures)

pytestmark = pytest.mark.django_db

ETHTOOL_FULL = "ethtool_S_01_mlx5_xdp_drop_discards_pause_nonzero_only.txt"
ETHTOOL_GREP = "ethtool_S_02_grep_phy_and_prio_discards_zero.txt"
QOS_PFC3 = "mlnx_qos_01_trust_dscp_pfc3_no_buffer_rows.txt"
QOS_PFC5 = "mlnx_qos_02_pfc5_buffers_custom_dscp2prio.txt"
NVUE_PORT = "nvue_show_interface_qos_roce_status_01_swp16.txt"
NVUE_LOSSLESS = "nvue_show_qos_roce_01_lossless_single_ipool.txt"
NVUE_LOSSY = "nvue_show_qos_roce_02_lossy_multi_tc_no_pfc.txt"


@pytest.fixture
def roce(project):
    """A RoCE GPU server (eth0..eth7 compute, stor0/stor1 storage: mlx5_8, mlx5_9) and a Spectrum-4 leaf
    (p1..p64, which Cumulus names swp1..swp64)."""
    catalogue_load_shipped()
    server = HardwareModel.objects.get(part_number="B300-8GPU-ETH")
    switch = HardwareModel.objects.get(part_number="SN5600")
    node = device_create(project=project, hardware_model=server, name="roce-001", role=DeviceRole.GPU_NODE)
    leaf = device_create(project=project, hardware_model=switch, name="leaf-01", role=DeviceRole.LEAF)
    return node, leaf


def uploaded() -> ToolUpload:
    upload = ToolUpload.objects.get()
    assert upload.status == JobStatus.DONE, upload.error
    return upload


def results_of(upload) -> dict[str, CheckResult]:
    return {r.target_key: r for r in CheckResult.objects.filter(run=upload.run).select_related("port", "device")}


def reasons(result) -> list[str]:
    return [r["text"] for r in result.reasons]


# -- ethtool -S ----------------------------------------------------------------------------------------


def test_ethtool_stats_is_detected_filed_on_its_interface_and_judged_like_link_health(page_upload, technician,
                                                                                       roce):
    text = "$ ethtool -S eth2\n" + fixture_text(ETHTOOL_FULL)
    page_upload(technician, name="eth2.txt", host="roce-001", text=text)
    upload = uploaded()
    assert (upload.tool, upload.run.kind, upload.result_count) == ("ethtool_stats", CheckKind.LINK_HEALTH, 1)
    [result] = results_of(upload).values()
    assert (result.target_key, result.device.name, result.port.name) == ("roce-001:eth2", "roce-001", "eth2")
    # a RoCE port that drops on the physical port and sends 802.3x pauses: warned, as link health warns
    assert result.verdict == Verdict.WARN
    assert "58591428329 received packets discarded (rx_discards_phy): the port ran out of buffer" in reasons(result)
    assert any(text.startswith("5745042 global pause frames (802.3x flow control)") for text in reasons(result))
    assert result.metrics["port_counters"]["rx_discards_phy"] == 58591428329
    assert "rx_xdp_drop" not in result.metrics["port_counters"]  # per-queue noise is not kept
    assert result.raw_output.startswith("$ ethtool -S eth2\nNIC statistics:")


def test_grep_of_counters_names_no_interface_so_it_is_filed_on_the_node_with_a_warning(page_upload, technician,
                                                                                       roce):
    page_upload(technician, name="counters.txt", host="roce-001", text=fixture_text(ETHTOOL_GREP))
    [result] = results_of(uploaded()).values()
    assert (result.target_key, result.port) == ("roce-001:#1", None)
    assert result.verdict == Verdict.WARN
    assert "the output does not name its interface (an `ethtool -S <if>` line above the counters), so it was " \
           "not matched to a port" in reasons(result)


def test_a_loop_over_storage_ports_files_each_banner_on_its_port(page_upload, technician, roce):
    counters = fixture_text(ETHTOOL_GREP)
    text = f"===== mlx5_8 stor0 =====\n{counters}===== mlx5_9 stor1 =====\n{counters}"
    page_upload(technician, name="storage.txt", host="roce-001", text=text)
    results = results_of(uploaded())
    assert sorted(results) == ["roce-001:stor0", "roce-001:stor1"]
    assert all(r.verdict == Verdict.PASS and r.reasons == [] for r in results.values())
    assert "stor1" not in results["roce-001:stor0"].raw_output


def test_a_counter_that_grew_since_the_ports_last_reading_fails(page_upload, technician, roce):
    clean = "$ ethtool -S eth0\n" + fixture_text(ETHTOOL_GREP)
    page_upload(technician, name="before.txt", host="roce-001", text=clean)
    worse = clean.replace("rx_prio3_discards: 0", "rx_prio3_discards: 12")
    page_upload(technician, name="after.txt", host="roce-001", text=worse)
    latest = ToolUpload.objects.order_by("-id").first()
    [result] = results_of(latest).values()
    assert result.verdict == Verdict.FAIL
    assert "lossless discards (rx_prio3_discards) grew from 0 to 12" in reasons(result)
    assert "lossless priority 3 discarded 12 packets (rx_prio3_discards): PFC is not holding them" in reasons(result)


def test_an_uploaded_half_reading_does_not_hide_the_other_half_of_the_baseline(page_upload, technician, roce):
    runner = SimulatedRunner(sim_cluster_for(roce[0].project), seed=3)
    mlxlink = "$ mlxlink -d mlx5_1 -m -c -e\n" + runner.run("roce-001", "mlxlink -d mlx5_1 -m -c -e", 10).stdout
    page_upload(technician, name="mlxlink.txt", host="roce-001", text=mlxlink)
    page_upload(technician, name="stats.txt", host="roce-001", text="$ ethtool -S eth1\n" + fixture_text(ETHTOOL_GREP))
    port = results_of(ToolUpload.objects.order_by("id").first())["roce-001:eth1"].port
    baseline = previous_link_counters(project_id=port.device.project_id, port_id=port.pk)
    assert baseline["effective_ber"] is not None  # from the mlxlink upload, older
    assert baseline["port_counters"]["rx_prio3_discards"] == 0  # from the ethtool upload, newer


# -- mlnx_qos ------------------------------------------------------------------------------------------


def test_mlnx_qos_of_a_storage_port_is_judged_like_the_lossless_check(page_upload, technician, roce):
    text = "root@roce-001:~# mlnx_qos -i stor1\n" + fixture_text(QOS_PFC3)
    page_upload(technician, name="qos.txt", host="roce-001", text=text)
    upload = uploaded()
    assert (upload.tool, upload.run.kind) == ("mlnx_qos", CheckKind.LOSSLESS)
    [result] = results_of(upload).values()
    assert (result.target_key, result.port.name) == ("roce-001:stor1", "stor1")
    # trust dscp, PFC on 3 only, DSCP 26 on 3: lossless; ECN is not in mlnx_qos's output
    assert result.verdict == Verdict.WARN
    assert reasons(result) == ["mlnx_qos printed no receive buffers (older driver): buffers not checked",
                               "ECN on priority 3 not read"]
    assert result.metrics["pfc_enabled"] == [0, 0, 0, 1, 0, 0, 0, 0] and result.metrics["ecn"] is None


def test_mlnx_qos_with_pfc_on_the_wrong_priority_fails_and_an_unknown_interface_is_named(page_upload, technician,
                                                                                         roce):
    page_upload(technician, name="qos.txt", host="roce-001", text=fixture_text(QOS_PFC5))
    [result] = results_of(uploaded()).values()
    assert (result.target_key, result.port, result.verdict) == ("roce-001:ens4np0", None, Verdict.FAIL)
    assert "PFC off on priority 3, the lossless priority" in reasons(result)
    assert any(text.startswith("'ens4np0' matches no compute or storage port of roce-001 (mlx5_0..mlx5_9: eth0,")
               for text in reasons(result))


def test_mlnx_qos_is_judged_against_the_projects_roce_settings(page_upload, technician, manager, project, roce):
    from validation.services import profiles

    profiles.acceptance_profile_update(project=project, user=manager, roce={"pfc_priority": 5, "dscp": 40})
    text = fixture_text(QOS_PFC5).replace("ens4np0", "eth0")
    page_upload(technician, name="qos.txt", host="roce-001", text=text)
    [result] = results_of(uploaded()).values()
    # PFC on 5 only, DSCP 40 on priority 5, priority 5 in its own 220,896-byte buffer: what this project asks
    assert result.port.name == "eth0" and result.verdict == Verdict.WARN
    assert reasons(result) == ["ECN on priority 5 not read"]


def test_a_setup_log_is_judged_on_each_interfaces_last_configuration(page_upload, technician, roce):
    before = fixture_text(QOS_PFC5).replace("ens4np0", "eth4")
    after = "$ mlnx_qos -i eth4 --pfc 0,0,0,1,0,0,0,0\n" + fixture_text(QOS_PFC3)
    page_upload(technician, name="setup.log", host="roce-001", text=before + after)
    [result] = results_of(uploaded()).values()
    assert (result.port.name, result.metrics["pfc_enabled"]) == ("eth4", [0, 0, 0, 1, 0, 0, 0, 0])
    assert "PFC off on priority 3, the lossless priority" not in reasons(result)


# -- NVUE on a switch ----------------------------------------------------------------------------------


def test_nvue_port_status_is_filed_on_the_switch_port_cumulus_names(node_api, technician, roce):
    api = node_api(technician)
    response = api.post_committed("/api/uploads/", {"project": "ACME-72", "host": "leaf-01",
                                                     "text": fixture_text(NVUE_PORT)})
    assert response.status_code == 201, response.content
    upload = uploaded()
    assert (upload.tool, upload.run.kind) == ("nvue_qos", CheckKind.LOSSLESS)
    [result] = results_of(upload).values()
    assert (result.target_key, result.device.name, result.port.name) == ("leaf-01:p16", "leaf-01", "p16")
    assert (result.verdict, result.reasons) == (Verdict.PASS, [])
    body = api.get(f"/api/uploads/{upload.pk}/").json()
    assert body["results"][0]["port"] == "p16" and body["tool"] == "nvue_qos"


@pytest.mark.parametrize(("name", "verdict", "reason"), [
    (NVUE_LOSSLESS, Verdict.PASS, None),
    (NVUE_LOSSY, Verdict.FAIL, "RoCE mode lossy-multi-tc, expected a lossless mode"),
])
def test_the_switch_wide_profile_is_filed_on_the_switch(page_upload, technician, roce, name, verdict, reason):
    page_upload(technician, name=name, host="leaf-01")
    [result] = results_of(uploaded()).values()
    assert (result.target_key, result.device.name, result.port) == ("leaf-01:qos roce", "leaf-01", None)
    assert result.verdict == verdict
    assert reason is None or reason in reasons(result)


def test_nvue_output_sent_as_a_gpu_nodes_fails_with_its_line(page_upload, technician, roce):
    page_upload(technician, name="nv.txt", host="roce-001", text=fixture_text(NVUE_PORT))
    upload = ToolUpload.objects.get()
    assert (upload.status, upload.error_line) == (JobStatus.FAILED, 2)
    assert "roce-001 is not a switch: upload it with the switch's name as the host" in upload.error
    assert CheckRun.objects.count() == 0


# -- mlxlink of a storage port -------------------------------------------------------------------------


def test_mlxlink_of_mlx5_8_is_the_first_storage_port_judged_in_ethernet_terms(page_upload, technician, roce):
    runner = SimulatedRunner(sim_cluster_for(roce[0].project), seed=2)
    text = "$ mlxlink -d mlx5_8 -m -c -e\n" + runner.run("roce-001", "mlxlink -d mlx5_8 -m -c -e", 10).stdout
    page_upload(technician, name="mlxlink.txt", host="roce-001", text=text)
    [result] = results_of(uploaded()).values()
    assert (result.target_key, result.port.name, result.port.network) == ("roce-001:stor0", "stor0", "storage")
    assert result.metrics["speed"].startswith("400G")
    assert result.verdict == Verdict.PASS, result.reasons


# -- scale ---------------------------------------------------------------------------------------------


def test_filing_an_upload_reads_its_own_nodes_ports_whatever_the_cluster_size(technician, project, roce):
    from tests.support import count_queries
    from validation.uploads.services import tool_upload_create, tool_upload_process

    text = ("$ ethtool -S eth2\n" + fixture_text(ETHTOOL_GREP)).encode()

    def filing_queries() -> int:
        upload = tool_upload_create(project=project, user=technician, host="roce-001", data=text, filename="s.txt")
        queries = count_queries(lambda: tool_upload_process(upload_id=upload.pk))
        assert ToolUpload.objects.get(pk=upload.pk).status == JobStatus.DONE
        return queries

    filing_queries()  # the first one also creates the project's acceptance profile
    few = filing_queries()
    server = HardwareModel.objects.get(part_number="B300-8GPU-ETH")
    for i in range(2, 6):
        device_create(project=project, hardware_model=server, name=f"roce-{i:03d}", role=DeviceRole.GPU_NODE)
    assert filing_queries() == few


# -- broken files --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "edit", "line", "message"), [
    (QOS_PFC3, ("enabled     0   0   0   1   0   0   0   0", "enabled     0   0   0   1   0   0   0"), 15,
     "PFC enabled row has 7 values"),
    (ETHTOOL_GREP, ("rx_prio3_discards: 0", "rx_prio3_discards: 12abc"), 7,
     "counter rx_prio3_discards is '12abc', not a whole number"),
    (NVUE_PORT, ("  pfc-priority      3", "  PFC_Priority      3"), 15, "setting name"),
])
def test_a_broken_roce_output_fails_with_its_line_keeps_the_file_and_files_nothing(page_upload, technician, roce,
                                                                                   name, edit, line, message):
    text = fixture_text(name).replace(*edit)
    assert text != fixture_text(name)
    host = "leaf-01" if name == NVUE_PORT else "roce-001"
    page_upload(technician, name="broken.txt", host=host, text=text)
    upload = ToolUpload.objects.get()
    assert (upload.status, upload.error_line) == (JobStatus.FAILED, line), upload.error
    assert upload.error.startswith(f"line {line}: ") and message in upload.error
    assert CheckResult.objects.count() == 0
    with upload.file.open("rb") as stored:
        assert stored.read() == text.encode()


# -- pages and who may use them ------------------------------------------------------------------------


def test_the_upload_page_offers_the_roce_tools_and_shows_their_results(page_upload, client_for, technician, roce):
    client = client_for(technician)
    form = client.get(reverse("uploads:create", args=["ACME-72"])).content.decode()
    for tool in ("ethtool_stats", "mlnx_qos", "nvue_qos"):
        assert f'<option value="{tool}"' in form
    page_upload(technician, name="nv.txt", host="leaf-01", text=fixture_text(NVUE_LOSSY), tool="nvue_qos")
    upload = uploaded()
    body = client.get(reverse("uploads:detail", args=["ACME-72", upload.pk])).content.decode()
    assert '<tr data-result="leaf-01:qos roce" class="flagged">' in body
    run = client.get(reverse("validation:run-detail", args=["ACME-72", upload.run_id]))
    assert run.status_code == 200


def test_outsiders_get_404_and_customers_403_for_roce_uploads(page_upload, client_for, node_api, technician,
                                                               customer, outsider, roce):
    page_upload(technician, name="nv.txt", host="leaf-01", text=fixture_text(NVUE_PORT))
    upload = uploaded()
    client = client_for(outsider)
    for name, args in [("create", []), ("detail", [upload.pk]), ("file", [upload.pk])]:
        assert client.get(reverse(f"uploads:{name}", args=["ACME-72", *args])).status_code == 404, name
    payload = {"project": "ACME-72", "host": "leaf-01", "text": fixture_text(NVUE_PORT), "tool": "nvue_qos"}
    assert node_api(outsider).post_committed("/api/uploads/", payload).status_code == 404
    assert node_api(customer).post_committed("/api/uploads/", payload).status_code == 403
    assert page_upload(customer, name="nv.txt", host="leaf-01", text=fixture_text(NVUE_PORT)).status_code == 403
    assert ToolUpload.objects.count() == 1
