"""plan_apply writes a plan to a project: reference fabric 1 gives 12 switches, 1,152 compute cables with
unique ports and planes on every lane; applying twice changes nothing; a failing apply (unknown part
number, a port already taken, missing lanes) leaves the database exactly as it was.

Helpers here (the catalogue the reference specs need, small specs) are shared with test_replan.py,
test_plan_pages.py and test_plan_api.py."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Count

from cabling.choices import CableStatus, CableType, Side
from cabling.models import Cable, CableEnd, FabricPlan
from cabling.services import PlanNotApplied, fabric_plan_apply_now, plan_apply, plan_diff, plan_of
from core.choices import JobStatus
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, DeviceUnit, HardwareModel, Port, PortTemplate, Rack
from inventory.services import device_create
from projects.choices import Role
from tests.factories import MembershipFactory, ProjectFactory, RackFactory, UserFactory, gpu_server_model

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


# --- helpers shared by the plan test modules ----------------------------------------------------------


def switch_model(
    part: str, *, radix: int = 144, speed: int = 800, lanes: int = 4, lane_speed: int | None = 200,
    planes_per_lane: bool = True, height_u: int = 4, prefix: str = "p", network: str = Network.COMPUTE,
    kind: str = HardwareKind.IB_SWITCH,
) -> HardwareModel:
    """A switch of the catalogue: `radix` data ports (each with `lanes` lanes) and a mgmt0 port."""
    model, created = HardwareModel.objects.get_or_create(
        part_number=part,
        defaults=dict(vendor="Example", model=part, kind=kind, height_u=height_u, max_power_w=2000),
    )
    if created:
        templates = [
            PortTemplate(hardware_model=model, name=f"{prefix}{i}", kind=PortKind.INFINIBAND, speed_gbps=speed,
                         network=network, breakout_lanes=lanes, lane_speed_gbps=lane_speed if lanes > 1 else None,
                         planes_per_lane=planes_per_lane and lanes > 1)
            for i in range(1, radix + 1)
        ]
        templates.append(PortTemplate(hardware_model=model, name="mgmt0", kind=PortKind.BMC, speed_gbps=1,
                                      network=Network.OOB))
        PortTemplate.objects.bulk_create(templates)
    return model


def fabric72_catalogue() -> None:
    """What examples/fabric-72.yaml names: B300 servers with 8 x 800G XDR ports of 4 plane lanes, and
    Q3400-RA switches whose 144 ports have 4 x 200G plane lanes too."""
    gpu_server_model(part_number="B300-8GPU")
    switch_model("Q3400-RA")


def fabric72_text() -> str:
    return (EXAMPLES / "fabric-72.yaml").read_text()


def small_spec(
    servers: int = 8, *, unit: int | None = None, switch: str = "Q3400-RA", server_model: str = "B300-8GPU",
    **network,
) -> str:
    """Fabric 1 in miniature: `servers` B300s, 4 planes sharing the XDR switches, one scalable unit."""
    data = yaml.safe_load(fabric72_text())
    data["name"] = f"mini-{servers}"
    data["servers"][0]["count"] = servers
    data["servers"][0]["model"] = server_model
    data["switch_models"] = {switch: data["switch_models"]["Q3400-RA"]}
    data["networks"]["compute"]["scalable_unit"] = unit or servers
    data["networks"]["compute"]["switch"] = switch
    data["networks"]["compute"].update(network)
    return yaml.safe_dump(data, sort_keys=False)


def snapshot(project) -> dict[str, int]:
    """Rows of every model with a table (history included): a refused apply must leave all of them."""
    tables = set(connection.introspection.table_names())
    models = [m for m in apps.get_models() if m._meta.db_table in tables]
    return {m._meta.label: m._default_manager.count() for m in models}


# --- fabric 1 ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def applied72(django_db_setup, django_db_blocker):
    """Fabric 1 applied once for the module, in a transaction rolled back at the end (each test's own
    transaction nests in it as a savepoint)."""
    with django_db_blocker.unblock(), transaction.atomic():
        project = ProjectFactory(code="F72-APPLY")
        user = UserFactory(username="f72-manager")
        MembershipFactory(user=user, project=project, role=Role.MANAGER)
        fabric72_catalogue()
        result = plan_apply(project=project, spec_text=fabric72_text(), user=user)
        yield SimpleNamespace(project=project, user=user, result=result)
        transaction.set_rollback(True)


@pytest.fixture
def fabric72(applied72):
    return applied72.result


@pytest.fixture
def f72(applied72):
    return applied72.project


def test_fabric_1_gives_12_switches_and_1152_compute_cables(f72, fabric72):
    project = f72
    switches = Device.objects.filter(project=project, role__in=[DeviceRole.LEAF, DeviceRole.SPINE])
    assert switches.count() == 12
    assert Counter(switches.values_list("role", flat=True)) == {DeviceRole.LEAF: 8, DeviceRole.SPINE: 4}
    assert set(switches.values_list("hardware_model__part_number", flat=True)) == {"Q3400-RA"}
    assert Device.objects.filter(project=project, role=DeviceRole.GPU_NODE).count() == 72
    cables = Cable.objects.filter(project=project)
    assert cables.count() == 1152 and set(cables.values_list("network", flat=True)) == {Network.COMPUTE}
    assert CableEnd.objects.filter(cable__project=project).count() == 2304
    assert set(cables.annotate(n=Count("ends")).values_list("n", flat=True)) == {2}
    assert fabric72.diff.counts()["cables_added"] == 1152
    assert Rack.objects.filter(project=project).count() == 20


def test_each_end_on_its_own_port_and_the_plan_recorded_on_the_cable(f72, fabric72):
    project = f72
    ends = CableEnd.objects.filter(cable__project=project)
    assert ends.values("port").distinct().count() == ends.count()
    first = Cable.objects.get(project=project, label="C00001")
    planned = next(c for c in fabric72.plan.cables if c.label == "C00001")
    a, b = first.ends.select_related("port__device").order_by("side")
    assert (a.side, a.port.device.name, a.port.name) == (Side.A, "gpu-001", "ib0")
    assert (b.side, b.port.device.name, b.port.name) == (Side.B, "ib-leaf-01", "p1")
    assert first.cable_type == CableType.FIBER and float(first.length_m) == planned.length_m
    assert (first.optic_part_a, first.optic_part_b) == ("OSFP-800G-DR4", "OSFP-1.6T-2xDR4")
    assert first.plane is None  # one cable carries the four planes
    assert first.speed_gbps == 800 and first.status == CableStatus.PLANNED
    labels = set(Cable.objects.filter(project=project).values_list("label", flat=True))
    assert labels == {c.label for c in fabric72.plan.cables}


def test_planes_are_on_every_lane_at_both_ends(f72, fabric72):
    project = f72
    lanes = Port.objects.filter(device__project=project, parent__isnull=False, network=Network.COMPUTE)
    assert lanes.count() == 72 * 8 * 4 + 12 * 144 * 4
    assert not lanes.filter(plane__isnull=True).exists()
    assert all(lane == plane for lane, plane in lanes.values_list("lane", "plane").distinct())
    # Every cabled port's lane k is plane k at both ends of its cable.
    ends = CableEnd.objects.filter(cable__project=project).values_list("cable_id", "port_id")
    by_cable: dict[int, list[int]] = {}
    for cable_id, port_id in ends:
        by_cable.setdefault(cable_id, []).append(port_id)
    planes = {}
    for parent_id, lane, plane in lanes.values_list("parent_id", "lane", "plane"):
        planes.setdefault(parent_id, {})[lane] = plane
    for a, b in by_cable.values():
        assert planes[a] == planes[b] == {0: 0, 1: 1, 2: 2, 3: 3}


def test_switches_stand_in_the_network_racks_with_their_units_claimed(f72, fabric72):
    project = f72
    leaf = Device.objects.select_related("rack").get(project=project, name="ib-leaf-01")
    assert (leaf.rack.name, leaf.position_u) == ("N01", 2)
    assert DeviceUnit.objects.filter(device=leaf).count() == 4 * 2  # 4U, front and rear
    assert Port.objects.filter(device=leaf, parent__isnull=True).count() == 145  # 144 + mgmt0


def test_the_cut_sheet_bom_counts_optics_per_cage_as_the_planner_does(f72):
    """Twin-port switch cages hold one transceiver for two ports: the cut sheet read back from the applied
    rows must count what the planner's bill of materials counts, not one per cable end."""
    from io import BytesIO

    from openpyxl import load_workbook

    from cabling.exports.cutsheet import cutsheet_xlsx
    from cabling.planner import plan
    from cabling.planner.spec import load_spec_text

    planned = Counter()
    for line in plan(load_spec_text(fabric72_text())).bom:
        if line.category == "optic":
            planned[line.item] += line.count
    book = load_workbook(BytesIO(cutsheet_xlsx(Cable.objects.filter(project=f72))), read_only=True)
    rows = [r for r in book["BOM"].iter_rows(values_only=True)]
    start = next(i for i, r in enumerate(rows) if r and r[0] == "Optics") + 2  # past the section and column titles
    end = next((i for i in range(start, len(rows)) if not any(rows[i])), len(rows))
    from_sheet = Counter({part: count for part, count, *_ in rows[start:end]})
    assert from_sheet == planned
    assert sum(planned.values()) < 2 * 1152  # fewer transceivers than cable ends: cages are shared


def test_applying_twice_changes_nothing(applied72):
    project = applied72.project
    before = snapshot(project)
    again = plan_apply(project=project, spec_text=fabric72_text(), user=applied72.user)
    assert again.diff.is_empty and not again.changed
    assert again.diff.counts()["cables_unchanged"] == 1152
    assert snapshot(project) == before


def test_history_rows_name_the_user(applied72):
    cable = Cable.objects.get(project=applied72.project, label="C00001")
    assert cable.history.get().history_user == applied72.user
    spine = Device.objects.get(project=applied72.project, name="ib-spine-01")
    assert spine.history.get().history_user == applied72.user


# --- existing servers -------------------------------------------------------------------------------------


def test_existing_servers_are_used_as_they_are(project, manager):
    fabric72_catalogue()
    spec = small_spec(4)
    rack = plan_of(spec_text=spec).racks[0]
    a01 = RackFactory(project=project, name=rack.name, row=rack.row, position=rack.position)
    server = device_create(project=project, hardware_model=gpu_server_model(part_number="B300-8GPU"),
                           name="gpu-001", rack=a01, position_u=3, serial="KEEP-ME")
    result = plan_apply(project=project, spec_text=spec, user=manager)
    assert result.diff.counts()["servers_existing"] == 1 and result.diff.counts()["servers_added"] == 3
    server.refresh_from_db()
    assert server.serial == "KEEP-ME" and server.rack == a01
    assert CableEnd.objects.filter(port__device=server).count() == 8


def test_an_existing_server_without_the_ports_the_plan_needs_is_refused(project, manager):
    fabric72_catalogue()
    other = gpu_server_model(nics=6, part_number="B300-6NIC")
    device_create(project=project, hardware_model=other, name="gpu-002")
    before = snapshot(project)
    with pytest.raises(PlanNotApplied) as caught:
        plan_apply(project=project, spec_text=small_spec(4), user=manager)
    assert any("gpu-002:ib6: no such port on this B300-6NIC" in m for m in caught.value.messages)
    assert snapshot(project) == before


# --- refusals leave the database unchanged --------------------------------------------------------------


def test_an_unknown_switch_part_number_names_the_spec_field(project, manager):
    gpu_server_model(part_number="B300-8GPU")
    before = snapshot(project)
    with pytest.raises(PlanNotApplied) as caught:
        plan_apply(project=project, spec_text=small_spec(4, switch="NO-SUCH-SW"), user=manager)
    assert caught.value.messages == [
        "switch_models.NO-SUCH-SW: no hardware model with part number 'NO-SUCH-SW' in the catalogue"
    ]
    assert snapshot(project) == before


def test_an_unknown_server_part_number_names_the_spec_field(project, manager):
    switch_model("Q3400-RA")
    with pytest.raises(PlanNotApplied, match=r"servers\[0\]\.model: no hardware model with part number 'NO-GPU'"):
        plan_apply(project=project, spec_text=small_spec(4, server_model="NO-GPU"), user=manager)


def test_a_bad_spec_names_the_field_and_writes_nothing(project, manager):
    fabric72_catalogue()
    before = snapshot(project)
    with pytest.raises(ValidationError) as caught:
        plan_apply(project=project, spec_text=small_spec(4).replace("scalable_unit: 4", "scalable_unit: 0"),
                   user=manager)
    assert caught.value.messages == ["networks.compute.scalable_unit: expected a positive integer, got 0"]
    assert snapshot(project) == before


def test_a_port_already_taken_by_another_cable_is_refused(project, manager):
    fabric72_catalogue()
    leaf = device_create(project=project, hardware_model=switch_model("Q3400-RA"), name="ib-leaf-01",
                         role=DeviceRole.LEAF)
    server = device_create(project=project, hardware_model=gpu_server_model(part_number="B300-8GPU"),
                           name="gpu-900")
    cable = Cable.objects.create(project=project, label="HAND-1", network=Network.COMPUTE, cable_type=CableType.FIBER,
                                 length_m=3, speed_gbps=800, status=CableStatus.INSTALLED)
    CableEnd.objects.create(cable=cable, side=Side.A, port=Port.objects.get(device=server, name="ib0"))
    CableEnd.objects.create(cable=cable, side=Side.B, port=Port.objects.get(device=leaf, name="p1"))
    before = snapshot(project)
    with pytest.raises(PlanNotApplied) as caught:
        plan_apply(project=project, spec_text=small_spec(4), user=manager)
    assert any(m.startswith("ib-leaf-01:p1: already taken by cable HAND-1 (installed)") for m in caught.value.messages)
    assert snapshot(project) == before


def test_switch_ports_without_plane_lanes_are_refused_naming_the_model(project, manager):
    gpu_server_model(part_number="B300-8GPU")
    switch_model("Q3400-NOLANES", lanes=1)
    with pytest.raises(PlanNotApplied) as caught:
        plan_apply(project=project, spec_text=small_spec(4, switch="Q3400-NOLANES"), user=manager)
    message = caught.value.messages[0]
    assert message.startswith("ib-leaf-01:p1: networks.compute puts planes 0,1,2,3 on lanes 0..3 of this port")
    assert "this Q3400-NOLANES port has no lanes: give its port template 4 lanes with planes_per_lane" in message
    assert "more like it" in message  # said once for the model, not once per port


def test_a_catalogue_height_other_than_the_spec_is_refused(project, manager):
    gpu_server_model(part_number="B300-8GPU")
    switch_model("Q3400-2U", height_u=2)
    with pytest.raises(PlanNotApplied, match=r"switch_models\.Q3400-2U\.height_u: the spec says 4U but hardware "
                                             r"model Q3400-2U is 2U"):
        plan_apply(project=project, spec_text=small_spec(4, switch="Q3400-2U"), user=manager)


def test_a_rack_unit_already_taken_is_refused(project, manager):
    fabric72_catalogue()
    spec = small_spec(4)
    switch_rack = next(r for r in plan_of(spec_text=spec).racks if r.name == "N01")
    n01 = RackFactory(project=project, name="N01", row=switch_rack.row, position=switch_rack.position)
    device_create(project=project, hardware_model=gpu_server_model(part_number="B300-8GPU"), name="squatter",
                  rack=n01, position_u=1)
    with pytest.raises(PlanNotApplied, match=r"ib-leaf-01: U2 of rack N01 is already taken by squatter"):
        plan_apply(project=project, spec_text=spec, user=manager)


# --- separate planes (fabric 3 in miniature) -------------------------------------------------------------


def test_separate_planes_are_recorded_on_switch_lanes_and_breakout_cables_have_two_b_ends(project, manager):
    data = yaml.safe_load((EXAMPLES / "fabric-1024.yaml").read_text())
    data["servers"][0].update(count=8, model="B300-ETH")
    data["networks"]["compute"]["scalable_unit"] = 8
    data["room"]["rows"] = [{"name": "A", "racks": 2, "holds": "servers"},
                            {"name": "N", "racks": 2, "holds": "network"}]
    server = HardwareModel.objects.create(vendor="X", model="B300", part_number="B300-ETH",
                                          kind=HardwareKind.GPU_SERVER, height_u=10)
    PortTemplate.objects.bulk_create(
        PortTemplate(hardware_model=server, name=f"eth{i}", kind=PortKind.ETHERNET, speed_gbps=800,
                     network=Network.COMPUTE, breakout_lanes=2, lane_speed_gbps=400, planes_per_lane=True)
        for i in range(8)
    )
    switch_model("N9570-64OC", radix=64, lanes=2, lane_speed=400, planes_per_lane=False,
                 kind=HardwareKind.ETH_SWITCH)
    result = plan_apply(project=project, spec_text=yaml.safe_dump(data), user=manager)
    assert result.plan.summary()["switches"]["compute"] == {"leaf": 16, "spine": 2, "super_spine": 0}
    leaf_lanes = Port.objects.filter(device__project=project, device__name__startswith="roce-p1-leaf",
                                     parent__isnull=False, cable_end__isnull=False)
    assert leaf_lanes.exists() and set(leaf_lanes.values_list("plane", flat=True)) == {1}
    breakout = Cable.objects.get(project=project, label="C00001")
    ends = list(breakout.ends.select_related("port__device").order_by("side", "position"))
    assert [(e.side, e.port.device.name, e.port.name, e.port.plane) for e in ends] == [
        (Side.A, "gpu-001", "eth0", None),
        (Side.B, "roce-p0-leaf-01", "p1/0", 0),
        (Side.B, "roce-p1-leaf-01", "p1/0", 1),
    ]
    assert breakout.plane is None and breakout.speed_gbps == 800
    for plane in (0, 1):  # 8 leaves of 8 uplinks per plane, every end in the cable's plane
        uplinks = CableEnd.objects.filter(cable__project=project, cable__plane=plane)
        assert uplinks.values("cable").distinct().count() == 64
        assert set(uplinks.values_list("port__plane", flat=True)) == {plane}


# --- the recorded plan (command and demo path) ------------------------------------------------------------


def test_apply_now_records_an_applied_plan_only_when_something_changed(project, manager):
    fabric72_catalogue()
    row, result = fabric_plan_apply_now(project=project, spec_text=small_spec(4), user=manager)
    assert row.status == JobStatus.DONE and row.applied_at and row.confirmed_by == manager
    assert row.summary["cables"] == 64 and row.diff["counts"]["cables_added"] == 64
    again, result = fabric_plan_apply_now(project=project, spec_text=small_spec(4), user=manager)
    assert again is None and not result.changed
    assert FabricPlan.objects.filter(project=project).count() == 1


def test_plan_diff_writes_nothing(project, manager):
    fabric72_catalogue()
    before = snapshot(project)
    diff = plan_diff(project=project, plan=plan_of(spec_text=small_spec(4)))
    assert diff.counts()["cables_added"] == 64 and diff.counts()["switches_added"] == 9
    assert snapshot(project) == before
