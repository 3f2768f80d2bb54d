"""A port's trace, NetBox-style: a GPU port through its breakout cable to every leaf lane it reaches, a lane
through its physical port's breakout to its own leg, a port whose lanes are cabled one by one, and back
from a leaf lane. On a page and in the API (/api/traces/), scoped, in a constant number of queries."""

from decimal import Decimal
from types import SimpleNamespace

import pytest
from django.urls import reverse

from cabling.choices import CableType, FabricState
from cabling.models import Cable, CableEnd
from cabling.selectors import port_trace
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import HardwareModel, Port, PortTemplate
from inventory.services import device_create, optic_install
from tests.factories import OpticFactory, RackFactory, SiteFactory, gpu_server_model
from tests.support import count_queries

pytestmark = pytest.mark.django_db


def split_leaf_model() -> HardwareModel:
    """A leaf whose four 800G ports each split 2 x 400G (one lane per plane of a dual-plane fabric)."""
    model, created = HardwareModel.objects.get_or_create(
        part_number="TEST-LEAF-2X400", defaults=dict(vendor="Example", model="Leaf 4x800G split",
                                                     kind=HardwareKind.ETH_SWITCH, height_u=1))
    if created:
        for i in range(1, 5):
            PortTemplate.objects.create(hardware_model=model, name=f"p{i}", kind=PortKind.ETHERNET, speed_gbps=800,
                                        network=Network.COMPUTE, breakout_lanes=2, lane_speed_gbps=400)
    return model


def cable(project, label, a, *b, plane=None) -> Cable:
    made = Cable.objects.create(project=project, label=label, network=Network.COMPUTE, plane=plane,
                                cable_type=CableType.FIBER, length_m=Decimal("7.0"), speed_gbps=400,
                                optic_part_a="OSFP-800", optic_part_b="OSFP-2x400")
    CableEnd.objects.create(cable=made, side="A", port=a)
    for position, port in enumerate(b):
        CableEnd.objects.create(cable=made, side="B", position=position, port=port)
    return made


@pytest.fixture
def dual(project, other_project):
    """Dual-plane, as the 1,024-server reference fabric: each GPU port runs 2 x 400G, one lane per plane,
    and a breakout cable takes both lanes of gpu-001:ib0 to lane 0 of p1 on leaf-a (plane 0) and on leaf-b
    (plane 1); gpu-002:ib0 the same to lane 1 of p1. gpu-001:ib1's lanes are cabled one by one."""
    site = SiteFactory(project=project)
    rack = RackFactory(project=project, site=site, name="D01")
    gpu, leaf = gpu_server_model(nics=2, lanes=2, part_number="TEST-B300-2L"), split_leaf_model()
    ns = SimpleNamespace(project=project)
    ns.gpu1 = device_create(project=project, hardware_model=gpu, name="gpu-001", rack=rack, position_u=1,
                            role=DeviceRole.GPU_NODE)
    ns.gpu2 = device_create(project=project, hardware_model=gpu, name="gpu-002", rack=rack, position_u=11,
                            role=DeviceRole.GPU_NODE)
    ns.leaf_a = device_create(project=project, hardware_model=leaf, name="leaf-a", rack=rack, position_u=40,
                              role=DeviceRole.LEAF)
    ns.leaf_b = device_create(project=project, hardware_model=leaf, name="leaf-b", rack=rack, position_u=41,
                              role=DeviceRole.LEAF)
    Port.objects.filter(device=ns.leaf_a, parent__isnull=False).update(plane=0)
    Port.objects.filter(device=ns.leaf_b, parent__isnull=False).update(plane=1)

    def port(device, name):
        return Port.objects.get(device=device, name=name)

    ns.port = port
    ns.breakout = cable(project, "D00001", port(ns.gpu1, "ib0"), port(ns.leaf_a, "p1/0"), port(ns.leaf_b, "p1/0"))
    ns.breakout2 = cable(project, "D00002", port(ns.gpu2, "ib0"), port(ns.leaf_a, "p1/1"), port(ns.leaf_b, "p1/1"))
    ns.lane0 = cable(project, "D00003", port(ns.gpu1, "ib1/0"), port(ns.leaf_a, "p2/0"), plane=0)
    ns.lane1 = cable(project, "D00004", port(ns.gpu1, "ib1/1"), port(ns.leaf_b, "p2/0"), plane=1)
    optic_install(optic=OpticFactory(project=project, serial="MT-LEAF-A-P1", part_number="OSFP-2x400"),
                  port=port(ns.leaf_a, "p1"))
    foreign_rack = RackFactory(project=other_project, name="X01")
    ns.foreign = device_create(project=other_project, hardware_model=leaf, name="foreign-leaf", rack=foreign_rack,
                               position_u=1)
    cable(other_project, "D00001", port(ns.foreign, "p1/0"), port(ns.foreign, "p2/0"))
    return ns


def far(segment) -> list[tuple]:
    return [(f.leg, f.device, f.port, f.lane, f.plane) for f in segment.connection.far]


# --- the trace -----------------------------------------------------------------------------------


def test_a_gpu_port_reaches_every_leaf_lane_of_its_breakout(dual, customer):
    trace = port_trace(user=customer, project=dual.project, pk=dual.port(dual.gpu1, "ib0").pk)
    assert [(s.port.name, s.connection.cable.label, s.connection.end.leg) for s in trace.segments] == [
        ("ib0", "D00001", "A")]
    assert far(trace.segments[0]) == [("B1", "leaf-a", "p1/0", 0, 0), ("B2", "leaf-b", "p1/0", 0, 1)]
    assert [f.tag for f in trace.far_ends] == ["D01-U40-leaf-a-p1/0", "D01-U41-leaf-b-p1/0"]
    assert trace.far_ends[0].optic == "MT-LEAF-A-P1"  # seated in the cage of the lane's physical port
    assert trace.far_ends[1].optic == ""


def test_a_lane_of_a_breakout_takes_its_own_leg(dual, customer):
    trace = port_trace(user=customer, pk=dual.port(dual.gpu1, "ib0/1").pk)
    (segment,) = trace.segments
    assert segment.port.name == "ib0" and segment.connection.via_parent
    assert far(segment) == [("B2", "leaf-b", "p1/0", 0, 1)]


def test_a_port_whose_lanes_are_cabled_one_by_one_has_a_segment_per_lane(dual, customer):
    trace = port_trace(user=customer, pk=dual.port(dual.gpu1, "ib1").pk)
    assert [(s.port.name, s.connection.cable.label) for s in trace.segments] == [("ib1/0", "D00003"),
                                                                                ("ib1/1", "D00004")]
    assert [far(s) for s in trace.segments] == [[("B", "leaf-a", "p2/0", 0, 0)], [("B", "leaf-b", "p2/0", 0, 1)]]


def test_from_a_leaf_back_to_the_gpu_ports(dual, customer):
    lane = port_trace(user=customer, pk=dual.port(dual.leaf_b, "p1/0").pk)
    assert [(s.connection.end.leg, far(s)) for s in lane.segments] == [("B2", [("A", "gpu-001", "ib0", None, None)])]
    whole = port_trace(user=customer, pk=dual.port(dual.leaf_a, "p1").pk)
    assert [(s.port.name, [f.device for f in s.connection.far]) for s in whole.segments] == [
        ("p1/0", ["gpu-001"]), ("p1/1", ["gpu-002"])]


def test_an_uncabled_port_has_no_segment(dual, customer):
    assert port_trace(user=customer, pk=dual.port(dual.leaf_a, "p4").pk).segments == []


def test_the_trace_is_scoped(dual, outsider, manager):
    from django.http import Http404

    foreign_port = dual.port(dual.foreign, "p1/0")
    with pytest.raises(Http404):
        port_trace(user=outsider, pk=dual.port(dual.gpu1, "ib0").pk)
    with pytest.raises(Http404):
        port_trace(user=manager, pk=foreign_port.pk)
    with pytest.raises(Http404):  # a port of a project the user sees, asked for under another project
        port_trace(user=manager, project=dual.project, pk=foreign_port.pk)


def test_a_trace_costs_at_most_four_queries_whatever_the_port(dual, customer):
    """The port, its lanes (none to read for a lane), the cable ends on them, every end of those cables
    (none to read for an uncabled port)."""
    names = [(dual.gpu1, "ib0"), (dual.gpu1, "ib0/1"), (dual.gpu1, "ib1"), (dual.leaf_a, "p1"), (dual.leaf_a, "p4")]
    ports = {name: dual.port(device, name).pk for device, name in names}
    counts = {name: count_queries(lambda pk=pk: port_trace(user=customer, pk=pk)) for name, pk in ports.items()}
    assert counts == {"ib0": 4, "ib0/1": 3, "ib1": 4, "p1": 4, "p4": 3}


# --- the page ------------------------------------------------------------------------------------


def trace_url(project, port):
    return reverse("cabling:port-trace", args=[project.code, port.pk])


def test_trace_page_shows_every_far_end(client_for, customer, dual):
    response = client_for(customer).get(trace_url(dual.project, dual.port(dual.gpu1, "ib0")))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'data-cable="D00001"' in body and 'data-from="ib0"' in body
    assert 'data-far="leaf-a:p1/0" data-leg="B1"' in body and 'data-far="leaf-b:p1/0" data-leg="B2"' in body
    assert reverse("cabling:port-trace", args=[dual.project.code, dual.port(dual.leaf_b, "p1/0").pk]) in body
    assert "MT-LEAF-A-P1" in body
    empty = client_for(customer).get(trace_url(dual.project, dual.port(dual.leaf_a, "p4"))).content.decode()
    assert 'id="no-cable"' in empty


def test_trace_page_access(client, client_for, dual, outsider, manager, technician):
    address = trace_url(dual.project, dual.port(dual.gpu1, "ib0"))
    assert client.get(address).status_code == 302
    assert client_for(outsider).get(address).status_code == 404
    assert client_for(technician).get(address).status_code == 200
    foreign = trace_url(dual.project, dual.port(dual.foreign, "p1/0"))
    assert client_for(manager).get(foreign).status_code == 404


def test_trace_page_queries_do_not_grow(client_for, customer, dual, django_assert_num_queries):
    client = client_for(customer)
    one_cable, two_cables = trace_url(dual.project, dual.port(dual.gpu1, "ib0")), trace_url(
        dual.project, dual.port(dual.gpu1, "ib1"))
    few = count_queries(lambda: client.get(one_cable))
    with django_assert_num_queries(few):
        assert client.get(two_cables).status_code == 200


# --- the API -------------------------------------------------------------------------------------


def test_api_trace_of_a_gpu_port(api_for, customer, dual):
    port = dual.port(dual.gpu1, "ib0")
    response = api_for(customer).get(f"/api/traces/{port.pk}/")
    assert response.status_code == 200
    data = response.json()
    assert data["port"] == {"id": port.pk, "device": "gpu-001", "device_id": dual.gpu1.pk, "name": "ib0",
                            "lane": None, "plane": None, "parent_id": None, "status": "planned"}
    (segment,) = data["segments"]
    assert segment["from_port"]["name"] == "ib0" and segment["via_parent"] is False
    assert segment["cable"]["label"] == "D00001" and segment["end"]["leg"] == "A"
    assert [(f["leg"], f["device"], f["port"], f["lane"], f["plane"], f["tag"]) for f in segment["far_ends"]] == [
        ("B1", "leaf-a", "p1/0", 0, 0, "D01-U40-leaf-a-p1/0"), ("B2", "leaf-b", "p1/0", 0, 1, "D01-U41-leaf-b-p1/0")]
    assert segment["far_ends"][0]["optic"] == "MT-LEAF-A-P1"


def test_api_lists_cabled_ports_with_their_far_ends(api_for, customer, dual):
    api = api_for(customer)
    dual.breakout.fabric_state = FabricState.MISWIRED
    dual.breakout.save()
    data = api.get("/api/traces/", {"device": dual.gpu1.pk}).json()
    rows = {row["name"]: row for row in data["results"]}
    assert set(rows) == {"ib0", "ib1/0", "ib1/1"} and len(data["results"]) == 3 and data["next"] is None
    assert rows["ib0"]["connection"]["cable"]["fabric_state"] == "miswired"
    assert [f["device"] for f in rows["ib0"]["connection"]["far_ends"]] == ["leaf-a", "leaf-b"]
    assert [f["port"] for f in rows["ib1/1"]["connection"]["far_ends"]] == ["p2/0"]
    by_cable = api.get("/api/traces/", {"cable": "D00002", "project": dual.project.code}).json()["results"]
    assert sorted(row["device"] + ":" + row["name"] for row in by_cable) == ["gpu-002:ib0", "leaf-a:p1/1",
                                                                            "leaf-b:p1/1"]
    assert api.get("/api/traces/", {"project": "OTHER-8"}).json()["results"] == []


def test_api_is_scoped(api_for, client, outsider, dual):
    port = dual.port(dual.gpu1, "ib0")
    api = api_for(outsider)
    assert api.get(f"/api/traces/{port.pk}/").status_code == 404
    assert api.get("/api/traces/", {"project": dual.project.code}).json()["results"] == []
    assert client.get(f"/api/traces/{port.pk}/").status_code in (401, 403)


@pytest.mark.parametrize("params", [{"device": "\u00b2"}, {"device": "1" * 5000}, {"cable": "C" * 5000},
                                    {"project": "P" * 5000}, {"device": "-1"}])
def test_api_bad_filters_are_400s(api_for, customer, dual, params):
    response = api_for(customer).get("/api/traces/", params)
    assert response.status_code == 400, response.content


@pytest.mark.parametrize("name", ["project", "cable"])
def test_api_a_nul_byte_in_a_text_filter_is_a_400_naming_it(api_for, customer, dual, name):
    """PostgreSQL refuses NUL in text (a 500 if the query got it); SQLite would just match nothing."""
    response = api_for(customer).get("/api/traces/", {name: "C0\x001"})
    assert response.status_code == 400, response.content
    assert "NUL" in response.json()[name][0]


@pytest.mark.parametrize("pk", ["\u00b2", "1" * 40, "abc"])
def test_api_a_port_id_that_is_not_a_number_is_a_404(api_for, customer, dual, pk):
    """A path that names no port, as on every other detail route (never a 500)."""
    response = api_for(customer).get(f"/api/traces/{pk}/")
    assert response.status_code == 404 and set(response.json()) == {"detail"}


def test_api_list_queries_do_not_grow(api_for, customer, project, add_cables, django_assert_num_queries):
    api = api_for(customer)
    add_cables(project, 3, 0)
    few = count_queries(lambda: api.get("/api/traces/", {"project": project.code}))
    add_cables(project, 40, 3)
    with django_assert_num_queries(few):
        data = api.get("/api/traces/", {"project": project.code}).json()
    assert len(data["results"]) == 86 and data["next"] is None
