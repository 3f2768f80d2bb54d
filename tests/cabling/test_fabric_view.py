"""The fabric view: tiers and link counts per network and plane, computed from the database in a constant
number of queries; the SVG carries the same figures as the table; units are found from the node-leaf
links; switches show in the rack elevation like any device."""

import re
import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse

from cabling.exports.fabric_svg import Unit, _units, fabric_svg, fabric_views
from tests.support import count_queries

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


def figures(view) -> dict:
    return {
        "devices": dict(view.devices),
        "units": [(u.nodes, u.leaves) for u in view.units],
        "links": {(link.lower, link.upper): (link.links, link.cables) for link in view.links},
    }


def test_figures_per_network_and_plane(fabric, customer):
    views = fabric_views(user=customer, project=fabric.project)
    assert [(v.network, v.plane) for v in views] == [("compute", 0), ("compute", 1), ("oob", None)]
    plane0, plane1, oob = views
    # Plane 0: C00001, C00003 and leg B1 of the breakout C00005 reach leaf-01; C00006 joins it to the spine,
    # whose ports have no plane: the link takes the cable's.
    assert figures(plane0) == {
        "devices": {"node": 3, "leaf": 1, "spine": 1},
        "units": [(3, 1)],
        "links": {("node", "leaf"): (3, 3), ("leaf", "spine"): (1, 1)},
    }
    assert figures(plane1) == figures(plane0)
    assert figures(oob) == {"devices": {"node": 1, "leaf": 1}, "units": [(1, 1)],
                            "links": {("node", "leaf"): (1, 1)}}
    assert oob.plane_label == "planes shared"


def test_a_breakout_without_a_plane_anywhere_is_counted_once_per_leg_as_shared(fabric, manager):
    from inventory.models import Port

    Port.objects.filter(device__in=[fabric.leaf1, fabric.leaf2]).update(plane=None)
    views = {(v.network, v.plane): v for v in fabric_views(user=manager, project=fabric.project, network="compute")}
    # Single-plane cables still take the cable's plane; the breakout's two legs fall back to its A port: none.
    shared = views[("compute", None)]
    assert figures(shared)["links"] == {("node", "leaf"): (2, 1)}
    assert figures(shared)["devices"] == {"node": 1, "leaf": 2}
    assert figures(views[("compute", 0)])["links"] == {("node", "leaf"): (2, 2), ("leaf", "spine"): (1, 1)}


def test_a_switch_management_port_makes_it_a_node_of_the_oob_network(fabric, manager):
    from .conftest import connect, ports_of

    connect(fabric.project, "O00002", ports_of(fabric.spine)["mgmt"], ports_of(fabric.leaf2)["mgmt"],
            network="oob", cable_type="cat6", length="3.0", speed=1)
    oob = fabric_views(user=manager, project=fabric.project, network="oob")[0]
    # spine-01 is a spine of the compute network but only plugs its management port into the oob one.
    assert figures(oob) == {"devices": {"node": 2, "leaf": 2}, "units": [(1, 1), (1, 1)],
                            "links": {("node", "leaf"): (2, 2)}}
    compute = fabric_views(user=manager, project=fabric.project, network="compute")
    assert all(v.devices.get("spine") == 1 for v in compute)


def test_units_are_the_connected_groups_of_nodes_and_leaves():
    # Two rail-optimized units of two servers and two rails each, plus a server cabled to one leaf only.
    pairs = {("gpu-1", "leaf-1"), ("gpu-1", "leaf-2"), ("gpu-2", "leaf-1"), ("gpu-2", "leaf-2"),
             ("gpu-10", "leaf-3"), ("gpu-10", "leaf-4"), ("gpu-3", "leaf-3"), ("gpu-3", "leaf-4"),
             ("gpu-20", "leaf-9")}
    assert _units(pairs) == [Unit("gpu-1", 2, 2), Unit("gpu-3", 2, 2), Unit("gpu-20", 1, 1)]


def test_svg_carries_the_tier_and_link_counts(fabric, customer):
    plane0 = fabric_views(user=customer, project=fabric.project)[0]
    svg = ET.fromstring(fabric_svg(plane0))
    assert (svg.get("data-network"), svg.get("data-plane")) == ("compute", "0")
    tiers = {g.get("data-tier"): g for g in svg.iter(f"{SVG}g") if g.get("class") == "tier"}
    assert {tier: g.get("data-count") for tier, g in tiers.items()} == {"node": "3", "leaf": "1", "spine": "1"}
    texts = {tier: " ".join(t.text for t in g.iter(f"{SVG}text")) for tier, g in tiers.items()}
    assert "3 nodes in 1 unit" in texts["node"] and "1 leaf" in texts["leaf"] and "1 spine" in texts["spine"]
    links = {(g.get("data-lower"), g.get("data-upper")): g for g in svg.iter(f"{SVG}g") if "link" in g.get("class")}
    assert {k: g.get("data-links") for k, g in links.items()} == {("node", "leaf"): "3", ("leaf", "spine"): "1"}
    assert "3 links" in " ".join(t.text for t in links[("node", "leaf")].iter(f"{SVG}text"))
    # Tiers are drawn top-down: spine above leaf above nodes.
    ys = {tier: float(g.find(f"{SVG}rect").get("y")) for tier, g in tiers.items()}
    assert ys["spine"] < ys["leaf"] < ys["node"]


def test_many_units_are_summarised(fabric):
    from cabling.exports.fabric_svg import FabricView

    view = FabricView(network="compute", plane=0, devices={"node": 40, "leaf": 20},
                      units=[Unit(f"gpu-{i:03d}", 2, 1) for i in range(20)])
    svg = ET.fromstring(fabric_svg(view))
    units = [g for g in svg.iter(f"{SVG}g") if (g.get("class") or "").startswith("unit")]
    assert len(units) == 16 and units[-1].get("class") == "unit more"
    assert "+5" in "".join(t.text for t in units[-1].iter(f"{SVG}text"))


def fabric_page(client, project, **params):
    response = client.get(reverse("cabling:fabric", args=[project.code]), params)
    assert response.status_code == 200
    return response.content.decode()


def test_page_shows_svg_and_table_with_the_same_figures(client_for, customer, fabric):
    body = fabric_page(client_for(customer), fabric.project)
    section = re.search(r'<section class="card fabric" data-network="compute" data-plane="1">(.*?)</section>',
                        body, re.S).group(1)
    assert '<svg xmlns="http://www.w3.org/2000/svg"' in section and 'data-links="3"' in section
    assert re.search(r'<tr data-tier="node"><td>node</td><td class="count">3</td>', section)
    assert re.search(r'<tr data-link="node-leaf">.*?<td class="links">3</td><td class="cables">3</td>', section)
    assert re.search(r'<tr data-tier="units">.*?<td class="count">1</td>', section)
    assert 'data-network="oob" data-plane="shared"' in body
    assert "foreign-sw" not in body
    only_oob = fabric_page(client_for(customer), fabric.project, network="oob")
    assert 'data-network="oob"' in only_oob and 'data-network="compute"' not in only_oob


def test_svg_download(client_for, customer, fabric):
    client = client_for(customer)
    address = reverse("cabling:fabric-svg", args=[fabric.project.code])
    response = client.get(address, {"network": "compute", "plane": "1"})
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert 'filename="ACME-72-fabric-compute-1.svg"' in response["Content-Disposition"]
    assert ET.fromstring(response.content).get("data-plane") == "1"
    assert client.get(address, {"network": "oob", "plane": "shared"}).status_code == 200
    assert client.get(address, {"network": "storage", "plane": "0"}).status_code == 404
    bad = client.get(address, {"network": "compute", "plane": "x"})
    assert bad.status_code == 400 and b"plane" in bad.content
    assert client.get(address, {"network": "bogus"}).status_code == 400


@pytest.mark.parametrize("plane", ["\u00b2", "\u0663", "1" * 5000, "-1", " 1", "1.0", "shared0"])
def test_a_plane_that_is_not_a_plain_number_is_a_400_naming_it(client_for, customer, fabric, plane):
    """"²" passes str.isdigit() and "٣" is a digit to int(); 5,000 digits are too many for int(): each
    was a 500 or a silent guess. Only ASCII digits (or "shared") are a plane."""
    address = reverse("cabling:fabric-svg", args=[fabric.project.code])
    response = client_for(customer).get(address, {"network": "compute", "plane": plane})
    assert response.status_code == 400
    assert b"Give a network and a plane" in response.content


def test_outsiders_get_404_on_the_fabric_page_and_svg(client_for, outsider, fabric):
    client = client_for(outsider)
    assert client.get(reverse("cabling:fabric", args=[fabric.project.code])).status_code == 404
    address = reverse("cabling:fabric-svg", args=[fabric.project.code])
    assert client.get(address, {"network": "compute", "plane": "\u00b2"}).status_code == 404


def test_units_sort_names_with_digits_other_than_ascii():
    pairs = {("gpu-10", "leaf-1"), ("gpu-2", "leaf-2"), ("\u00b2", "leaf-3"), ("gpu\u0663", "leaf-4")}
    assert [unit.first_node for unit in _units(pairs)] == ["gpu-2", "gpu-10", "gpu\u0663", "\u00b2"]


def test_fabric_queries_do_not_grow_with_cables(project, manager, add_cables, client_for,
                                                django_assert_num_queries):
    def queries() -> int:
        return count_queries(lambda: fabric_views(user=manager, project=project))

    add_cables(project, 5, 0)
    few = queries()
    add_cables(project, 45, 5)
    assert queries() == few == 2
    client = client_for(manager)
    fabric_page(client, project)
    few = count_queries(lambda: fabric_page(client, project))
    add_cables(project, 10, 50)
    with django_assert_num_queries(few):
        body = fabric_page(client, project)
    assert re.search(r'<tr data-link="node-leaf">.*?<td class="links">30</td>', body)  # plane 0: half of 60


def test_switches_appear_in_the_rack_elevation(client_for, customer, fabric):
    body = client_for(customer).get(reverse("inventory:rack-detail", args=[fabric.project.code,
                                                                         fabric.network_rack.pk])).content.decode()
    for name in ("leaf-01", "leaf-02", "spine-01"):
        assert f'data-device="{name}"' in body


# --- links coloured by the latest fabric comparison -------------------------------------------------


def test_links_are_counted_per_fabric_state(fabric, customer):
    from cabling.choices import FabricState

    for cable, state in ((fabric.c1, FabricState.OK), (fabric.c3, FabricState.MISWIRED),
                         (fabric.c6, FabricState.DEGRADED), (fabric.c2, FabricState.MISSING)):
        cable.fabric_state = state
        cable.save()
    plane0, plane1, oob = fabric_views(user=customer, project=fabric.project)
    states = {(link.lower, link.upper): link.states for link in plane0.links}
    # Plane 0: C00001 ok, C00003 miswired, the breakout's leg B1 never compared; C00006 degraded.
    assert states == {("node", "leaf"): {"ok": 1, "miswired": 1, "unknown": 1}, ("leaf", "spine"): {"degraded": 1}}
    assert {(link.lower, link.upper): link.states for link in plane1.links}[("node", "leaf")] == {
        "missing": 1, "unknown": 2}
    node_leaf = next(link for link in plane0.links if link.upper == "leaf")
    assert node_leaf.links == 3 and node_leaf.cables == 3  # the state splits nothing else
    assert [state for state, _, n in node_leaf.state_counts if n] == ["ok", "miswired", "unknown"]

    svg = ET.fromstring(fabric_svg(plane0))
    link = next(g for g in svg.iter(f"{SVG}g") if g.get("class") == "link" and g.get("data-upper") == "leaf")
    segments = [(g.get("data-state"), g.get("data-links"), g.find(f"{SVG}line").get("style"))
                for g in link.iter(f"{SVG}g") if g.get("class") == "state"]
    assert segments == [("ok", "1", "stroke:#2e7d32"), ("miswired", "1", "stroke:#8e24aa"),
                        ("unknown", "1", "stroke:#9aa3b1")]
    assert "1 miswired" in " ".join(t.text for t in link.iter(f"{SVG}text"))
    legend = [r.get("data-state") for r in svg.iter(f"{SVG}rect") if r.get("data-state")]
    assert legend == ["ok", "missing", "miswired", "degraded", "unknown"]


def test_fabric_page_has_a_legend_and_counts_per_state(client_for, customer, fabric):
    from cabling.choices import FabricState

    fabric.c3.fabric_state = FabricState.MISWIRED
    fabric.c3.save()
    body = fabric_page(client_for(customer), fabric.project)
    assert '<ul class="legend" aria-label="Link states">' in body and "Not compared yet" in body
    section = re.search(r'data-network="compute" data-plane="0">(.*?)</section>', body, re.S).group(1)
    node_leaf = re.search(r'<tr data-link="node-leaf">(.*?)</tr>', section, re.S).group(1)
    assert re.findall(r'<td class="state" data-state="(\w+)">(?:<span[^>]*>)?(\d+)', node_leaf) == [
        ("ok", "0"), ("missing", "0"), ("miswired", "1"), ("degraded", "0"), ("unknown", "2")]


def test_fabric_queries_stay_two_with_states(project, manager, add_cables):
    from cabling.choices import FabricState
    from cabling.models import Cable

    add_cables(project, 20, 0)
    for i, cable in enumerate(Cable.objects.filter(project=project)):
        cable.fabric_state = list(FabricState)[i % 4]
        cable.save()
    assert count_queries(lambda: fabric_views(user=manager, project=project)) == 2
