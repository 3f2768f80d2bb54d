"""A device's ports on its page, NetBox-style: every port and lane with its optic, its cable and the cable's
far end (device, port, lane), a page of ports at a time (a 721-port leaf costs the queries of a 2-port
box), found by name. Cabling adds the panel (core.panels); inventory shows it without importing cabling."""

import re
from decimal import Decimal

import pytest
from django.urls import reverse

from cabling.choices import CableStatus, CableType
from cabling.models import Cable, CableEnd
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import HardwareModel, Port, PortTemplate
from inventory.services import device_create
from tests.factories import HardwareModelFactory, RackFactory, gpu_server_model
from tests.support import count_queries

pytestmark = pytest.mark.django_db


def xdr_leaf_model() -> HardwareModel:
    """A Q3400-like leaf: 144 XDR ports p1..p144, each split into four 200G plane lanes, and a management
    port: 721 ports, as the issue measured."""
    model, created = HardwareModel.objects.get_or_create(
        part_number="TEST-Q3400", defaults=dict(vendor="Example", model="Q3400-like", kind=HardwareKind.IB_SWITCH,
                                                height_u=4))
    if created:
        PortTemplate.objects.bulk_create(
            PortTemplate(hardware_model=model, name=f"p{i}", kind=PortKind.INFINIBAND, speed_gbps=800,
                         network=Network.COMPUTE, breakout_lanes=4, lane_speed_gbps=200, planes_per_lane=True)
            for i in range(1, 145)
        )
        PortTemplate.objects.create(hardware_model=model, name="mgmt", kind=PortKind.BMC, speed_gbps=1,
                                    network=Network.OOB)
    return model


def cable(project, label, a, *b, status=CableStatus.PLANNED):
    made = Cable.objects.create(project=project, label=label, network=Network.COMPUTE, cable_type=CableType.FIBER,
                                length_m=Decimal("10.0"), speed_gbps=800, status=status)
    CableEnd.objects.create(cable=made, side="A", port=a)
    for position, port in enumerate(b):
        CableEnd.objects.create(cable=made, side="B", position=position, port=port)
    return made


@pytest.fixture
def leafy(project):
    rack = RackFactory(project=project, name="C01")
    leaf = device_create(project=project, hardware_model=xdr_leaf_model(), name="ib-leaf-01", rack=rack,
                         position_u=40, role=DeviceRole.LEAF)
    gpu = device_create(project=project, hardware_model=gpu_server_model(), name="gpu-001", rack=rack, position_u=1,
                        role=DeviceRole.GPU_NODE)
    two_ports = HardwareModelFactory(kind=HardwareKind.MGMT_SWITCH)
    for name in ("p1", "p2"):
        PortTemplate.objects.create(hardware_model=two_ports, name=name, kind=PortKind.ETHERNET, speed_gbps=1,
                                    network=Network.OOB)
    small = device_create(project=project, hardware_model=two_ports, name="oob-sw", rack=rack, position_u=30)

    def port(device, name):
        return Port.objects.get(device=device, name=name)

    whole = cable(project, "C00001", port(gpu, "ib0"), port(leaf, "p1"), status=CableStatus.INSTALLED)
    lane = cable(project, "C00002", port(gpu, "ib1/0"), port(leaf, "p20/0"))
    breakout = cable(project, "C00003", port(gpu, "ib2"), port(leaf, "p21/0"), port(leaf, "p22/1"))
    cable(project, "O00001", port(gpu, "bmc"), port(small, "p1"))
    return leaf, gpu, small, (whole, lane, breakout)


def device_page(client, project, device, **params):
    response = client.get(reverse("inventory:device-detail", args=[project.code, device.pk]), params)
    assert response.status_code == 200
    return response.content.decode()


def row(body, name) -> str:
    match = re.search(rf'<tr class="(?:port|lane)" data-port="{re.escape(name)}"[^>]*>(.*?)</tr>', body, re.S)
    assert match, f"no row for {name}"
    return match.group(1)


def far(cells) -> list[str]:
    return re.findall(r'data-far="([^"]+)"', cells)


def shown(body) -> list[str]:
    return re.findall(r'<tr class="port" data-port="([^"]+)"', body)


def test_every_port_shows_its_cable_and_far_end(client_for, customer, project, leafy):
    leaf, gpu, _, (whole, lane, breakout) = leafy
    body = device_page(client_for(customer), project, gpu)
    assert "C00001" in row(body, "ib0") and far(row(body, "ib0")) == ["ib-leaf-01:p1"]
    assert "Installed" in row(body, "ib0")
    # A whole-port cable is shown on its port, not again on each of its lanes.
    assert far(row(body, "ib0/2")) == [] and "C00001" not in row(body, "ib0/2")
    assert far(row(body, "ib1/0")) == ["ib-leaf-01:p20/0"] and "lane 0" in row(body, "ib1/0")
    # The breakout: both legs on the port, and each lane its own leg (by plane).
    assert far(row(body, "ib2")) == ["ib-leaf-01:p21/0", "ib-leaf-01:p22/1"]
    assert far(row(body, "ib2/0")) == ["ib-leaf-01:p21/0"] and far(row(body, "ib2/1")) == ["ib-leaf-01:p22/1"]
    assert far(row(body, "ib2/2")) == []
    trace = reverse("cabling:port-trace", args=[project.code, Port.objects.get(device=gpu, name="ib2").pk])
    assert f'href="{trace}"' in row(body, "ib2")
    cable_page = reverse("cabling:cable-detail", args=[project.code, breakout.pk])
    assert f'href="{cable_page}"' in row(body, "ib2/1")


def test_a_leaf_shows_its_ports_a_page_at_a_time(client_for, customer, project, leafy):
    leaf, gpu, _, _ = leafy
    client = client_for(customer)
    first = device_page(client, project, leaf)
    assert shown(first) == [f"p{i}" for i in range(1, 17)]
    assert len(re.findall(r'<tr class="lane" data-port="p1/\d"', first)) == 4
    assert far(row(first, "p1")) == ["gpu-001:ib0"]
    assert "145 ports · page 1 of 10" in first
    assert '<dd class="port-count">145, with 576 breakout lanes</dd>' in first
    second = device_page(client, project, leaf, ports_page="2")
    assert shown(second) == [f"p{i}" for i in range(17, 33)]
    assert far(row(second, "p20/0")) == ["gpu-001:ib1/0"] and far(row(second, "p22/1")) == ["gpu-001:ib2"]
    assert shown(device_page(client, project, leaf, ports_page="10")) == ["mgmt"]


@pytest.mark.parametrize("number, first", [("x", "p1"), ("\u00b2", "p1"), ("9" * 5000, "p1"), ("99", "mgmt")])
def test_a_page_number_out_of_range_or_not_a_number_shows_a_page(client_for, customer, project, leafy, number,
                                                                 first):
    leaf = leafy[0]
    assert shown(device_page(client_for(customer), project, leaf, ports_page=number))[0] == first


@pytest.mark.parametrize("query, expected", [("p22", ["p22"]), ("P22/1", ["p22"]), ("p14", ["p14", "p140", "p141",
                         "p142", "p143", "p144"]), ("nothing", []), ("x" * 5000, [])])
def test_find_a_port_by_name(client_for, customer, project, leafy, query, expected):
    body = device_page(client_for(customer), project, leafy[0], ports_q=query)
    assert shown(body) == expected
    if expected == ["p22"]:
        assert far(row(body, "p22/1")) == ["gpu-001:ib2"]


def test_a_721_port_leaf_costs_the_queries_of_a_small_device(client_for, technician, project, leafy,
                                                              django_assert_num_queries):
    leaf, gpu, small, _ = leafy
    client = client_for(technician)
    few = count_queries(lambda: device_page(client, project, small))
    for device, params in ((leaf, {}), (leaf, {"ports_page": "2"}), (gpu, {}), (leaf, {"ports_q": "p22"})):
        with django_assert_num_queries(few):
            device_page(client, project, device, **params)


def test_another_projects_device_is_404(client_for, manager, project, other_project):
    rack = RackFactory(project=other_project)
    foreign = device_create(project=other_project, hardware_model=HardwareModelFactory(), name="x", rack=rack,
                            position_u=1)
    response = client_for(manager).get(reverse("inventory:device-detail", args=[project.code, foreign.pk]))
    assert response.status_code == 404


def lanes_folded(body) -> dict[str, list[str]]:
    """Per port whose lanes are folded under it: the lanes inside its fold."""
    folds = re.findall(r'<tr class="lanes-fold" data-parent="([^"]+)">(.*?)</details>', body, re.S)
    return {port: re.findall(r'<tr class="lane" data-port="([^"]+)"', inside) for port, inside in folds}


def test_a_switchs_lanes_are_folded_under_their_port_until_a_plane_is_chosen(client_for, customer, project, leafy):
    """The issue: a leaf's page was one tall column of 16 ports and their 64 lanes. Now each port's lanes are
    folded under it, and one plane at a time shows each port with its lane of that plane and the far end."""
    leaf = leafy[0]
    Port.objects.filter(device=leaf, parent__isnull=False).update(plane=None)
    for lane in range(4):  # as plan_apply records them: lane k in plane k
        Port.objects.filter(device=leaf, lane=lane).update(plane=lane)
    client = client_for(customer)
    every = device_page(client, project, leaf)
    folds = lanes_folded(every)
    assert list(folds) == [f"p{i}" for i in range(1, 17)] and folds["p1"] == [f"p1/{k}" for k in range(4)]
    assert "4 lanes of p1 · planes 0–3" in every and 'href="?ports_plane=2#panel-ports"' in every
    assert every.count('<option value="2">Plane 2</option>') == 1  # each plane offered once
    plane_1 = device_page(client, project, leaf, ports_plane="1")
    assert lanes_folded(plane_1) == {}  # nothing folded: one lane a port
    assert re.findall(r'<tr class="lane" data-port="([^"]+)"', plane_1)[:3] == ["p1/1", "p2/1", "p3/1"]
    assert far(row(device_page(client, project, leaf, ports_plane="1", ports_page="2"), "p22/1")) == ["gpu-001:ib2"]
    # A plane the device has not, or no number at all, shows every plane.
    assert lanes_folded(device_page(client, project, leaf, ports_plane="7")) == folds
    assert lanes_folded(device_page(client, project, leaf, ports_plane="x")) == folds


def test_a_plane_costs_no_more_queries_than_every_plane(client_for, customer, project, leafy):
    leaf = leafy[0]
    for lane in range(4):
        Port.objects.filter(device=leaf, lane=lane).update(plane=lane)
    client = client_for(customer)
    url = reverse("inventory:device-detail", args=[project.code, leaf.pk])
    assert count_queries(lambda: client.get(url, {"ports_plane": "2"})) == count_queries(lambda: client.get(url))
