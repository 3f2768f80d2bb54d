"""The floor pages (cabling.floor): the worklists' counts (done / left / failed per rack, device, network
and plane, top U down), their cost (a fixed number of queries, whatever the rack holds), what a customer
and an outsider get, the rack's data the tablet keeps offline (in the scan API's shape), the service
worker and the vendored decoder. The fabric is tests/cabling/conftest.py's:

    C00001  gpu-001:ib0/0 (A01, U1-10)  ->  leaf-01:p1 (N01 U1)   optics OPT-NODE-800 / OPT-SW-2x400, plane 0
    C00002  gpu-001:ib0/1               ->  leaf-02:p1 (N01 U2)   plane 1
    C00003  gpu-002:ib0/0 (A01, U11-20) ->  leaf-01:p2             plane 0
    C00004  gpu-002:ib0/1               ->  leaf-02:p2             plane 1
    C00005  gpu-003:ib0   (A01, U21-30) ->  B1 leaf-01:p3, B2 leaf-02:p3 (a breakout, no plane)
    C00006  leaf-01:p7 -> spine-01:p1 (N01 U10)  AOC, plane 0;  C00007 leaf-02:p7 -> spine-01:p2, plane 1
    O00001  gpu-001:bmc -> leaf-01:mgmt  out-of-band
"""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.staticfiles import finders
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus, ScanAction, ScanResult
from cabling.floor.selectors import (
    Scope,
    device_worklist,
    floor_networks,
    floor_racks,
    floor_rows,
    rack_data,
    rack_worklist,
)
from cabling.models import Cable, CableEnd, ScanEvent
from inventory.choices import DeviceRole, DeviceStatus, Network, OpticStatus
from inventory.models import Device
from inventory.services import device_create
from tests.factories import OpticFactory
from tests.support import count_queries

from .conftest import NODE_OPTIC, SWITCH_OPTIC, ports_of, switch_model

pytestmark = pytest.mark.django_db


def floor_url(name, project, *args, query=""):
    return reverse(f"floor:{name}", args=[project.code, *args]) + (f"?{query}" if query else "")


def by_rack(racks):
    return {item.rack.name: item.work for item in racks}


# --- counts -------------------------------------------------------------------------------------------------


def test_rack_counts_follow_what_was_done_on_the_floor(fabric, technician):
    project = fabric.project
    before = by_rack(floor_racks(user=technician, project=project))
    a01 = before["A01"]
    # Three servers, racked by device_create's planned place? No: planned, not racked.
    assert (a01.devices.total, a01.devices.done, a01.devices.failed) == (3, 0, 0)
    # A01's cables: C00001-C00005 and the out-of-band cable, each once.
    assert (a01.cables.total, a01.cables.done, a01.cables.to_run, a01.cables.ends) == (6, 0, 6, 6)
    # Optics needed in A01: one cage per node port carrying a fibre (ib0 of each server: lanes share it).
    assert (a01.optics.total, a01.optics.done) == (3, 0)
    n01 = before["N01"]
    # N01 holds every leaf and spine end: C00001-C00007 and O00001 (C00005 on two leaves, C00006 and
    # C00007 with both ends there): 8 cables, 11 ends.
    assert (n01.cables.total, n01.cables.ends) == (8, 11)

    # Work happens: a server racked, one refused, an optic seated, a cable verified, another faulty.
    Device.objects.filter(pk=fabric.gpu1.pk).update(status=DeviceStatus.RACKED)
    ScanEvent.objects.create(project=project, user=technician, action=ScanAction.RACK, raw_code="x",
                             result=ScanResult.REFUSED, reason="no", device=fabric.gpu2)
    ScanEvent.objects.create(project=project, user=technician, action=ScanAction.RACK, raw_code="x",
                             result=ScanResult.REFUSED, reason="no", device=fabric.gpu1)  # refused, then done
    OpticFactory(project=project, part_number=NODE_OPTIC, status=OpticStatus.INSTALLED,
                 port=ports_of(fabric.gpu1)["ib0"])
    Cable.objects.filter(pk=fabric.c1.pk).update(status=CableStatus.VERIFIED)
    Cable.objects.filter(pk=fabric.c3.pk).update(status=CableStatus.FAULTY)
    Cable.objects.filter(pk=fabric.c4.pk).update(status=CableStatus.INSTALLED)
    CableEnd.objects.filter(cable=fabric.c4, side="A").update(confirmed_at=timezone.now())

    a01 = by_rack(floor_racks(user=technician, project=project))["A01"]
    assert (a01.devices.done, a01.devices.left, a01.devices.failed) == (1, 2, 1)  # gpu-002 refused, not done
    assert (a01.optics.done, a01.optics.left) == (1, 2)
    assert (a01.cables.done, a01.cables.failed, a01.cables.to_run, a01.cables.to_verify) == (1, 1, 3, 1)
    assert a01.cables.ends_confirmed == 1
    assert a01.cables.left == 5


def test_an_optic_refused_at_a_cage_counts_as_failed_until_one_is_seated(fabric, technician):
    cage = ports_of(fabric.gpu2)["ib0"]
    ScanEvent.objects.create(project=fabric.project, user=technician, action=ScanAction.OPTIC, raw_code="MT1",
                             result=ScanResult.REFUSED, reason="wrong part", port=cage)
    device = device_worklist(user=technician, project=fabric.project, pk=fabric.gpu2.pk)
    assert (device.work.optics.total, device.work.optics.done, device.work.optics.failed) == (1, 0, 1)
    OpticFactory(project=fabric.project, part_number=NODE_OPTIC, status=OpticStatus.INSTALLED, port=cage)
    device = device_worklist(user=technician, project=fabric.project, pk=fabric.gpu2.pk)
    assert (device.work.optics.done, device.work.optics.failed) == (1, 0)


def test_twin_port_cages_count_one_optic(fabric, technician):
    """The planner counts one transceiver per twin-port cage, on one of its two ports (optic_count 0 on
    the other): the worklist asks for one optic there, not two."""
    CableEnd.objects.filter(cable=fabric.c3, side="B").update(optic_count=0)  # leaf-01:p2 shares p1's cage
    leaf = device_worklist(user=technician, project=fabric.project, pk=fabric.leaf1.pk)
    # leaf-01 ends: p1 (C00001), p2 (C00003, counted by p1), p3 (C00005 B1), p7 (AOC: no optic), mgmt (cat6).
    assert leaf.work.optics.total == 2


def test_devices_walk_from_the_top_unit_down(fabric, technician):
    worklist = rack_worklist(user=technician, project=fabric.project, pk=fabric.servers_rack.pk)
    assert [(row.device.name, row.device.top) for row in worklist.devices] == [
        ("gpu-003", 30), ("gpu-002", 20), ("gpu-001", 10)]
    assert [row.work.cables.total for row in worklist.devices] == [1, 2, 3]  # gpu-001: C00001, C00002, O00001
    network = rack_worklist(user=technician, project=fabric.project, pk=fabric.network_rack.pk)
    assert [row.device.name for row in network.devices] == ["spine-01", "leaf-02", "leaf-01"]
    # The rack's total counts a cable once, even with both ends in the rack (C00006, C00007: leaf to spine).
    assert network.work.cables.total == 8
    assert sum(row.work.cables.total for row in network.devices) == 11


def test_a_plane_worklist_narrows_racks_devices_and_counts(fabric, technician):
    scope = Scope(Network.COMPUTE, 1)
    racks = by_rack(floor_racks(user=technician, project=fabric.project, scope=scope))
    assert set(racks) == {"A01", "N01"}
    assert racks["A01"].cables.total == 2  # C00002, C00004
    assert racks["A01"].devices.total == 0  # devices belong to no network: not counted in a plane
    assert racks["N01"].cables.total == 3  # C00002, C00004, C00007
    worklist = rack_worklist(user=technician, project=fabric.project, pk=fabric.servers_rack.pk, scope=scope)
    assert [row.device.name for row in worklist.devices] == ["gpu-002", "gpu-001"]  # gpu-003's is planeless
    oob = floor_racks(user=technician, project=fabric.project, scope=Scope(Network.OOB))
    assert {item.rack.name: item.work.cables.total for item in oob} == {"A01": 1, "N01": 1}


def test_networks_and_their_planes(fabric, technician):
    lines = {(line.network, line.plane): line for line in floor_networks(user=technician, project=fabric.project)}
    assert list(lines) == [(Network.COMPUTE, None), (Network.COMPUTE, 0), (Network.COMPUTE, 1), (Network.OOB, None)]
    assert lines[(Network.COMPUTE, None)].cables.total == 7
    assert lines[(Network.COMPUTE, 0)].cables.total == 3
    assert lines[(Network.COMPUTE, 1)].cables.total == 3
    # Three node cages, and the leaves' p1, p2 and p3 (the AOCs between leaves and spine need none).
    assert lines[(Network.COMPUTE, None)].optics.total == 3 + 6
    assert lines[(Network.COMPUTE, 0)].optics.total == 4  # C00001 and C00003, both ends
    assert lines[(Network.COMPUTE, 0)].label == "Compute (training fabric), plane 0"


def test_other_projects_work_is_never_counted(fabric, technician):
    racks = by_rack(floor_racks(user=technician, project=fabric.project))
    assert "X01" not in racks
    assert sum(work.cables.total for work in racks.values()) == 6 + 8
    with pytest.raises(Exception) as refused:
        rack_worklist(user=technician, project=fabric.project, pk=fabric.foreign.ends.first().port.device.rack_id)
    assert refused.typename == "Http404"


# --- cost ---------------------------------------------------------------------------------------------------


def grow_rack(project, rack, devices: int, start: int):
    """`devices` more switches in `rack`, each cabled to the next on four ports."""
    model = switch_model()
    made = [device_create(project=project, hardware_model=model, name=f"grow-{start + i}", rack=rack,
                          position_u=20 + i, role=DeviceRole.LEAF) for i in range(devices)]
    from .conftest import connect

    for i in range(devices - 1):
        a, b = ports_of(made[i]), ports_of(made[i + 1])
        for p in range(4, 7):
            connect(project, f"G{start + i:03d}{p}", a[f"p{p}"], b[f"p{p - 3}"], optic_a="X", optic_b="Y")


def test_pages_cost_the_same_few_queries_for_a_small_and_a_large_rack(fabric, technician, client_for):
    project, rack = fabric.project, fabric.network_rack
    client = client_for(technician)
    urls = [floor_url("home", project), floor_url("rack", project, rack.pk), floor_url("rack-data", project, rack.pk),
            floor_url("network", project, Network.COMPUTE), floor_url("device", project, fabric.leaf1.pk)]
    def cost(url):
        def get():
            assert client.get(url).status_code == 200

        return count_queries(get)

    small = {url: cost(url) for url in urls}
    grow_rack(project, rack, 6, 100)
    Device.objects.filter(rack=rack).update(status=DeviceStatus.RACKED)
    assert {url: cost(url) for url in urls} == small
    assert small[floor_url("rack", project, rack.pk)] <= 12


def test_selectors_alone_cost_fixed_queries(fabric, technician, django_assert_num_queries):
    project = fabric.project
    with django_assert_num_queries(4):
        floor_racks(user=technician, project=project)
    with django_assert_num_queries(3):
        floor_networks(user=technician, project=project)
    with django_assert_num_queries(6):
        rack_worklist(user=technician, project=project, pk=fabric.network_rack.pk)
    with django_assert_num_queries(5):
        rack_data(user=technician, project=project, pk=fabric.network_rack.pk)
    with django_assert_num_queries(4):
        floor_rows(user=technician, project=project)


# --- pages --------------------------------------------------------------------------------------------------


def test_the_home_page_lists_racks_and_networks_with_their_counts(fabric, technician, client_for):
    page = client_for(technician).get(floor_url("home", fabric.project)).content.decode()
    assert 'data-rack="A01"' in page and 'data-rack="N01"' in page and "X01" not in page
    assert f'href="{floor_url("rack", fabric.project, fabric.servers_rack.pk)}"' in page
    assert f'href="{floor_url("network", fabric.project, "compute")}?plane=1"' in page
    assert f'href="{floor_url("scan", fabric.project)}" data-start-scan' in page
    assert 'data-kind="devices" data-done="0" data-left="3" data-failed="0"' in page
    assert "data-cannot-scan" not in page


def test_a_customer_sees_the_work_and_is_told_they_cannot_scan(fabric, customer, client_for):
    client = client_for(customer)
    for url in (floor_url("home", fabric.project), floor_url("rack", fabric.project, fabric.servers_rack.pk),
                floor_url("device", fabric.project, fabric.gpu1.pk)):
        page = client.get(url).content.decode()
        assert "data-cannot-scan" in page and "you cannot scan" in page, url
        assert "data-start-scan" not in page and ">Confirm</a>" not in page, url
    scan = client.get(floor_url("scan", fabric.project)).content.decode()
    assert 'id="scan-form"' not in scan and "floor-scan.js" not in scan
    assert "only ACME-72's technicians and managers record it" in scan
    config = json.loads(re.search(r'id="floor-config" type="application/json">(.*?)</script>', scan).group(1))
    assert config["canScan"] is False


def test_an_outsider_gets_not_found_everywhere_on_the_floor(fabric, outsider, client_for):
    client = client_for(outsider)
    for url in (floor_url("home", fabric.project), floor_url("scan", fabric.project),
                floor_url("rack", fabric.project, fabric.servers_rack.pk),
                floor_url("rack-data", fabric.project, fabric.servers_rack.pk),
                floor_url("device", fabric.project, fabric.gpu1.pk), floor_url("service-worker", fabric.project)):
        assert client.get(url).status_code == 404, url


def test_a_rack_of_another_project_is_not_found_through_this_one(fabric, technician, client_for):
    foreign_rack = fabric.foreign.ends.first().port.device.rack_id
    foreign_device = fabric.foreign.ends.first().port.device_id
    client = client_for(technician)
    assert client.get(floor_url("rack", fabric.project, foreign_rack)).status_code == 404
    assert client.get(floor_url("rack-data", fabric.project, foreign_rack)).status_code == 404
    assert client.get(floor_url("device", fabric.project, foreign_device)).status_code == 404


@pytest.mark.parametrize(("url_args", "query", "says"), [
    (("network", "nowhere"), "", "network: no network 'nowhere'"),
    (("network", "compute"), "plane=²", "plane: '²' is not a plane number"),
    (("network", "compute"), "plane=" + "9" * 5000, "is not a plane number"),
    (("rack",), "network=compute&plane=-1", "plane: '-1' is not a plane number"),
])
def test_a_bad_filter_is_a_400_naming_it(fabric, technician, client_for, url_args, query, says):
    name, *args = url_args
    if name == "rack":
        args = [fabric.servers_rack.pk]
    response = client_for(technician).get(floor_url(name, fabric.project, *args, query=query))
    assert response.status_code == 400
    assert says in response.content.decode()


def test_a_rack_page_lists_devices_top_down_and_links_their_worklists(fabric, technician, client_for):
    page = client_for(technician).get(floor_url("rack", fabric.project, fabric.servers_rack.pk)).content.decode()
    order = [page.index(f'data-device="{name}"') for name in ("gpu-003", "gpu-002", "gpu-001")]
    assert order == sorted(order)
    assert f'href="{floor_url("device", fabric.project, fabric.gpu1.pk)}"' in page
    assert f'{floor_url("scan", fabric.project)}?rack={fabric.servers_rack.pk}' in page
    assert "data-offline-rack" in page


def test_a_device_page_shows_its_ends_with_far_ends_and_a_port_row(fabric, technician, client_for):
    page = client_for(technician).get(floor_url("device", fabric.project, fabric.gpu3.pk)).content.decode()
    # The breakout's A end, with both far legs named.
    assert 'data-end="C00005/A"' in page
    assert "N01 U1 · leaf-01 <b>p3</b>" in page and "N01 U2 · leaf-02 <b>p3</b>" in page
    assert "code=C00005/A" in page  # the Confirm link starts the scan flow with this end's code
    assert "needs optic OPT-NODE-800" in page
    data = json.loads(re.search(r'id="port-row-data" type="application/json">(.*?)</script>', page).group(1))
    ports = {row[1]: dict(zip(data["fields"], row, strict=True)) for row in data["ports"]}
    assert ports["ib0"]["label"] == "C00005" and ports["ib0"]["needs"] == NODE_OPTIC
    assert ports["ib0/1"]["parent"] == ports["ib0"]["id"] and ports["ib0/1"]["end"] is None


def test_a_device_page_pages_its_ends(fabric, technician, client_for, monkeypatch):
    from cabling.floor import views

    grow_rack(fabric.project, fabric.network_rack, 2, 200)
    device = Device.objects.get(name="grow-200")  # three ends: p4, p5, p6
    monkeypatch.setattr(views, "ENDS_PER_PAGE", 2)
    client = client_for(technician)
    first = client.get(floor_url("device", fabric.project, device.pk)).content.decode()
    second = client.get(floor_url("device", fabric.project, device.pk, query="page=2")).content.decode()
    assert first.count('class="work-row end-row') == 2 and second.count('class="work-row end-row') == 1
    assert "page 1 of 2" in first and "page 2 of 2" in second
    assert "G2004" in first and "G2005" in first and "G2006" in second  # in port order


# --- what the tablet keeps ----------------------------------------------------------------------------------


def test_rack_data_holds_devices_ports_and_cables_in_the_scan_apis_shape(fabric, technician, client_for):
    Cable.objects.filter(pk=fabric.c1.pk).update(status=CableStatus.VERIFIED, verified_at=timezone.now(),
                                                 verified_by=technician)
    response = client_for(technician).get(floor_url("rack-data", fabric.project, fabric.servers_rack.pk),
                                          HTTP_ACCEPT_ENCODING="gzip")
    assert response.status_code == 200 and response["Content-Encoding"] == "gzip"
    import gzip

    data = json.loads(gzip.decompress(response.content))
    assert data["rack"] == {"id": fabric.servers_rack.pk, "name": "A01", "height_u": 48}
    assert [d["name"] for d in data["devices"]] == ["gpu-003", "gpu-002", "gpu-001"]
    assert data["devices"][2] | {"id": 0} == {
        "id": 0, "name": "gpu-001", "rack": "A01", "position_u": 1, "top_u": 10, "height_u": 10,
        "status": "planned", "racked": False, "serial": "", "asset_tag": ""}
    assert {c["label"] for c in data["cables"]} == {"C00001", "C00002", "C00003", "C00004", "C00005", "O00001"}
    c1 = next(c for c in data["cables"] if c["label"] == "C00001")
    assert c1["status"] == "verified" and c1["verified_by"] == "tech"
    assert [(e["code"], e["rack"], e["top_u"], e["device"], e["port"], e["optic_part"]) for e in c1["ends"]] == [
        ("C00001/A", "A01", 10, "gpu-001", "ib0/0", NODE_OPTIC), ("C00001/B", "N01", 1, "leaf-01", "p1", SWITCH_OPTIC)]
    breakout = next(c for c in data["cables"] if c["label"] == "C00005")
    assert [e["code"] for e in breakout["ends"]] == ["C00005/A", "C00005/B1", "C00005/B2"]
    # Every port of the rack's devices, lanes included, with the device they are on.
    fields = data["port_fields"]
    ports = [dict(zip(fields, row, strict=True)) for row in data["ports"]]
    assert len(ports) == 3 * len(ports_of(fabric.gpu1))
    assert {p["device"] for p in ports} == {fabric.gpu1.pk, fabric.gpu2.pk, fabric.gpu3.pk}


def test_rack_data_keys_match_the_scan_apis_cable_answer(fabric, technician):
    """The tablet shows an offline cable from rack data as it shows an online one from the API: every key
    the floor page reads is in both."""
    from cabling.api.serializers import cable_payload
    from cabling.scan_selectors import cable_list_for_api

    ours = next(c for c in rack_data(user=technician, project=fabric.project, pk=fabric.servers_rack.pk)["cables"]
                if c["label"] == "C00001")
    theirs = cable_payload(cable_list_for_api(user=technician).get(pk=fabric.c1.pk))
    assert set(ours) <= set(theirs)
    assert set(ours["ends"][0]) <= set(theirs["ends"][0])
    for key in ("id", "label", "status", "network", "plane"):
        assert ours[key] == theirs[key]
    for ours_end, their_end in zip(ours["ends"], theirs["ends"], strict=True):
        for key in ours_end:
            assert ours_end[key] == their_end[key], key


def test_the_service_worker_is_served_under_the_floor_with_its_configuration(fabric, technician, client_for):
    response = client_for(technician).get(floor_url("service-worker", fabric.project))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]
    body = response.content.decode()
    config = json.loads(re.match(r"self\.FLOOR_SW = (.*?);\n", body).group(1))
    scope = floor_url("home", fabric.project)
    assert config["scope"] == scope and response["Service-Worker-Allowed"] == scope
    assert config["pages"] == [scope, floor_url("scan", fabric.project)]
    assert "/static/js/floor-scan.js" in config["static"] and "/static/css/floor.css" in config["static"]
    assert config["lazyStatic"] == ["/static/vendor/zxing/index.min.js"]
    assert "self.addEventListener(\"fetch\"" in body


def test_the_service_worker_version_changes_with_a_floor_script(fabric, technician, client_for, tmp_path, settings):
    """A tablet picks up new page scripts: the worker's version is a hash of the files it keeps."""
    client = client_for(technician)
    first = client.get(floor_url("service-worker", fabric.project)).content.decode()
    folder = tmp_path / "static"
    (folder / "js").mkdir(parents=True)
    original = finders.find("js/floor-scan.js")
    with open(original, encoding="utf-8") as handle:
        (folder / "js" / "floor-scan.js").write_text(handle.read() + "\n// changed\n")
    settings.STATICFILES_DIRS = [str(folder), *settings.STATICFILES_DIRS]
    finders.get_finder.cache_clear()
    try:
        second = client.get(floor_url("service-worker", fabric.project)).content.decode()
    finally:
        finders.get_finder.cache_clear()

    def version(body):
        return json.loads(re.match(r"self\.FLOOR_SW = (.*?);\n", body).group(1))["version"]

    assert version(first) != version(second)


def test_the_decoder_is_vendored_with_its_licence_and_origin():
    decoder = finders.find("vendor/zxing/index.min.js")
    assert decoder, "static/vendor/zxing/index.min.js is missing"
    with open(decoder, encoding="utf-8") as handle:
        head = handle.read(400)
    assert "ZXing" in head  # the UMD build defines the global ZXing
    licence = finders.find("vendor/zxing/LICENSE")
    with open(licence, encoding="utf-8") as handle:
        assert "Apache License" in handle.read(200)
    with open(finders.find("vendor/zxing/README.md"), encoding="utf-8") as handle:
        readme = handle.read()
    assert "0.21.3" in readme and "npm pack @zxing/library" in readme


def test_floor_templates_never_load_anything_from_another_site(fabric, technician, client_for):
    client = client_for(technician)
    for url in (floor_url("home", fabric.project), floor_url("scan", fabric.project),
                floor_url("rack", fabric.project, fabric.servers_rack.pk)):
        page = client.get(url).content.decode()
        assert not re.search(r'(src|href)="(https?:)?//', page), url


def test_a_plane_worklist_links_racks_and_devices_narrowed_to_it(fabric, technician, client_for):
    client = client_for(technician)
    plane = client.get(floor_url("network", fabric.project, "compute", query="plane=1")).content.decode()
    rack_link = f'{floor_url("rack", fabric.project, fabric.servers_rack.pk)}?network=compute&amp;plane=1'
    assert f'href="{rack_link}"' in plane
    rack = client.get(floor_url("rack", fabric.project, fabric.servers_rack.pk, query="network=compute&plane=1"))
    page = rack.content.decode()
    assert "Compute (training fabric), plane 1" in page
    assert f'href="{floor_url("device", fabric.project, fabric.gpu1.pk)}?network=compute&amp;plane=1"' in page
    assert 'data-device="gpu-003"' not in page  # its only cable names no plane
    device = client.get(floor_url("device", fabric.project, fabric.gpu1.pk, query="network=compute&plane=1"))
    ends = re.findall(r'data-end="([^"]+)"', device.content.decode())
    assert ends == ["C00002/A"]


def test_a_large_hall_is_picked_row_first_and_a_row_counts_each_cable_once(fabric, technician, client_for,
                                                                          monkeypatch):
    from cabling.floor import views

    monkeypatch.setattr(views, "RACKS_ON_ONE_PAGE", 1)
    client = client_for(technician)
    home = client.get(floor_url("home", fabric.project)).content.decode()
    assert "Pick a row, then a rack" in home and 'data-rack="A01"' not in home
    assert f'href="{floor_url("row", fabric.project, "A")}" data-row="A"' in home
    assert f'href="{floor_url("row", fabric.project, "N")}" data-row="N"' in home
    row = client.get(floor_url("row", fabric.project, "N")).content.decode()
    assert 'data-rack="N01"' in row and 'data-rack="A01"' not in row
    assert client.get(floor_url("row", fabric.project, "Z")).status_code == 404
    # Both racks in one row: a cable between them counts once for the row.
    type(fabric.network_rack).objects.filter(pk=fabric.network_rack.pk).update(row="A", position=2)
    rows = {item.row: item for item in floor_rows(user=technician, project=fabric.project)}
    assert (rows["A"].racks, rows["A"].work.cables.total, rows["A"].work.devices.total) == (2, 8, 6)
    plane = client.get(floor_url("network", fabric.project, "compute", query="plane=1")).content.decode()
    assert f'href="{floor_url("row", fabric.project, "A")}?network=compute&amp;plane=1"' in plane
