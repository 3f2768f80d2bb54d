"""The inventory pages: racks (list, elevation), devices (list, page, edit form), optics (list, page),
and the admin's device creation. Every page: members see the key values, outsiders get 404."""

import re
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest
from django.urls import reverse
from django.utils import timezone

from inventory.choices import (
    DeviceRole,
    DeviceStatus,
    Face,
    FormFactor,
    HardwareKind,
    OpticStatus,
    PortKind,
    RackStatus,
)
from inventory.models import Device, DeviceUnit, Port, PortTemplate
from inventory.services import device_create, optic_install
from tests.factories import (
    HardwareModelFactory,
    OpticFactory,
    RackFactory,
    SiteFactory,
    UserFactory,
    gpu_server_model,
)
from tests.support import count_queries

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def inv(project, other_project):
    """A small cluster: R-OK within its power budget, R-HOT over it; optics installed and in stock;
    and one rack, device and optic of another project."""
    site = SiteFactory(project=project, name="Hall 1")
    gpu = gpu_server_model()  # 10U, 14300 W
    switch = HardwareModelFactory(model="Leaf 1U", kind=HardwareKind.IB_SWITCH, height_u=1, max_power_w=1500)
    pdu = HardwareModelFactory(model="Rear PDU", kind=HardwareKind.PDU, height_u=1, max_power_w=0,
                               is_full_depth=False)
    ok = RackFactory(project=project, site=site, name="R-OK", row="A", position=1, power_budget_w=40000)
    hot = RackFactory(project=project, site=site, name="R-HOT", row="B", position=1, power_budget_w=20000)

    def make(name, rack, u, model, **extra):
        return device_create(project=project, hardware_model=model, name=name, rack=rack, position_u=u,
                             **extra)

    ns = SimpleNamespace(project=project, ok=ok, hot=hot, gpu_model=gpu)
    ns.gpu1 = make("gpu-001", ok, 1, gpu, status=DeviceStatus.RACKED, role=DeviceRole.GPU_NODE,
                   serial="SN-GPU-001", asset_tag="AT-0001", oob_address="10.0.0.11")
    ns.leaf = make("leaf-01", ok, 42, switch, status=DeviceStatus.READY, role=DeviceRole.LEAF,
                   serial="SN-LEAF")
    ns.pdu = make("pdu-ok-r", ok, 20, pdu, face=Face.REAR, role=DeviceRole.PDU)
    ns.gpu2 = make("gpu-002", hot, 1, gpu, role=DeviceRole.GPU_NODE)
    ns.gpu3 = make("gpu-003", hot, 11, gpu, role=DeviceRole.GPU_NODE)
    ns.ib0 = Port.objects.get(device=ns.gpu1, name="ib0")
    ns.installed = optic_install(optic=OpticFactory(project=project, serial="MT-IN-0001"), port=ns.ib0)
    ns.installed.dom_temperature_c, ns.installed.dom_voltage_v = 47.5, 3.29
    ns.installed.dom_tx_power_dbm = [1.1, 1.2, 1.3, 1.4]
    ns.installed.dom_rx_power_dbm = [-2.1, -2.2, -2.3, -9.9]
    ns.installed.dom_bias_ma = [7.0, 7.1, 7.2, 7.3]
    ns.installed.dom_read_at = timezone.now()
    ns.installed.save()
    ns.stock = OpticFactory(project=project, serial="MT-STOCK-0001", form_factor=FormFactor.QSFP112,
                            speed_gbps=400, part_number="MMA1Z00-NS400")
    ns.faulty = OpticFactory(project=project, serial="MT-FAULTY-0001", status=OpticStatus.FAULTY)
    foreign_rack = RackFactory(project=other_project, name="R-FOREIGN")
    ns.foreign_rack = foreign_rack
    ns.foreign_device = device_create(project=other_project, hardware_model=switch, name="foreign-sw",
                                      rack=foreign_rack, position_u=1)
    ns.foreign_optic = OpticFactory(project=other_project, serial="MT-FOREIGN-1")
    return ns


def url(name, project, *args):
    return reverse(f"inventory:{name}", args=[project.code, *args])


def page(client, address, **params):
    response = client.get(address, params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def row(body, attribute, value):
    """The <tr> whose data-<attribute> is value."""
    match = re.search(rf'<tr[^>]* data-{attribute}="{re.escape(value)}"[^>]*>(.*?)</tr>', body, re.S)
    assert match, f"no row {attribute}={value}"
    return match.group(0)


def elevation(body, face):
    """Devices drawn on one face of the rack page: name -> (U attrs and rect geometry)."""
    match = re.search(rf'<figure class="elevation" data-face="{face}">.*?(<svg.*?</svg>)', body, re.S)
    assert match, f"no {face} elevation"
    svg = ET.fromstring(match.group(1))
    drawn = {}
    for group in svg.iter(f"{SVG}g"):
        rect, text = group.find(f"{SVG}rect"), group.find(f"{SVG}text")
        drawn[group.get("data-device")] = SimpleNamespace(
            u=int(group.get("data-u")), top_u=int(group.get("data-top-u")), cls=group.get("class"),
            y=int(rect.get("y")), height=int(rect.get("height")), text=text.text,
        )
    return drawn


# --- racks -------------------------------------------------------------------------------------


def test_rack_list_shows_counts_power_and_flags_only_the_hot_rack(client_for, customer, inv):
    body = page(client_for(customer), url("rack-list", inv.project))
    ok, hot = row(body, "rack", "R-OK"), row(body, "rack", "R-HOT")
    assert 'class="device-count">3<' in ok and 'class="device-count">2<' in hot
    assert "15800 W / 40000 W" in ok and "headroom 60%" in ok
    assert "28600 W / 20000 W" in hot and "headroom -43%" in hot
    assert 'data-flag="power"' in hot and 'data-flag="power"' not in ok
    assert 'style="width: 100%"' in hot  # an over-budget bar is full, not overflowing
    assert "R-FOREIGN" not in body


def test_rack_list_filters(client_for, customer, inv):
    client = client_for(customer)
    body = page(client, url("rack-list", inv.project), row="B")
    assert "R-HOT" in body and "R-OK" not in body
    body = page(client, url("rack-list", inv.project), q="ok")
    assert "R-OK" in body and "R-HOT" not in body
    body = page(client, url("rack-list", inv.project), status="bogus")  # an invalid filter is reported
    assert "Some filters were ignored" in body


def test_rack_page_draws_each_device_in_its_units(client_for, customer, inv):
    body = page(client_for(customer), url("rack-detail", inv.project, inv.ok.pk))
    front, rear = elevation(body, "front"), elevation(body, "rear")
    # 48U rack, 18 px per U below an 8 px margin: the top edge of U n is 8 + (48 - n) * 18.
    gpu = front["gpu-001"]
    assert (gpu.u, gpu.top_u) == (1, 10)
    assert gpu.y == 8 + (48 - 10) * 18 and gpu.height == 10 * 18
    assert gpu.text == "gpu-001" and "status-racked" in gpu.cls
    leaf = front["leaf-01"]
    assert (leaf.u, leaf.y, leaf.height) == (42, 8 + 6 * 18, 18) and "status-ready" in leaf.cls
    # Full-depth devices show on both faces; the half-depth rear PDU only at the rear.
    assert set(front) == {"gpu-001", "leaf-01"}
    assert set(rear) == {"gpu-001", "leaf-01", "pdu-ok-r"}
    assert rear["pdu-ok-r"].y == 8 + (48 - 20) * 18
    assert reverse("inventory:device-detail", args=[inv.project.code, inv.gpu1.pk]) in body
    for status in DeviceStatus.labels:  # the legend
        assert status in body


def test_rack_page_power_flag(client_for, customer, inv):
    client = client_for(customer)
    hot = page(client, url("rack-detail", inv.project, inv.hot.pk))
    assert 'data-flag="power"' in hot and "28600 W / 20000 W" in hot
    ok = page(client, url("rack-detail", inv.project, inv.ok.pk))
    assert 'data-flag="power"' not in ok and "15800 W / 40000 W" in ok


def test_rack_page_shows_its_history(client_for, manager, inv):
    inv.ok.status = RackStatus.INSTALLED
    inv.ok._history_user = manager
    inv.ok.save()
    body = page(client_for(manager), url("rack-detail", inv.project, inv.ok.pk))
    history = body[body.index('id="history"'):]
    assert "Created" in history and "Changed" in history
    assert "Planned &rarr; Installed" in history and "mgr" in history


# --- devices -----------------------------------------------------------------------------------


def test_device_list_shows_devices_with_their_place(client_for, customer, inv):
    body = page(client_for(customer), url("device-list", inv.project))
    gpu = row(body, "device", "gpu-001")
    assert "R-OK" in gpu and "U1" in gpu and "SN-GPU-001" in gpu and "AT-0001" in gpu and "10.0.0.11" in gpu
    assert "foreign-sw" not in body


def test_device_list_filters(client_for, customer, inv):
    client = client_for(customer)

    def devices(**params):
        body = page(client, url("device-list", inv.project), **params)
        return set(re.findall(r'<tr data-device="([^"]+)"', body))

    assert devices(rack="R-HOT") == {"gpu-002", "gpu-003"}
    assert devices(status=DeviceStatus.READY) == {"leaf-01"}
    assert devices(q="SN-GPU") == {"gpu-001"}
    assert devices(kind=HardwareKind.PDU) == {"pdu-ok-r"}
    assert len(devices(status="melted")) == 5  # an invalid filter is ignored (and reported), no 500


def test_device_page_shows_identity_nics_ports_lanes_and_optic(client_for, customer, inv):
    body = page(client_for(customer), url("device-detail", inv.project, inv.gpu1.pk))
    assert "SN-GPU-001" in body and "AT-0001" in body and "10.0.0.11" in body
    assert reverse("inventory:rack-detail", args=[inv.project.code, inv.ok.pk]) in body
    assert "U1–U10" in body
    for slot in range(8):
        assert f"<td>nic{slot}</td>" in body
    ib0 = row(body, "port", "ib0")
    assert "800G" in ib0 and "MT-IN-0001" in ib0  # the optic sits in the physical port
    # The four lanes follow their parent, each with lane k in plane k at 200G.
    rows = re.findall(r'<tr class="(port|lane)" data-port="([^"]+)"', body)
    start = rows.index(("port", "ib0"))
    assert rows[start + 1:start + 5] == [("lane", f"ib0/{k}") for k in range(4)]
    for k in range(4):
        lane = row(body, "port", f"ib0/{k}")
        assert 'data-parent="ib0"' in lane and f"lane {k} · 200G · plane {k}" in lane
    assert "Edit" not in body.split("<main>")[1].split("NICs")[0]  # a customer gets no form


def test_device_page_offers_the_form_to_technicians(client_for, technician, inv):
    client = client_for(technician)
    body = page(client, url("device-detail", inv.project, inv.gpu1.pk))
    assert f'href="{url("device-edit", inv.project, inv.gpu1.pk)}"' in body
    form = page(client, url("device-edit", inv.project, inv.gpu1.pk))
    assert f'action="{url("device-edit", inv.project, inv.gpu1.pk)}"' in form
    assert 'name="position_u"' in form and "R-FOREIGN" not in form


def edit_data(device, **changes):
    data = {
        "status": device.status, "rack": device.rack_id or "", "position_u": device.position_u or "",
        "face": device.face, "serial": device.serial, "asset_tag": device.asset_tag,
        "oob_address": device.oob_address or "",
    }
    data.update(changes)
    return data


def test_technician_moves_a_device_through_the_form(client_for, technician, inv):
    response = client_for(technician).post(
        url("device-edit", inv.project, inv.leaf.pk),
        edit_data(inv.leaf, rack=inv.hot.pk, position_u=30, status=DeviceStatus.POWERED, serial="SN-LEAF-2"),
    )
    assert response.status_code == 302
    assert response.url == url("device-detail", inv.project, inv.leaf.pk)
    leaf = Device.objects.get(pk=inv.leaf.pk)
    assert (leaf.rack_id, leaf.position_u, leaf.serial) == (inv.hot.pk, 30, "SN-LEAF-2")
    assert leaf.status == DeviceStatus.POWERED
    # The service rewrote the unit claims: the old U is free, the new one taken.
    assert set(DeviceUnit.objects.filter(device=leaf).values_list("rack_id", "unit")) == {(inv.hot.pk, 30)}


def test_overlap_comes_back_on_the_form(client_for, manager, inv):
    response = client_for(manager).post(url("device-edit", inv.project, inv.leaf.pk),
                                        edit_data(inv.leaf, position_u=5))
    assert response.status_code == 200
    body = response.content.decode()
    assert "U5 of rack R-OK is already taken by gpu-001" in body
    assert Device.objects.get(pk=inv.leaf.pk).position_u == 42
    assert set(DeviceUnit.objects.filter(device=inv.leaf).values_list("unit", flat=True)) == {42}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"position_u": 45, "rack": "REPLACE_HOT"}, "sticks out"),  # a 10U server from U45 of 48
        ({"oob_address": "not-an-ip"}, "Enter a valid IPv4 or IPv6 address"),
        ({"rack": "REPLACE_FOREIGN"}, "Select a valid choice"),
        ({"rack": ""}, "needs both a rack and a position"),
        ({"status": "melted"}, "Select a valid choice"),
        ({"serial": "SN-LEAF"}, "Serial SN-LEAF is already recorded for leaf-01"),
    ],
)
def test_bad_input_is_shown_on_the_form(client_for, technician, inv, changes, message):
    replace = {"REPLACE_HOT": inv.hot.pk, "REPLACE_FOREIGN": inv.foreign_rack.pk}
    changes = {k: replace.get(v, v) for k, v in changes.items()}
    response = client_for(technician).post(url("device-edit", inv.project, inv.gpu1.pk),
                                           edit_data(inv.gpu1, **changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Device.objects.get(pk=inv.gpu1.pk).position_u == 1


def test_customer_cannot_edit(client_for, customer, inv):
    client = client_for(customer)
    assert client.get(url("device-edit", inv.project, inv.leaf.pk)).status_code == 403
    response = client.post(url("device-edit", inv.project, inv.leaf.pk), edit_data(inv.leaf, position_u=30))
    assert response.status_code == 403
    assert Device.objects.get(pk=inv.leaf.pk).position_u == 42


# --- optics ------------------------------------------------------------------------------------


def test_optic_list_shows_the_port_each_sits_in(client_for, customer, inv):
    body = page(client_for(customer), url("optic-list", inv.project))
    assert "gpu-001</a>:ib0" in row(body, "optic", "MT-IN-0001")
    assert "QSFP112" in row(body, "optic", "MT-STOCK-0001")
    assert "MT-FOREIGN-1" not in body


def test_optic_list_filters(client_for, customer, inv):
    client = client_for(customer)

    def optics(**params):
        body = page(client, url("optic-list", inv.project), **params)
        return set(re.findall(r'<tr data-optic="([^"]+)"', body))

    assert optics(status=OpticStatus.FAULTY) == {"MT-FAULTY-0001"}
    assert optics(form_factor=FormFactor.QSFP112) == {"MT-STOCK-0001"}
    assert optics(speed_gbps=400) == {"MT-STOCK-0001"}
    assert optics(device="gpu-001") == {"MT-IN-0001"}
    assert optics(q="stock") == {"MT-STOCK-0001"}
    assert optics(speed_gbps="fast") == {"MT-IN-0001", "MT-STOCK-0001", "MT-FAULTY-0001"}  # ignored, no 500


def test_optic_page_shows_dom_readings(client_for, customer, inv):
    body = page(client_for(customer), url("optic-detail", inv.project, inv.installed.pk))
    assert "47.5 °C" in body and "3.29 V" in body
    assert "<td>3</td><td>1.4</td><td>-9.9</td><td>7.3</td>" in body
    assert "gpu-001</a>:ib0" in body
    assert "Created" in body  # history


# --- access ------------------------------------------------------------------------------------


PAGES = [
    ("rack-list", None), ("rack-detail", "ok"), ("device-list", None), ("device-detail", "gpu1"),
    ("device-edit", "gpu1"), ("optic-list", None), ("optic-detail", "installed"),
]


def page_url(inv, name, obj):
    return url(name, inv.project, *([getattr(inv, obj).pk] if obj else []))


@pytest.mark.parametrize(("name", "obj"), PAGES)
def test_outsider_gets_404_on_every_page(client_for, outsider, inv, name, obj):
    client = client_for(outsider)
    assert client.get(page_url(inv, name, obj)).status_code == 404
    if name == "device-edit":
        response = client.post(page_url(inv, name, obj), edit_data(inv.gpu1, position_u=30))
        assert response.status_code == 404
        assert Device.objects.get(pk=inv.gpu1.pk).position_u == 1


@pytest.mark.parametrize(("name", "obj"), PAGES)
def test_member_pages_render(client_for, manager, inv, name, obj):
    assert client_for(manager).get(page_url(inv, name, obj)).status_code == 200


@pytest.mark.parametrize(
    ("name", "foreign"),
    [("rack-detail", "foreign_rack"), ("device-detail", "foreign_device"), ("device-edit", "foreign_device"),
     ("optic-detail", "foreign_optic")],
)
def test_another_projects_object_is_404_even_for_a_member(client_for, manager, inv, name, foreign):
    """A member of ACME asking for OTHER's object under ACME's code: not found."""
    assert client_for(manager).get(url(name, inv.project, getattr(inv, foreign).pk)).status_code == 404


def test_anonymous_is_sent_to_login(client, inv):
    response = client.get(url("rack-list", inv.project))
    assert response.status_code == 302 and response.url.startswith(reverse("login"))


# --- query counts ------------------------------------------------------------------------------


def queries_for(client, address) -> int:
    return count_queries(lambda: page(client, address))


def add_racks_with_devices(project, count, start):
    model = HardwareModelFactory(max_power_w=800)
    site = SiteFactory(project=project)
    for i in range(start, start + count):
        rack = RackFactory(project=project, site=site, name=f"RQ{i:03d}", row="Q", position=i + 1)
        device_create(project=project, hardware_model=model, name=f"dev-{i:03d}", rack=rack, position_u=1)


def add_optics(project, count, start, ports):
    for i in range(start, start + count):
        optic = OpticFactory(project=project, serial=f"MTQ{i:05d}")
        if ports:
            optic_install(optic=optic, port=ports.pop())


@pytest.mark.parametrize("page_name", ["rack-list", "device-list"])
def test_rack_and_device_lists_query_count_does_not_grow(client_for, customer, project, page_name,
                                                         django_assert_num_queries):
    client = client_for(customer)
    add_racks_with_devices(project, 5, 0)
    few = queries_for(client, url(page_name, project))
    add_racks_with_devices(project, 45, 5)
    with django_assert_num_queries(few):
        body = page(client, url(page_name, project))
    assert body.count("<tr data-") == 50


def test_optic_list_query_count_does_not_grow(client_for, customer, project, django_assert_num_queries):
    client = client_for(customer)
    server = device_create(project=project, hardware_model=gpu_server_model(), name="gpu-q")
    ports = list(Port.objects.filter(device=server, parent__isnull=True))
    add_optics(project, 5, 0, ports)
    few = queries_for(client, url("optic-list", project))
    add_optics(project, 45, 5, ports)
    with django_assert_num_queries(few):
        body = page(client, url("optic-list", project))
    assert body.count("<tr data-optic") == 50 and body.count("gpu-q</a>:") == 9


def test_rack_page_query_count_does_not_grow_with_devices(client_for, customer, project,
                                                          django_assert_num_queries):
    client = client_for(customer)
    rack = RackFactory(project=project, name="R-Q")
    model = HardwareModelFactory(max_power_w=100)
    for u in range(1, 3):
        device_create(project=project, hardware_model=model, name=f"q-{u}", rack=rack, position_u=u)
    few = queries_for(client, url("rack-detail", project, rack.pk))
    for u in range(3, 41):
        device_create(project=project, hardware_model=model, name=f"q-{u}", rack=rack, position_u=u)
    with django_assert_num_queries(few):
        body = page(client, url("rack-detail", project, rack.pk))
    assert body.count('data-device="q-') == 2 * 40  # front and rear


def switch_model(ports: int, *, part_number: str):
    """A leaf switch with `ports` 800G ports, every other one split 2 x 400G."""
    model = HardwareModelFactory(part_number=part_number, kind=HardwareKind.IB_SWITCH, height_u=1)
    for i in range(ports):
        split = i % 2 == 0
        PortTemplate.objects.create(
            hardware_model=model, name=f"p{i}", kind=PortKind.INFINIBAND, speed_gbps=800,
            breakout_lanes=2 if split else 1, lane_speed_gbps=400 if split else None,
        )
    return model


def test_device_page_query_count_does_not_grow_with_ports_and_optics(client_for, technician, project,
                                                                     django_assert_num_queries):
    """The page of a big leaf switch costs what a small one does: its ports come a page at a time."""
    client = client_for(technician)
    small = device_create(project=project, hardware_model=switch_model(2, part_number="SW-2"), name="leaf-s")
    big = device_create(project=project, hardware_model=switch_model(60, part_number="SW-60"), name="leaf-b")
    seated = [
        optic_install(optic=OpticFactory(project=project), port=port).serial
        for device in (small, big)
        for port in device.ports.filter(parent__isnull=True).order_by("id")[:2]
    ]
    few = queries_for(client, url("device-detail", project, small.pk))
    with django_assert_num_queries(few):
        body = page(client, url("device-detail", project, big.pk))
    assert body.count('<tr class="port"') == 16 and body.count('<tr class="lane"') == 16  # every other one split
    assert [serial in body for serial in seated] == [False, False, True, True]


# --- admin -------------------------------------------------------------------------------------


def test_admin_creates_devices_through_the_service(client_for, project):
    staff = UserFactory(username="root", is_staff=True, is_superuser=True)
    rack = RackFactory(project=project, name="R-ADM")
    client = client_for(staff)
    response = client.post(reverse("admin:inventory_device_add"), {
        "project": project.pk, "hardware_model": gpu_server_model().pk, "name": "gpu-adm", "rack": rack.pk,
        "position_u": 5, "face": Face.FRONT, "role": DeviceRole.GPU_NODE, "serial": "", "asset_tag": "",
        "oob_address": "", "status": DeviceStatus.PLANNED,
    })
    assert response.status_code == 302, response.content.decode()[:2000]
    device = Device.objects.get(name="gpu-adm")
    assert device.nics.count() == 8 and device.ports.filter(parent__isnull=False).count() == 32
    assert device.units.count() == 20
    # A change that moves it re-claims its units.
    response = client.post(reverse("admin:inventory_device_change", args=[device.pk]), {
        "project": project.pk, "hardware_model": HardwareModelFactory().pk, "name": "gpu-adm",
        "rack": rack.pk,
        "position_u": 20, "face": Face.FRONT, "role": DeviceRole.GPU_NODE, "serial": "", "asset_tag": "",
        "oob_address": "", "status": DeviceStatus.RACKED,
    })
    assert response.status_code == 302
    assert sorted(set(device.units.values_list("unit", flat=True))) == list(range(20, 30))
    # Its model is read-only once created: the ports built from it would otherwise be wrong.
    assert Device.objects.get(pk=device.pk).hardware_model == gpu_server_model()
    # Unit claims cannot be added or deleted by hand.
    assert client.get(reverse("admin:inventory_deviceunit_add")).status_code == 403
    unit = device.units.first()
    delete = client.post(reverse("admin:inventory_deviceunit_delete", args=[unit.pk]), {"post": "yes"})
    assert delete.status_code == 403 and DeviceUnit.objects.filter(pk=unit.pk).exists()
    models = ["site", "rack", "hardwaremodel", "device", "nic", "port", "optic", "deviceunit", "importjob"]
    for name in models:
        assert client.get(reverse(f"admin:inventory_{name}_changelist")).status_code == 200, name
    change_pages = [
        ("device", device.pk), ("hardwaremodel", device.hardware_model_id), ("deviceunit", unit.pk),
    ]
    for name, pk in change_pages:
        assert client.get(reverse(f"admin:inventory_{name}_change", args=[pk])).status_code == 200, name
