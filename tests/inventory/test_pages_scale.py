"""The leaf switch page at scale (issue 11): a 721-port leaf whose every lane is cabled costs the queries of
the same leaf with three cables, and its page stays one page of ports (the HTML does not grow with the
cabling); outsiders get 404."""

from decimal import Decimal

import pytest
from django.urls import reverse

from cabling.choices import CableType
from cabling.models import Cable, CableEnd
from inventory.choices import DeviceRole, Network
from inventory.models import Port
from inventory.services import device_create
from tests.factories import RackFactory, gpu_server_model
from tests.support import count_queries

from .test_pages_ports import cable, device_page, far, row, shown, xdr_leaf_model

pytestmark = pytest.mark.django_db


@pytest.fixture
def leafy(project):
    """A 721-port XDR leaf (144 ports of four lanes, and mgmt) with three cables to a GPU server."""
    rack = RackFactory(project=project, name="C01")
    leaf = device_create(project=project, hardware_model=xdr_leaf_model(), name="ib-leaf-01", rack=rack,
                         position_u=40, role=DeviceRole.LEAF)
    gpu = device_create(project=project, hardware_model=gpu_server_model(), name="gpu-001", rack=rack, position_u=1,
                        role=DeviceRole.GPU_NODE)
    ports = {(p.device_id, p.name): p for p in Port.objects.filter(device__in=[leaf, gpu])}
    cable(project, "C00001", ports[(gpu.pk, "ib0")], ports[(leaf.pk, "p1")])
    cable(project, "C00002", ports[(gpu.pk, "ib1/0")], ports[(leaf.pk, "p144/0")])
    cable(project, "C00003", ports[(gpu.pk, "ib2")], ports[(leaf.pk, "p143/0")], ports[(leaf.pk, "p143/1")])
    return leaf, gpu


def cable_every_lane(project, leaf) -> int:
    """Join lane l of port p(i) to lane l of port p(i + 72) for i in 1..72: every one of the 576 lanes
    carries a cable (288 cables), as on a fully built XDR leaf. Bulk inserted: the page is measured, not
    the set-up."""
    lanes = {(port.parent.name, port.lane): port for port in
             Port.objects.filter(device=leaf, parent__isnull=False, cable_end__isnull=True).select_related("parent")}
    pairs = [(lanes[(f"p{i}", lane)], lanes[(f"p{i + 72}", lane)]) for i in range(1, 73) for lane in range(4)
             if (f"p{i}", lane) in lanes and (f"p{i + 72}", lane) in lanes]
    cables = Cable.objects.bulk_create(
        Cable(project=project, label=f"L{n:05d}", network=Network.COMPUTE, cable_type=CableType.DAC,
              length_m=Decimal("1.0"), speed_gbps=200) for n in range(len(pairs)))
    CableEnd.objects.bulk_create(end for made, (a, b) in zip(cables, pairs, strict=True)
                                 for end in (CableEnd(cable=made, side="A", port=a),
                                             CableEnd(cable=made, side="B", port=b)))
    return len(cables)


def test_a_fully_cabled_721_port_leaf_costs_what_a_barely_cabled_one_costs(client_for, technician, project, leafy,
                                                                          django_assert_num_queries):
    leaf = leafy[0]
    client = client_for(technician)
    device_page(client, project, leaf)  # warm
    few = count_queries(lambda: device_page(client, project, leaf))
    assert cable_every_lane(project, leaf) > 280
    for params in ({}, {"ports_page": "5"}, {"ports_q": "p7"}):
        with django_assert_num_queries(few):
            body = device_page(client, project, leaf, **params)
    first = device_page(client, project, leaf)
    assert len(shown(first)) == 16 and far(row(first, "p2/3")) == ["ib-leaf-01:p74/3"]
    # One page of ports (16, with their 64 lanes) and their far ends, never the whole leaf's 721 rows.
    assert len(first) < 100_000
    assert body


def test_outsiders_get_404_on_the_leaf_page(client_for, outsider, project, leafy):
    leaf = leafy[0]
    response = client_for(outsider).get(reverse("inventory:device-detail", args=[project.code, leaf.pk]))
    assert response.status_code == 404
