"""The project manager's view of the floor (/p/<code>/cabling/progress/): racked devices, seated optics and
installed, verified and failed cables per rack (a heat map and a table), per network and plane, and in all;
the latest scans; each person's work today. Figures from aggregates: the page costs the same queries for
a few racks as for many. Every member reads it; outsiders get 404."""

import re
import xml.etree.ElementTree as ET
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus, FabricState, ScanAction, ScanResult
from cabling.models import ScanEvent
from cabling.selectors import floor_progress, work_since
from inventory.choices import DeviceStatus
from inventory.models import Port
from inventory.services import optic_install
from tests.factories import OpticFactory, RackFactory, UserFactory
from tests.support import count_queries

from .conftest import NODE_OPTIC, SWITCH_OPTIC

pytestmark = pytest.mark.django_db
SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def floor(fabric, technician):
    """The fabric of conftest, part done: gpu-001 racked, gpu-002 ready, leaf-01 racked; C00001 verified
    (and seen ok by the fabric), C00002 installed, C00003 faulty; an optic in gpu-001:ib0 (the cage of the
    lanes C00001 and C00002 leave from) and one in leaf-01:p1; scans by the technician today."""
    for device, status in ((fabric.gpu1, DeviceStatus.RACKED), (fabric.gpu2, DeviceStatus.READY),
                           (fabric.leaf1, DeviceStatus.RACKED)):
        device.status = status
        device.save()
    now = timezone.now()
    for cable, status in ((fabric.c1, CableStatus.VERIFIED), (fabric.c2, CableStatus.INSTALLED),
                          (fabric.c3, CableStatus.FAULTY)):
        cable.status = status
        cable.save()
    fabric.c1.fabric_state, fabric.c1.verified_by, fabric.c1.verified_at = FabricState.OK, technician, now
    fabric.c1.save()
    optic_install(optic=OpticFactory(project=fabric.project, part_number=NODE_OPTIC),
                  port=Port.objects.get(device=fabric.gpu1, name="ib0"))
    optic_install(optic=OpticFactory(project=fabric.project, part_number=SWITCH_OPTIC),
                  port=Port.objects.get(device=fabric.leaf1, name="p1"))

    def scan(user, action, result, code, **targets):
        return ScanEvent.objects.create(project=fabric.project, user=user, action=action, result=result,
                                        raw_code=code, reason=f"{code}: {result}", **targets)

    fabric.scans = [
        scan(technician, ScanAction.RACK, ScanResult.ACCEPTED, "SN-GPU-1", device=fabric.gpu1),
        scan(technician, ScanAction.CABLE_END, ScanResult.ACCEPTED, "C00001/A", cable=fabric.c1),
        scan(technician, ScanAction.CABLE_END, ScanResult.ACCEPTED, "C00001/B", cable=fabric.c1),
        scan(technician, ScanAction.OPTIC, ScanResult.REFUSED, "MT-WRONG"),
    ]
    yesterday = UserFactory(username="nightshift")
    old = scan(yesterday, ScanAction.RACK, ScanResult.ACCEPTED, "SN-OLD", device=fabric.gpu2)
    ScanEvent.objects.filter(pk=old.pk).update(created_at=now - timedelta(days=2))
    fabric.technician = technician
    return fabric


def counts(progress, *names):
    return tuple(getattr(progress, name) for name in names)


FIGURES = ("devices", "racked", "optics_needed", "optics_seated", "cables", "installed", "verified", "failed",
           "fabric_ok")


def test_progress_per_rack_plane_and_in_all(floor, customer):
    progress = floor_progress(user=customer, project=floor.project)
    racks = {rack.name: counts(rack, *FIGURES) for rack in progress.racks}
    # A01: three servers (two racked), six cable ends (C00001-5 A ends and the BMC cable), five of them
    # needing a node optic, two seated (C00001 and C00002 leave lanes of the optic's cage).
    assert racks["A01"] == (3, 2, 5, 2, 6, 3, 1, 1, 1)
    # N01: three switches (leaf-01 racked), eleven ends, six needing a switch optic (the AOCs need none).
    assert racks["N01"] == (3, 1, 6, 1, 11, 3, 1, 1, 1)
    assert "X01" not in racks  # another project's rack
    planes = {(p.network, p.plane): counts(p, *FIGURES[2:]) for p in progress.planes}
    assert list(planes) == [("compute", None), ("compute", 0), ("compute", 1), ("oob", None)]
    assert planes[("compute", 0)] == (4, 2, 3, 2, 1, 1, 1)
    assert planes[("compute", 1)] == (4, 1, 3, 1, 0, 0, 0)
    assert planes[("compute", None)] == (3, 0, 1, 0, 0, 0, 0)  # the breakout: A end and two legs
    assert planes[("oob", None)] == (0, 0, 1, 0, 0, 0, 0)
    assert counts(progress.total, *FIGURES) == (6, 3, 11, 3, 8, 3, 1, 1, 1)
    assert progress.total.percent("verified") == 12 and progress.racks[0].percent("racked") == 66


def test_an_optic_counts_seated_in_the_end_s_own_port_or_in_its_cage(floor, customer):
    """The two ways a lane's transceiver is found: in the cage it belongs to (gpu-001:ib0, above) or, put
    there by hand, in the lane port itself; an end that counts no transceiver adds nothing either way."""
    lane = Port.objects.get(device=floor.gpu2, name="ib0/0")  # C00003's A end; its cage ib0 is empty
    optic_install(optic=OpticFactory(project=floor.project, part_number=NODE_OPTIC), port=lane)
    racks = {rack.name: rack for rack in floor_progress(user=customer, project=floor.project).racks}
    assert (racks["A01"].optics_needed, racks["A01"].optics_seated) == (5, 3)
    floor.c3.ends.filter(port=lane).update(optic_count=0)  # another end of the cage counts it
    racks = {rack.name: rack for rack in floor_progress(user=customer, project=floor.project).racks}
    assert (racks["A01"].optics_needed, racks["A01"].optics_seated) == (4, 2)


def test_progress_of_one_network(floor, customer):
    progress = floor_progress(user=customer, project=floor.project, network="oob")
    assert [(p.network, p.plane, p.cables) for p in progress.planes] == [("oob", None, 1)]
    racks = {rack.name: (rack.devices, rack.cables) for rack in progress.racks}
    assert racks == {"A01": (3, 1), "N01": (3, 1)}  # every device has an out-of-band port


def test_work_today_per_person(floor, manager):
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    (person,) = work_since(user=manager, project=floor.project, since=today)
    assert (person.username, person.scans, person.racked, person.optics, person.ends, person.verified,
            person.refused) == ("tech", 4, 1, 0, 2, 1, 1)
    assert len(work_since(user=manager, project=floor.project, since=today - timedelta(days=3))) == 2


def progress_url(project, **params):
    address = reverse("cabling:progress", args=[project.code])
    return address + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def test_progress_page(client_for, customer, floor):
    response = client_for(customer).get(progress_url(floor.project))
    assert response.status_code == 200
    body = response.content.decode()
    tile = re.search(r'<div class="tile" data-stage="verified">.*?</div>', body, re.S).group(0)
    assert "12%" in tile and 'data-done="1" data-total="8"' in tile
    rack = re.search(r'<tr data-rack="A01" class="flagged">.*?</tr>', body, re.S).group(0)
    assert 'data-done="2" data-total="3"' in rack and 'data-done="2" data-total="5"' in rack
    plane = re.search(r'<tr data-network="compute" data-plane="0">.*?</tr>', body, re.S).group(0)
    assert 'data-done="2" data-total="3"' in plane and '<td class="fabric-ok">1</td>' in plane
    # The latest scans, newest first, and today's work.
    scans = re.findall(r'<tr data-scan="(\d+)"', body)
    assert scans[:4] == [str(s.pk) for s in reversed(floor.scans)]
    person = re.search(r'<tr data-user="tech">.*?</tr>', body, re.S).group(0)
    assert '<td class="scans">4</td>' in person and '<td class="verified">1</td>' in person
    assert "nightshift" not in body.split('id="today"')[1].split("</section>")[0]


def heatmap(body) -> dict:
    svg = ET.fromstring(re.search(r'<figure class="heatmap">(.*?)</figure>', body, re.S).group(1))
    return {g.get("data-rack"): (g.get("data-done"), g.get("data-total"), "failed" in g.get("class"))
            for g in svg.iter(f"{SVG}g") if g.get("data-rack")}


def test_heat_map_colours_racks_by_the_chosen_stage(client_for, manager, floor):
    client = client_for(manager)
    verified = heatmap(client.get(progress_url(floor.project)).content.decode())
    assert verified == {"A01": ("1", "6", True), "N01": ("1", "11", True)}
    racked = client.get(progress_url(floor.project, stage="racked")).content.decode()
    assert heatmap(racked) == {"A01": ("2", "3", True), "N01": ("1", "3", True)}
    assert '<option value="racked" selected>' in racked
    links = re.findall(r'<a href="([^"]+)"><g class="rack', racked)
    assert reverse("inventory:rack-detail", args=[floor.project.code, floor.servers_rack.pk]) in links


@pytest.mark.parametrize("params", [{"network": "bogus"}, {"stage": "melted"}, {"stage": "x" * 5000}])
def test_a_bad_choice_is_a_400_naming_it(client_for, customer, floor, params):
    response = client_for(customer).get(progress_url(floor.project), params)
    assert response.status_code == 400 and next(iter(params)).encode() in response.content


def test_progress_access(client, client_for, outsider, technician, customer, floor):
    address = progress_url(floor.project)
    assert client.get(address).status_code == 302
    assert client_for(outsider).get(address).status_code == 404
    assert client_for(technician).get(address).status_code == 200


def test_progress_is_linked_from_the_nav_and_the_project_home(client_for, customer, floor):
    body = client_for(customer).get(reverse("delivery:project-home", args=[floor.project.code])).content.decode()
    nav = body[body.index('<nav class="projectnav"'):body.index("</nav>")]
    assert f'href="{progress_url(floor.project)}"' in nav
    main = body[body.index("<main>"):]
    assert f'href="{progress_url(floor.project)}"' in main


def test_progress_queries_do_not_grow(client_for, customer, floor, add_cables, technician,
                                     django_assert_num_queries):
    client = client_for(customer)
    few = count_queries(lambda: client.get(progress_url(floor.project)))
    for start in (0, 20, 40):
        add_cables(floor.project, 20, start)
        RackFactory(project=floor.project)
    for i in range(30):
        ScanEvent.objects.create(project=floor.project, user=UserFactory(), action=ScanAction.LOOKUP,
                                 result=ScanResult.FOUND, raw_code=f"Q{i:05d}")
    with django_assert_num_queries(few):
        assert client.get(progress_url(floor.project)).status_code == 200
