"""The cabling pages and downloads: the cable list (filters, pagination, end tags), a cable's page (both
ends, status, history), the cut sheet and label downloads over HTTP. Members (customers too) read and
download; outsiders get 404 everywhere; query counts do not grow with the cables."""

import io
import re

import pytest
from django.urls import reverse
from openpyxl import load_workbook

from cabling.choices import CableStatus
from tests.support import count_queries

from .conftest import NODE_OPTIC, SWITCH_OPTIC

pytestmark = pytest.mark.django_db


def url(name, project, *args):
    return reverse(f"cabling:{name}", args=[project.code, *args])


def page(client, address, **params) -> str:
    response = client.get(address, params)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def row(body, attribute, value) -> str:
    match = re.search(rf'<tr[^>]* data-{attribute}="{re.escape(value)}"[^>]*>(.*?)</tr>', body, re.S)
    assert match, f"no row {attribute}={value}"
    return match.group(0)


def listed(body) -> list[str]:
    return re.findall(r'<tr data-cable="([^"]+)"', body)


def every_address(fabric):
    project = fabric.project
    return [
        url("cable-list", project),
        url("cable-detail", project, fabric.breakout.pk),
        url("cutsheet", project),
        url("labels", project),
        url("fabric", project),
        url("fabric-svg", project) + "?network=compute&plane=0",
    ]


# --- access ------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["manager", "technician", "customer"])
def test_every_member_reads_every_page_and_download(request, client_for, fabric, role):
    client = client_for(request.getfixturevalue(role))
    for address in every_address(fabric):
        assert client.get(address).status_code == 200, address


def test_outsiders_get_404_on_every_page_and_download(client_for, outsider, fabric):
    client = client_for(outsider)
    for address in every_address(fabric):
        assert client.get(address).status_code == 404, address


def test_anonymous_visitors_are_sent_to_log_in(client, fabric):
    for address in every_address(fabric):
        response = client.get(address)
        assert response.status_code == 302 and "/login/" in response["Location"], address


def test_another_projects_cable_is_404_under_this_project(client_for, manager, fabric):
    assert client_for(manager).get(url("cable-detail", fabric.project, fabric.foreign.pk)).status_code == 404


def test_the_project_nav_links_to_cabling(client_for, customer, fabric):
    body = page(client_for(customer), reverse("inventory:rack-list", args=[fabric.project.code]))
    assert f'href="{url("cable-list", fabric.project)}"' in body


# --- list --------------------------------------------------------------------------------------


def test_list_shows_each_cable_with_its_end_tags(client_for, customer, fabric):
    body = page(client_for(customer), url("cable-list", fabric.project))
    assert listed(body) == ["C00001", "C00002", "C00003", "C00004", "C00005", "C00006", "C00007", "O00001"]
    breakout = row(body, "cable", "C00005")
    # One line per end, the leg first, then the tag (kept whole: it wraps only where the screen is narrower).
    end = r'<div class="end" data-end="(\w+)"><span class="leg">\w+</span> <span class="tag">([^<]+)</span>'
    ends = re.findall(end, breakout)
    assert ends == [("A", "A01-U30-gpu-003-ib0"), ("B1", "N01-U01-leaf-01-p3"), ("B2", "N01-U02-leaf-02-p3")]
    assert "7.0 m" in breakout and "400G" in breakout and "Fiber with transceivers" in breakout
    assert "FOREIGN" not in body
    # The download links carry the list's filters.
    filtered = page(client_for(customer), url("cable-list", fabric.project), network="oob", page="1")
    assert f'href="{url("cutsheet", fabric.project)}?network=oob"' in filtered


@pytest.mark.parametrize(
    "params, expected",
    [
        ({"network": "oob"}, ["O00001"]),
        ({"plane": "1"}, ["C00002", "C00004", "C00007"]),
        ({"rack": "A01", "type": "fiber"}, ["C00001", "C00002", "C00003", "C00004", "C00005"]),
        ({"device": "leaf-02"}, ["C00002", "C00004", "C00005", "C00007"]),
        ({"device": "spine-01", "q": "7"}, ["C00007"]),
        ({"status": "installed"}, ["C00003"]),
        ({"type": "aoc"}, ["C00006", "C00007"]),
        ({"rack": "X01"}, []),  # another project's rack
    ],
)
def test_list_filters(client_for, technician, fabric, params, expected):
    fabric.c3.status = CableStatus.INSTALLED
    fabric.c3.save()
    assert listed(page(client_for(technician), url("cable-list", fabric.project), **params)) == expected


def test_a_bad_filter_is_reported_on_the_page_and_refused_by_downloads(client_for, manager, fabric):
    client = client_for(manager)
    body = page(client, url("cable-list", fabric.project), plane="x")
    assert "Some filters were ignored" in body and "plane" in body
    for name in ("cutsheet", "labels"):
        response = client.get(url(name, fabric.project), {"plane": "x", "network": "compute"})
        assert response.status_code == 400 and response.content.startswith(b"Bad filter: plane:")
    response = client.get(url("labels", fabric.project), {"stock": "L9999"})
    assert response.status_code == 400 and b"L7651" in response.content


def test_list_paginates(client_for, customer, project, add_cables):
    add_cables(project, 60, 0)
    client = client_for(customer)
    first = page(client, url("cable-list", project))
    assert len(listed(first)) == 50 and "60 cables" in first and "page 1 of 2" in first
    assert listed(page(client, url("cable-list", project), page="2")) == [f"Q{i:05d}" for i in range(50, 60)]


# --- detail ------------------------------------------------------------------------------------


def test_cable_page_shows_both_ends_status_and_history(client_for, customer, fabric):
    fabric.breakout.status = CableStatus.INSTALLED
    fabric.breakout.save()
    body = page(client_for(customer), url("cable-detail", fabric.project, fabric.breakout.pk))
    assert "<h1>C00005" in body and '<dd class="status">Installed</dd>' in body
    a, b1, b2 = row(body, "end", "A"), row(body, "end", "B1"), row(body, "end", "B2")
    assert "A01-U30-gpu-003-ib0" in a and ">A01</a>" in a and "<td>30</td>" in a and ">gpu-003</a>" in a
    assert NODE_OPTIC in a
    assert "N01-U01-leaf-01-p3" in b1 and "<td>p3</td>" in b1 and SWITCH_OPTIC in b1
    assert re.search(r"<td>p3</td>\s*<td></td>\s*<td>1</td>", b2)  # no lane, plane 1
    history = body[body.index('id="history"'):]
    assert "Created" in history and "Changed" in history and "Planned &rarr; Installed" in history


def test_cable_page_shows_a_lane_and_the_optic_installed(client_for, customer, fabric):
    from inventory.services import optic_install
    from tests.factories import OpticFactory

    optic_install(optic=OpticFactory(project=fabric.project, serial="MT-LANE-1", part_number=NODE_OPTIC),
                  port=fabric.c2.ends.get(side="A").port)
    body = page(client_for(customer), url("cable-detail", fabric.project, fabric.c2.pk))
    a = row(body, "end", "A")
    assert re.search(r"<td>ib0/1</td>\s*<td>1</td>\s*<td>1</td>", a)  # lane 1, plane 1
    assert ">MT-LANE-1</a>" in a


def test_cable_page_shows_its_plan_and_the_optics_seated_in_its_cages(client_for, customer, fabric):
    from inventory.models import Port
    from inventory.services import optic_install
    from tests.factories import OpticFactory

    # C00001 leaves lane ib0/0 of gpu-001: its transceiver sits in the cage of the physical port ib0.
    optic_install(optic=OpticFactory(project=fabric.project, serial="MT-CAGE-1", part_number=NODE_OPTIC),
                  port=Port.objects.get(device=fabric.gpu1, name="ib0"))
    body = page(client_for(customer), url("cable-detail", fabric.project, fabric.c1.pk))
    plan = body[body.index('id="plan"'):body.index("</section>", body.index('id="plan"'))]
    assert f"2: {NODE_OPTIC} at A, {SWITCH_OPTIC} at B" in plan
    assert ">MT-CAGE-1</a>" in row(body, "end", "A")
    assert '<td class="optic"><span class="muted">' in row(body, "end", "B1")  # nothing seated at leaf-01:p1
    assert 'class="confirmed"><span class="muted">not yet' in row(body, "end", "A")
    trace = reverse("cabling:port-trace", args=[fabric.project.code, fabric.c1.ends.get(side="A").port_id])
    assert f'href="{trace}"' in row(body, "end", "A")


def scan_rows(body) -> list[str]:
    return re.findall(r'<tr data-scan="(\d+)"', body)


def test_cable_page_lists_every_scan_newest_first_a_page_at_a_time(client_for, technician, customer, fabric):
    from cabling.choices import ScanAction, ScanResult
    from cabling.models import ScanEvent

    scans = [ScanEvent.objects.create(project=fabric.project, user=technician, action=ScanAction.CABLE_END,
                                      result=ScanResult.REFUSED if i % 7 == 0 else ScanResult.ACCEPTED,
                                      raw_code="C00001/A", reason=f"reason {i}", cable=fabric.c1)
             for i in range(30)]
    ScanEvent.objects.create(project=fabric.project, user=technician, action=ScanAction.CABLE_END,
                             result=ScanResult.ACCEPTED, raw_code="C00002/A", cable=fabric.c2)
    client = client_for(customer)
    first = page(client, url("cable-detail", fabric.project, fabric.c1.pk))
    newest = [str(scan.pk) for scan in reversed(scans)]
    assert scan_rows(first) == newest[:25] and "30 scans · page 1 of 2" in first
    assert '<span class="badge result-refused">Refused</span>' in first and "reason 28" in first
    second = page(client, url("cable-detail", fabric.project, fabric.c1.pk), scans_page="2")
    assert scan_rows(second) == newest[25:]
    assert scan_rows(page(client, url("cable-detail", fabric.project, fabric.c3.pk))) == []


def test_cable_page_shows_every_status_change_with_its_cause(client_for, customer, fabric):
    cable = fabric.c1
    for status, cause in ((CableStatus.INSTALLED, "scan 12 by tech: A end confirmed"),
                          (CableStatus.INSTALLED, ""),  # a save that changes no status is no status change
                          (CableStatus.VERIFIED, "scan 13 by tech: both ends confirmed"),
                          (CableStatus.FAULTY, "topology comparison 4: miswired")):
        cable.status, cable.status_cause = status, cause or cable.status_cause
        cable.save()
    body = page(client_for(customer), url("cable-detail", fabric.project, cable.pk))
    section = body[body.index('id="status-changes"'):]
    changes = re.findall(r'<tr data-status="[^"]+"><td>[^<]+</td><td>[^<]+</td>\s*<td>([^<]+)</td>'
                         r'<td class="cause">([^<]+)</td>', section)
    assert changes == [
        ("Verified &rarr; Faulty", "topology comparison 4: miswired"),
        ("Installed &rarr; Verified", "scan 13 by tech: both ends confirmed"),
        ("Planned &rarr; Installed", "scan 12 by tech: A end confirmed"),
        ("created Planned", "—"),
    ]
    assert '<dd class="status-cause">topology comparison 4: miswired</dd>' in body


def test_cable_page_shows_the_panels_other_apps_register(client_for, customer, fabric, monkeypatch):
    from core.panels import _PANELS, Panel, register_panel

    monkeypatch.setitem(_PANELS, "cabling.cable", dict(_PANELS.get("cabling.cable", {})))
    seen = []
    register_panel("cabling.cable", Panel("test-checks", "Link checks of this cable", "validation/_verdict.html",
                                          lambda request, obj, project: seen.append((obj.pk, project.pk)) or {}))
    body = page(client_for(customer), url("cable-detail", fabric.project, fabric.c1.pk))
    assert '<section class="card" id="panel-test-checks">' in body and "Link checks of this cable" in body
    assert seen == [(fabric.c1.pk, fabric.project.pk)]


def test_cable_page_queries_do_not_grow_with_scans_and_changes(client_for, customer, technician, fabric,
                                                               django_assert_num_queries):
    from cabling.choices import ScanAction, ScanResult
    from cabling.models import ScanEvent

    client = client_for(customer)
    address = url("cable-detail", fabric.project, fabric.breakout.pk)
    ScanEvent.objects.create(project=fabric.project, user=technician, action=ScanAction.LOOKUP,
                             result=ScanResult.FOUND, raw_code="C00005", cable=fabric.breakout)
    few = queries_for(client, address)
    for i in range(40):
        ScanEvent.objects.create(project=fabric.project, user=technician if i % 2 else None,
                                 action=ScanAction.CABLE_END, result=ScanResult.ACCEPTED, raw_code="C00005/B2",
                                 cable=fabric.breakout)
    for status in (CableStatus.INSTALLED, CableStatus.VERIFIED, CableStatus.FAULTY, CableStatus.INSTALLED):
        fabric.breakout.status = status
        fabric.breakout.save()
    with django_assert_num_queries(few):
        page(client, address)


# --- downloads over HTTP -----------------------------------------------------------------------


def test_cutsheet_download(client_for, customer, fabric):
    response = client_for(customer).get(url("cutsheet", fabric.project), {"network": "compute", "rack": "A01"})
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/vnd.openxmlformats")
    assert 'filename="ACME-72-cutsheet-compute-a01.xlsx"' in response["Content-Disposition"]
    sheet = load_workbook(io.BytesIO(response.content))["Cables"]
    assert [r[0] for r in sheet.iter_rows(min_row=2, values_only=True)] == [
        "C00001", "C00002", "C00003", "C00004", "C00005"]


def test_labels_download(client_for, customer, fabric):
    response = client_for(customer).get(url("labels", fabric.project), {"rack": "N01", "stock": "thermal-2x1"})
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    assert 'filename="ACME-72-labels-n01.pdf"' in response["Content-Disposition"]
    assert response.content.startswith(b"%PDF") and response.content.count(b"/Type /Page\n") == 11


def test_a_label_sheet_too_large_for_one_download_asks_for_a_rack(client_for, manager, fabric, monkeypatch):
    monkeypatch.setattr("cabling.views.MAX_LABELS", 10)
    client = client_for(manager)
    response = client.get(url("labels", fabric.project))
    assert response.status_code == 400
    assert response.content.decode().startswith("17 labels selected; one download prints at most 10.")
    assert client.get(url("labels", fabric.project), {"rack": "N01"}).status_code == 400  # 11 ends there
    assert client.get(url("labels", fabric.project), {"rack": "A01"}).status_code == 200  # 6


def queries_for(client, address) -> int:
    def get():
        assert client.get(address).status_code == 200

    return count_queries(get)


@pytest.mark.parametrize("name", ["cable-list", "cutsheet", "labels", "fabric"])
def test_query_count_does_not_grow_with_cables(client_for, customer, project, add_cables, name,
                                               django_assert_num_queries):
    client = client_for(customer)
    add_cables(project, 5, 0)
    few = queries_for(client, url(name, project))
    add_cables(project, 45, 5)
    with django_assert_num_queries(few):
        response = client.get(url(name, project))
    if name == "cable-list":
        assert len(listed(response.content.decode())) == 50
