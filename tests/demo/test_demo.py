"""seed_demo builds the reference cluster of DOMAIN.md (its switches and cables from the fabric planner,
through plan_apply of examples/demo-72.yaml), the demo users, an isolated second project, and running
it again changes nothing. The README's figures of the demo are the demo's own."""

import re
from io import StringIO
from pathlib import Path
from unittest import mock

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.db.models import Count, Q
from django.urls import reverse

from cabling.choices import (
    PHYSICAL_CABLE_STATUSES,
    CableStatus,
    FabricPlanSource,
    ScanAction,
    ScanResult,
    ScanSource,
    Side,
)
from cabling.models import Cable, CableEnd, FabricPlan, ScanEvent
from core.choices import JobStatus
from delivery.choices import ReportState
from delivery.models import ReportVersion
from demo.build import (
    DEMO_CODE,
    DEMO_CUSTOMER_NAME_ZH,
    DEMO_NAME_ZH,
    DEMO_PASSWORD,
    FLOOR_TECHNICIAN,
    INSTALLED_CABLES_OF,
    LAB_CODE,
    OVER_BUDGET_RACK,
    RACKED_BY_SCAN,
    REPORT_MANAGER,
    VERIFIED_BY_SCAN,
    demo_plan,
    floor_scans,
)
from inventory.choices import DeviceRole, DeviceStatus, HardwareKind, Network, OpticStatus, PortKind
from inventory.models import Device, Optic, Port, Rack
from inventory.selectors import device_list, is_power_flagged, optic_list, rack_list, with_power
from projects.access import visible_projects
from projects.choices import Role
from projects.models import Membership, Project
from validation.models import CheckRun

pytestmark = pytest.mark.django_db

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.fixture
def demo_output(demo_db):
    """What seed_demo printed when it built the demo (once per test run: tests/demo/demo_db.py)."""
    return demo_db


@pytest.fixture
def demo(demo_db):
    return Project.objects.get(code=DEMO_CODE)


@pytest.fixture
def lab(demo_db):
    return Project.objects.get(code=LAB_CODE)


def _row_counts() -> dict[str, int]:
    """Rows of every model with a table, history and auth tables included (a model whose migration
    is still missing is another test's business)."""
    tables = set(connection.introspection.table_names())
    models = [m for m in apps.get_models(include_auto_created=True) if m._meta.db_table in tables]
    return {model._meta.label: model._default_manager.count() for model in models}


def test_second_run_changes_no_row_of_any_model(demo):
    before = _row_counts()
    out = StringIO()
    call_command("seed_demo", stdout=out)
    assert _row_counts() == before
    assert "nothing to do" in out.getvalue()
    assert before["inventory.Device"] > 0 and before["inventory.HistoricalOptic"] > 0


def test_72_gpu_servers_with_8_nics_and_32_plane_lanes_each(demo):
    servers = (
        Device.objects.filter(project=demo, hardware_model__kind=HardwareKind.GPU_SERVER)
        .annotate(
            cx8=Count("nics", filter=Q(nics__model__startswith="ConnectX-8"), distinct=True),
            lanes=Count(
                "ports", filter=Q(ports__network=Network.COMPUTE, ports__parent__isnull=False), distinct=True
            ),
        )
        .order_by("name")
    )
    assert [s.name for s in servers] == [f"gpu-{n:03d}" for n in range(1, 73)]
    assert {(s.cx8, s.lanes) for s in servers} == {(8, 32)}
    lanes = Port.objects.filter(device__project=demo, device__name="gpu-017", parent__isnull=False,
                                network=Network.COMPUTE)
    assert {(lane.lane, lane.plane, lane.speed_gbps) for lane in lanes} == {(k, k, 200) for k in range(4)}
    physical = Port.objects.filter(device__project=demo, device__name="gpu-017", parent__isnull=True)
    networks = set(physical.values_list("network", "speed_gbps"))
    expected = {(Network.COMPUTE, 800), (Network.STORAGE, 400), (Network.INBAND, 100), (Network.OOB, 1)}
    assert networks == expected


def test_12_xdr_switches_of_144_ports_with_4_plane_lanes_each(demo):
    # A switch's ports have no network of their own in the shipped catalogue: the cables say which they carry.
    infiniband = Q(ports__kind=PortKind.INFINIBAND)
    switches = Device.objects.filter(project=demo, hardware_model__kind=HardwareKind.IB_SWITCH).annotate(
        xdr=Count("ports", filter=infiniband & Q(ports__speed_gbps=800)),
        lanes=Count("ports", filter=infiniband & Q(ports__parent__isnull=False)),
    )
    assert sorted(s.name for s in switches) == [f"ib-leaf-{i:02d}" for i in range(1, 9)] + [
        f"ib-spine-{i:02d}" for i in range(1, 5)
    ]
    assert {(s.xdr, s.lanes) for s in switches} == {(144, 576)}
    lanes = Port.objects.filter(device__project=demo, device__name="ib-spine-04", parent__isnull=False)
    assert set(lanes.values_list("lane", "plane", "speed_gbps")) == {(k, k, 200) for k in range(4)}


def test_every_switch_is_the_planners_racked_powered_and_commissioned(demo):
    planned = {s.name: s for s in demo_plan().switches}
    switches = Device.objects.filter(project=demo, role__in=[DeviceRole.LEAF, DeviceRole.SPINE]).select_related(
        "rack", "hardware_model"
    )
    assert {s.name for s in switches} == set(planned) and len(planned) == 12 + 5 + 5 + 4
    for switch in switches:
        plan = planned[switch.name]
        assert (switch.rack.name, switch.position_u, switch.hardware_model.part_number) == (
            plan.rack, plan.position_u, plan.model,
        )
        assert switch.status == DeviceStatus.POWERED and switch.serial and switch.oob_address


def test_the_demo_plan_is_recorded(demo):
    row = FabricPlan.objects.get(project=demo)
    assert (row.status, row.source, row.name) == (JobStatus.DONE, FabricPlanSource.DEMO, "demo-72")
    assert row.summary["cables"] == 1711 and row.diff["counts"]["cables_added"] == 1711


def test_1152_compute_cables_and_the_storage_inband_and_oob_cables(demo):
    by_network = dict(Cable.objects.filter(project=demo).values_list("network").annotate(n=Count("id")))
    assert by_network == {Network.COMPUTE: 1152, Network.STORAGE: 312, Network.INBAND: 144, Network.OOB: 103}
    assert by_network == demo_plan().summary()["cables_by_network"]
    ends = CableEnd.objects.filter(cable__project=demo)
    assert ends.values("port").distinct().count() == ends.count()
    storage = ends.filter(cable__network=Network.STORAGE, port__device__name="storage-06")
    assert sorted(storage.values_list("port__name", flat=True)) == ["stor0", "stor1"]
    oob = ends.filter(cable__network=Network.OOB, side=Side.A)
    assert oob.filter(port__device__name="ib-spine-04", port__name="mgmt0").exists()
    assert oob.filter(port__device__name="gpu-072", port__name="bmc0").exists()


def test_every_gpu_lane_of_the_compute_network_reaches_a_leaf_lane_of_the_same_plane(demo):
    lanes = Port.objects.filter(device__project=demo, kind=PortKind.INFINIBAND, parent__isnull=False)
    planes: dict[int, dict[int, int]] = {}  # physical port -> lane -> plane
    for parent_id, lane, plane in lanes.values_list("parent_id", "lane", "plane"):
        planes.setdefault(parent_id, {})[lane] = plane
    ends = CableEnd.objects.filter(cable__project=demo, cable__network=Network.COMPUTE).values_list(
        "cable_id", "port_id", "port__device__role"
    )
    cable_ends: dict[int, dict[str, int]] = {}
    for cable_id, port_id, role in ends:
        cable_ends.setdefault(cable_id, {})[role] = port_id
    node_to_leaf = {e[DeviceRole.GPU_NODE]: e[DeviceRole.LEAF] for e in cable_ends.values() if DeviceRole.GPU_NODE in e}
    gpu_ports = set(
        Port.objects.filter(device__project=demo, device__role=DeviceRole.GPU_NODE, network=Network.COMPUTE,
                            parent__isnull=True).values_list("id", flat=True)
    )
    assert len(gpu_ports) == 576 and set(node_to_leaf) == gpu_ports
    for node_port, leaf_port in node_to_leaf.items():
        assert planes[node_port] == planes[leaf_port] == {0: 0, 1: 1, 2: 2, 3: 3}


def test_storage_servers_and_storage_switches(demo):
    storage = Device.objects.filter(project=demo, hardware_model__kind=HardwareKind.STORAGE_SERVER)
    assert sorted(storage.values_list("rack__name", flat=True)) == ["S01"] * 3 + ["S02"] * 3
    sn5610 = Device.objects.filter(project=demo, hardware_model__part_number="SN5610")
    assert sn5610.count() == 3 + 2  # 156 server ports at 64 down per leaf: 3 leaves, 2 spines
    lanes = Port.objects.filter(device__in=sn5610, parent__isnull=False)
    assert lanes.count() == 5 * 64 * 2 and set(lanes.values_list("speed_gbps", flat=True)) == {400}


def test_exactly_one_rack_breaks_the_headroom_rule(demo, lab):
    racks = with_power(Rack.objects.all())
    flagged = [r for r in racks if is_power_flagged(used_w=r.power_used_w, budget_w=r.power_budget_w)]
    assert [(r.project.code, r.name) for r in flagged] == [(DEMO_CODE, OVER_BUDGET_RACK)]
    assert all(r.device_count for r in racks)


def test_optics_in_stock_cover_the_plans_bill_of_materials_and_a_few_are_installed_with_dom(demo):
    needed: dict[str, int] = {}
    for line in demo_plan().bom:
        if line.category == "optic":
            needed[line.item] = needed.get(line.item, 0) + line.count
    # One transceiver per cage: 576 node ports, and 864 twin-port OSFPs for 1,728 switch ports.
    assert needed["OSFP-800G-XDR-NODE"] == 576 and needed["OSFP-800G-XDR-TWIN"] == 12 * 72
    stock = dict(Optic.objects.filter(project=demo).values_list("part_number").annotate(n=Count("id")))
    assert set(stock) == set(needed) and all(stock[part] > n for part, n in needed.items())
    fabric = Optic.objects.filter(project=demo, part_number__contains="XDR")
    assert fabric.values("serial").distinct().count() == fabric.count()
    installed = Optic.objects.filter(project=demo, status=OpticStatus.INSTALLED)
    installed = installed.select_related("port__device")
    assert 0 < installed.count() < 50
    for optic in installed:
        assert optic.port.device.project_id == demo.pk
        assert optic.dom_temperature_c and len(optic.dom_rx_power_dbm) == 8 and optic.dom_read_at
    # The cables between those optics are on the floor (installed, a few verified by the technician's
    # scans); both their ends hold one.
    installed = gpu_001_cables(demo)
    assert installed.count() == 8
    assert all(end.port.optic for cable in installed for end in cable.ends.select_related("port__optic"))


def gpu_001_cables(project):
    """The compute cables of INSTALLED_CABLES_OF that are physically in place (installed, verified or faulty)."""
    return Cable.objects.filter(project=project, network=Network.COMPUTE, status__in=PHYSICAL_CABLE_STATUSES,
                                ends__port__device__name=INSTALLED_CABLES_OF)


def test_the_technicians_walk_is_scans_through_the_one_scan_service(demo):
    """The demo verifies cables and racks servers only by scanning (cabling.services.scan_record), as a
    technician would: each verified cable has an accepted scan of every end behind it, and one scan was
    refused on the way with the reason a technician reads."""
    technician = get_user_model().objects.get(username=FLOOR_TECHNICIAN)
    scans = list(ScanEvent.objects.filter(project=demo).select_related("cable", "device").order_by("id"))
    assert len(scans) == len(RACKED_BY_SCAN) + 2 * VERIFIED_BY_SCAN + 1
    assert {(s.user, s.source) for s in scans} == {(technician, ScanSource.PAGE)}
    racked = [s for s in scans if s.action == ScanAction.RACK]
    assert [(s.device.name, s.result) for s in racked] == [(name, ScanResult.ACCEPTED) for name in RACKED_BY_SCAN]
    for device in Device.objects.filter(project=demo, name__in=RACKED_BY_SCAN):
        assert (device.status, device.racked_by) == (DeviceStatus.RACKED, technician)
    verified = Cable.objects.filter(project=demo, verified_at__isnull=False)
    assert verified.count() == VERIFIED_BY_SCAN
    for cable in verified:
        assert (cable.status, cable.verified_by) == (CableStatus.VERIFIED, technician)
        ends = set(cable.ends.values_list("pk", flat=True))
        accepted = {s.cable_end_id for s in scans if s.cable_id == cable.pk and s.result == ScanResult.ACCEPTED}
        assert accepted == ends and cable.status_cause.startswith("Verified by scan")
    refused = [s for s in scans if s.result == ScanResult.REFUSED]
    assert len(refused) == 1
    assert re.fullmatch(r"C\d+/B belongs in ib-leaf-\d\d port p1; you are at ib-leaf-\d\d port p2\.",
                        refused[0].reason), refused[0].reason
    assert refused[0].cable.verified_at is None and not refused[0].cable.ends.filter(side="B",
                                                                                     confirmed_at__isnull=False)
    # Every scan is kept under its key: a second seed_demo finds them and scans nothing again
    # (test_second_run_changes_no_row_of_any_model checks no row at all is added).
    assert {s.idempotency_key for s in scans} == {scan.key for scan in floor_scans(demo)}


def test_what_is_missing_of_the_demo_is_made_again_through_the_services(demo):
    """A switch never commissioned and cables never installed are commissioned and installed by the next
    seed_demo, through inventory's device_update and cabling's cable_status_set (the checks and history
    those write), not by bulk updates around them."""
    from demo import build as demo_module

    leaf = Device.objects.get(project=demo, name="ib-leaf-01")
    Device.objects.filter(pk=leaf.pk).update(serial="", oob_address="", status=DeviceStatus.PLANNED)
    installed = Cable.objects.filter(project=demo, status=CableStatus.INSTALLED)
    cable_ids = set(installed.values_list("id", flat=True))
    installed.update(status=CableStatus.PLANNED)
    with (
        mock.patch.object(demo_module, "device_update", wraps=demo_module.device_update) as device_update,
        mock.patch.object(demo_module, "cable_status_set", wraps=demo_module.cable_status_set) as cable_status_set,
    ):
        call_command("seed_demo", "--no-check-runs", stdout=StringIO())
    assert [call.kwargs["device"].pk for call in device_update.call_args_list] == [leaf.pk]
    assert cable_status_set.call_args.kwargs["status"] == CableStatus.INSTALLED
    leaf.refresh_from_db()
    assert (leaf.status, leaf.serial) == (DeviceStatus.POWERED, "Q3400X00001")
    assert leaf.history.latest().status == DeviceStatus.POWERED
    assert set(Cable.objects.filter(status=CableStatus.INSTALLED).values_list("id", flat=True)) == cable_ids


def test_users_have_their_roles_and_the_printed_password(demo, lab, demo_output):
    memberships = Membership.objects.select_related("user", "project")
    roles = {(m.user.username, m.project.code): m.role for m in memberships}
    assert roles == {
        ("manager", DEMO_CODE): Role.MANAGER,
        ("technician", DEMO_CODE): Role.TECHNICIAN,
        ("customer", DEMO_CODE): Role.CUSTOMER,
        ("other-customer", LAB_CODE): Role.CUSTOMER,
    }
    admin = get_user_model().objects.get(username="admin")
    assert admin.is_staff and admin.is_superuser
    assert admin.check_password(DEMO_PASSWORD)
    for username in ("manager", "technician", "customer", "other-customer", "admin"):
        assert f"{username} " in demo_output
    assert DEMO_PASSWORD in demo_output


def test_lab_customer_sees_nothing_of_demo72(demo, lab, client):
    other = get_user_model().objects.get(username="other-customer")
    assert list(visible_projects(other)) == [lab]
    assert set(device_list(user=other).values_list("project_id", flat=True)) == {lab.pk}
    assert set(rack_list(user=other).values_list("project_id", flat=True)) == {lab.pk}
    assert set(optic_list(user=other).values_list("project_id", flat=True)) == {lab.pk}
    client.force_login(other)
    assert client.get(reverse("delivery:project-home", args=[DEMO_CODE])).status_code == 404
    body = client.get(reverse("delivery:project-list")).content.decode()
    assert LAB_CODE in body and DEMO_CODE not in body


def test_the_two_projects_share_no_site_rack_or_serial(demo, lab):
    assert not set(demo.sites.values_list("pk", flat=True)) & set(lab.sites.values_list("pk", flat=True))
    demo_serials = set(Optic.objects.filter(project=demo).values_list("serial", flat=True))
    assert not demo_serials & set(Optic.objects.filter(project=lab).values_list("serial", flat=True))
    assert Device.objects.filter(project=lab, rack__project=demo).count() == 0
    assert Device.objects.filter(project=lab).count() == 8 + 2  # servers and the rack's two PDUs


def test_the_demo_shows_finished_check_runs_that_flag_only_the_planted_faults(demo):
    from demo.checks import DEMO_KINDS, DEMO_SEED
    from validation.choices import CheckKind, Verdict
    from validation.models import CheckRun
    from validation.runners import plan_faults
    from validation.services import sim_cluster_for

    # The system's runs (the manager's cabling start queued a comparison of its own, which the demo cancels:
    # tests/demo/test_demo_stages.py).
    runs = {run.kind: run for run in CheckRun.objects.filter(project=demo, requested_by=None)}
    assert set(runs) == {*DEMO_KINDS, CheckKind.TOPOLOGY}  # the topology run: tests/validation/test_topology_demo.py
    assert all(run.status == JobStatus.DONE for run in runs.values())
    faults = plan_faults(sim_cluster_for(demo), DEMO_SEED)
    flagged = {
        run.kind: {r.device.name for r in run.results.exclude(verdict=Verdict.PASS).select_related("device")}
        for run in runs.values()
    }
    planted_link_nodes = {faults.dirty_fiber[0], faults.hot_optic[0]}
    assert flagged["link_health"] == planted_link_nodes
    assert faults.slow_gpu_rdma_node in flagged["bw_matrix"]


def test_the_demo_cut_sheet_label_sheet_and_fabric_view(demo, client):
    """The outputs people use, produced for the demo and read back from the files."""
    import shutil
    import subprocess
    from io import BytesIO

    from openpyxl import load_workbook

    from cabling.exports.fabric_svg import fabric_views

    client.force_login(get_user_model().objects.get(username="customer"))  # read-only role downloads too
    cutsheet = client.get(reverse("cabling:cutsheet", args=[demo.code]))
    assert cutsheet.status_code == 200
    sheet = load_workbook(BytesIO(cutsheet.content), read_only=True)["Cables"]
    rows = list(sheet.iter_rows(values_only=True))
    header, body = rows[0], rows[1:]
    assert len(body) == Cable.objects.filter(project=demo).count()
    cable = Cable.objects.filter(project=demo, network=Network.COMPUTE).order_by("label").first()
    row = dict(zip(header, next(r for r in body if r[header.index("Label")] == cable.label), strict=True))
    a_end = cable.ends.select_related("port__device").get(side=Side.A)
    assert (row["A device"], row["A port"]) == (a_end.port.device.name, a_end.port.name)

    compute = [v for v in fabric_views(user=demo.memberships.get(role=Role.MANAGER).user, project=demo)
               if v.network == Network.COMPUTE]
    assert [dict(v.tier_counts) for v in compute] == [{"node": 72, "leaf": 8, "spine": 4}]
    assert compute[0].total_links == 1152

    rack = a_end.port.device.rack.name
    labels = client.get(reverse("cabling:labels", args=[demo.code]), {"rack": rack})
    assert labels.status_code == 200 and labels.content.startswith(b"%PDF")
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-", "-"], input=labels.content, capture_output=True, check=True).stdout
        assert cable.label in text.decode()


# --- the acceptance report ------------------------------------------------------------------------------


def test_the_demo_project_has_its_chinese_names_for_the_bilingual_report(demo, lab):
    assert (demo.name_zh, demo.customer_name_zh) == (DEMO_NAME_ZH, DEMO_CUSTOMER_NAME_ZH)
    assert (lab.name_zh, lab.customer_name_zh) == ("", "")


def test_a_demo_made_before_the_chinese_names_gets_them_once(demo):
    """A database seeded before projects had Chinese names gets them from the next seed_demo; a name someone
    set since is kept."""
    Project.objects.filter(pk=demo.pk).update(name_zh="", customer_name_zh="客户自定")
    out = StringIO()
    call_command("seed_demo", "--no-check-runs", stdout=out)
    demo.refresh_from_db()
    assert (demo.name_zh, demo.customer_name_zh) == (DEMO_NAME_ZH, "客户自定")
    assert "1 Chinese project names" in out.getvalue()
    assert demo.history.latest().name_zh == DEMO_NAME_ZH


def _demo_media_root(tmp_path_factory) -> Path:
    """Where the demo build stored its files (tests/demo/demo_db.py's "demo-media" folder): each test has
    a fresh media root of its own (tests/conftest.py), which holds none of them."""
    found = sorted(tmp_path_factory.getbasetemp().glob("demo-media*"))
    assert found, "the demo's media folder was not found"
    return found[-1]


def test_the_demo_ends_with_version_1_of_its_report_rendered_for_a_newcomer_to_download(
        demo, lab, demo_output, client_for, settings, tmp_path_factory):
    """seed_demo asks for the report last, as the demo manager through the reports page's service, and the
    (eager) task renders it at once: the customer downloads the full PDF and the workbook straight away, and
    their bytes are the ones recorded."""
    import hashlib

    version = ReportVersion.objects.select_related("requested_by").get(project=demo)
    assert (version.number, version.status, version.requested_by.username) == (1, JobStatus.DONE, REPORT_MANAGER)
    assert not ReportVersion.objects.filter(project=lab).exists()
    # The report froze the demo's check runs and comparison: it was asked for after them.
    runs = CheckRun.objects.filter(project=demo)
    assert version.generated_at > max(run.finished_at for run in runs)
    assert version.figures["pass"] > 0 and version.figures["fail"] > 0  # the planted faults
    size = r"[\d.]+\s[KM]?B"  # filesizeformat's, with its non-breaking space
    printed = re.search(rf"DEMO-72: acceptance report v1 rendered \(Full PDF {size}, Summary PDF {size}, "
                        rf"Excel workbook {size}\) in [\d.]+ s: /p/DEMO-72/reports/v1/", demo_output)
    assert printed, demo_output
    settings.MEDIA_ROOT = _demo_media_root(tmp_path_factory)
    client = client_for(get_user_model().objects.get(username="customer"))
    for kind, magic in (("pdf", b"%PDF"), ("xlsx", b"PK")):
        response = client.get(reverse("reports:file", args=[DEMO_CODE, 1, kind]))
        data = b"".join(response.streaming_content)
        assert data.startswith(magic) and hashlib.sha256(data).hexdigest() == version.sha256_of(kind)
    assert "Version 1" in client.get(reverse("reports:list", args=[DEMO_CODE])).content.decode()
    # Mid-delivery its gates do not pass: version 1 is a draft the customer reads but cannot sign, and the
    # manager's page says what holds issuing back, stage by stage.
    assert version.state == ReportState.DRAFT
    page = client.get(reverse("reports:version", args=[DEMO_CODE, 1])).content.decode()
    assert "Version 1 is a draft, not issued for acceptance" in page and 'id="sign-form"' not in page
    page = client_for(get_user_model().objects.get(username=REPORT_MANAGER)).get(
        reverse("reports:version", args=[DEMO_CODE, 1])).content.decode()
    assert 'id="issue-refused"' in page and "Version 1 cannot be issued for acceptance yet" in page
    assert "Cabling: " in page and 'id="issue-form"' not in page


# --- the README's figures are the demo's ----------------------------------------------------------------


def _devices(project, **lookups):
    return Device.objects.filter(project=project, **lookups)


def _switches(project, **lookups):
    return _devices(project, role__in=[DeviceRole.LEAF, DeviceRole.SPINE, DeviceRole.SUPER_SPINE], **lookups)


def devices(**lookups):
    return lambda project: _devices(project, **lookups).count()


def switches(**lookups):
    return lambda project: _switches(project, **lookups).count()


def cables(**lookups):
    return lambda project: Cable.objects.filter(project=project, **lookups).count()


def optics(**lookups):
    return lambda project: Optic.objects.filter(project=project, **lookups).count()


def racks(project):
    return Rack.objects.filter(project=project).count()


# Each figure the README's demo paragraphs state, the pattern that finds it there, and how to count it in
# the built demo. A figure that goes missing from the README fails too: change the pattern with the text.
XDR = {"hardware_model__kind": HardwareKind.IB_SWITCH}
README_FIGURES = {
    "racks": (r"in ([\d,]+) racks", racks),
    "GPU servers": (r"([\d,]+) GPU servers", devices(hardware_model__kind=HardwareKind.GPU_SERVER)),
    "storage servers": (r"([\d,]+) storage servers", devices(hardware_model__kind=HardwareKind.STORAGE_SERVER)),
    "switches": (r"([\d,]+) switches, all from the fabric planner", switches()),
    "XDR switches": (r"([\d,]+) Quantum-X800", switches(**XDR)),
    "XDR leaves": (r"([\d,]+) leaves", switches(**XDR, role=DeviceRole.LEAF)),
    "XDR spines": (r"([\d,]+) spines", switches(**XDR, role=DeviceRole.SPINE)),
    "storage switches": (r"([\d,]+) SN5610", switches(hardware_model__model__contains="SN5610")),
    "in-band switches": (r"([\d,]+) SN4600C", switches(hardware_model__model__contains="SN4600C")),
    "out-of-band switches": (r"([\d,]+) out-of-band switches", switches(hardware_model__kind=HardwareKind.MGMT_SWITCH)),
    "cables": (r"([\d,]+) cables \(", cables()),
    "compute cables": (r"cables \(([\d,]+) compute", cables(network=Network.COMPUTE)),
    "storage cables": (r"([\d,]+) storage, ", cables(network=Network.STORAGE)),
    "in-band cables": (r"([\d,]+) in-band, ", cables(network=Network.INBAND)),
    "out-of-band cables": (r"([\d,]+) out-of-band;", cables(network=Network.OOB)),
    "installed cables": (r"the ([\d,]+) of gpu-001 installed", lambda project: gpu_001_cables(project).count()),
    "optics": (r"([\d,]+) optics \(", optics()),
    "optics in stock": (r"([\d,]+) in stock", optics(status=OpticStatus.IN_STOCK)),
    "optics installed": (r"([\d,]+) installed with DOM readings", optics(status=OpticStatus.INSTALLED)),
}
LAB_FIGURES = {
    "servers": (r"\(([\d,]+) servers", devices(hardware_model__kind=HardwareKind.GPU_SERVER)),
    "racks": (r"([\d,]+) racks?\)", racks),
}


def readme_paragraph(code: str) -> str:
    """The README's list item about the demo project `code` (`- **DEMO-72**, ...` up to the next item)."""
    text = README.read_text(encoding="utf-8")
    found = re.search(rf"^- \*\*{re.escape(code)}\*\*(.*?)(?=^- |^\s*$)", text, flags=re.MULTILINE | re.DOTALL)
    assert found, f"README.md has no '- **{code}**' item in its demo section"
    return " ".join(found.group(0).split())


def stated_figures(paragraph: str, figures: dict) -> dict[str, int]:
    stated = {}
    for name, (pattern, _) in figures.items():
        found = re.search(pattern, paragraph)
        assert found, f"README.md no longer states the {name} of the demo (pattern {pattern!r}): {paragraph}"
        stated[name] = int(found.group(1).replace(",", ""))
    return stated


@pytest.mark.parametrize(("code", "figures"), [(DEMO_CODE, README_FIGURES), (LAB_CODE, LAB_FIGURES)])
def test_the_readme_states_the_demos_own_figures(demo_db, code, figures):
    project = Project.objects.get(code=code)
    stated = stated_figures(readme_paragraph(code), figures)
    built = {name: count(project) for name, (_, count) in figures.items()}
    assert stated == built, "README.md's demo paragraph differs from the demo seed_demo builds"


def test_the_readme_figures_are_read_where_they_stand():
    """The patterns read each figure from its own phrase (guards the test above against reading, say, the
    storage servers where the storage cables stand)."""
    paragraph = (
        "- **DEMO-72**, modelled on a cluster: 70 GPU servers and 5 storage servers in 20 racks; 21 switches, "
        "all from the fabric planner: 10 Quantum-X800 switches (6 leaves and 3 spines), 4 SN5610 storage "
        "switches, 3 SN4600C in-band switches and 2 out-of-band switches; 1,234 cables (1,000 compute, 100 "
        "storage, 90 in-band, 44 out-of-band; the 7 of gpu-001 installed); 2,000 optics (1,990 in stock, 10 "
        "installed with DOM readings)."
    )
    assert stated_figures(paragraph, README_FIGURES) == {
        "racks": 20, "GPU servers": 70, "storage servers": 5, "switches": 21, "XDR switches": 10,
        "XDR leaves": 6, "XDR spines": 3, "storage switches": 4, "in-band switches": 3,
        "out-of-band switches": 2, "cables": 1234, "compute cables": 1000, "storage cables": 100,
        "in-band cables": 90, "out-of-band cables": 44, "installed cables": 7, "optics": 2000,
        "optics in stock": 1990, "optics installed": 10,
    }


def test_the_demos_manager_may_create_projects(demo, client_for):
    """The issue: the demo's `manager` got 403 on /projects/new/. Managers who start deliveries are granted the
    capability; the demo's is."""
    from django.contrib.auth import get_user_model

    manager = get_user_model().objects.get(username="manager")
    assert client_for(manager).get(reverse("delivery:project-create")).status_code == 200
    technician = get_user_model().objects.get(username="technician")
    assert client_for(technician).get(reverse("delivery:project-create")).status_code == 403
