"""The fabric view at scale (issue 11): the page and the SVG read the links in ONE query (fold in Python),
so their query counts are the same for 5 cables or 60; the figures of the fold match what the links say;
the charts' text is at least 12 px; outsiders get 404 on both."""

import re
import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse

from cabling.exports.fabric_svg import fabric_svg, fabric_views
from tests.support import count_queries

from .conftest import connect, ports_of

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


def page(client, project, **params):
    response = client.get(reverse("cabling:fabric", args=[project.code]), params)
    assert response.status_code == 200
    return response.content.decode()


def svg(client, project, plane="0"):
    response = client.get(reverse("cabling:fabric-svg", args=[project.code]), {"network": "compute", "plane": plane})
    assert response.status_code == 200
    return response.content.decode()


def node_leaf_links(body: str, plane: str) -> str:
    section = re.search(rf'data-network="compute" data-plane="{plane}">(.*?)</section>', body, re.S).group(1)
    return re.search(r'<tr data-link="node-leaf">.*?<td class="links">(\d+)</td>', section, re.S).group(1)


def test_the_page_and_the_svg_cost_the_same_queries_for_5_or_60_cables(project, manager, add_cables, client_for,
                                                                      django_assert_num_queries):
    client = client_for(manager)
    add_cables(project, 5, 0)
    page(client, project)  # warm: the session and the project's first reads
    few_page = count_queries(lambda: page(client, project))
    few_svg = count_queries(lambda: svg(client, project))
    add_cables(project, 55, 5)
    with django_assert_num_queries(few_page):
        body = page(client, project)
    with django_assert_num_queries(few_svg):
        drawing = svg(client, project)
    assert node_leaf_links(body, "0") == "30" and node_leaf_links(body, "1") == "30"
    assert 'data-links="30"' in drawing
    assert count_queries(lambda: fabric_views(user=manager, project=project)) == 2  # the ends, the devices


def test_one_query_gives_what_five_gave(fabric, manager):
    """Devices per tier, units, links and cables per tier pair: the fixture's figures from one query."""
    plane0, plane1, oob = fabric_views(user=manager, project=fabric.project)
    assert plane0.devices == {"node": 3, "leaf": 1, "spine": 1} and plane1.devices == plane0.devices
    assert [(u.first_node, u.nodes, u.leaves) for u in plane0.units] == [("gpu-001", 3, 1)]
    assert {(link.lower, link.upper): (link.links, link.cables) for link in plane0.links} == {
        ("node", "leaf"): (3, 3), ("leaf", "spine"): (1, 1)}
    assert oob.devices == {"node": 1, "leaf": 1}


def test_a_breakout_to_two_leaves_of_one_plane_is_one_cable_and_two_links(fabric, manager):
    from inventory.models import Port

    # Both leaves in plane 0: the breakout's legs are two links of one cable, in the same tier pair.
    Port.objects.filter(device=fabric.leaf2, name__startswith="p").update(plane=0)
    plane0 = next(v for v in fabric_views(user=manager, project=fabric.project, network="compute") if v.plane == 0)
    node_leaf = next(link for link in plane0.links if (link.lower, link.upper) == ("node", "leaf"))
    # C00001..C00004 (one link each) and the breakout C00005 (two legs): six links, five cables.
    assert (node_leaf.links, node_leaf.cables) == (6, 5)
    assert plane0.devices["leaf"] == 2 and [u.nodes for u in plane0.units] == [3]


def test_a_switch_seen_only_from_its_management_port_stays_a_node_there(fabric, manager):
    connect(fabric.project, "O00002", ports_of(fabric.spine)["mgmt"], ports_of(fabric.leaf2)["mgmt"],
            network="oob", cable_type="cat6", length="3.0", speed=1)
    oob = fabric_views(user=manager, project=fabric.project, network="oob")[0]
    assert oob.devices == {"node": 2, "leaf": 2} and len(oob.units) == 2


def test_chart_text_is_at_least_12_px(fabric, customer):
    for view in fabric_views(user=customer, project=fabric.project):
        drawing = fabric_svg(view)
        sizes = [int(size) for size in re.findall(r"font(?:-size)?:\s*(\d+)px", drawing)]
        assert sizes and min(sizes) >= 12, sizes
        ET.fromstring(drawing)  # still well-formed


def test_outsiders_get_404_on_page_and_svg(client_for, outsider, fabric):
    client = client_for(outsider)
    assert client.get(reverse("cabling:fabric", args=[fabric.project.code])).status_code == 404
    response = client.get(reverse("cabling:fabric-svg", args=[fabric.project.code]),
                          {"network": "compute", "plane": "0"})
    assert response.status_code == 404


def test_the_selector_reads_nothing_of_a_project_for_an_outsider(fabric, outsider, manager):
    """Both reads are scoped (the house rule), not only the ends: a caller that skips the view's check still
    gets no device of a project the user is not in."""
    from cabling.selectors import fabric_end_rows

    links, devices = fabric_end_rows(user=outsider, project=fabric.project)
    assert links == [] and devices == {}
    links, devices = fabric_end_rows(user=manager, project=fabric.project)
    assert links and devices
