"""The punch list pages as every kind of person: managers do everything, technicians open, edit and fix,
customers read only customer-visible items (an internal one is a 404) and change nothing (403), outsiders
get 404; the "new item" link on a cable's and a device's page; the list's query count does not grow."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from delivery.choices import PunchStatus
from delivery.models import PunchItem
from tests.support import count_queries

from .stages_world import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(project, manager, technician, customer):
    return build_world(project)


def make_item(project, title="Loose latch", **fields):
    return PunchItem.objects.create(project=project, title=title, opened_at=timezone.now(), **fields)


def url(name, project, *args):
    return reverse(f"punch:{name}", args=[project.code, *args])


def test_a_customer_reads_only_customer_visible_items_and_changes_nothing(world, client_for, customer):
    shown = make_item(world.project, "Shown to the customer", customer_visible=True)
    internal = make_item(world.project, "Internal note about the vendor")
    client = client_for(customer)
    page = client.get(url("list", world.project)).content.decode()
    assert "Shown to the customer" in page and "Internal note" not in page
    assert client.get(url("detail", world.project, shown.pk)).status_code == 200
    assert client.get(url("detail", world.project, internal.pk)).status_code == 404
    assert client.post(url("status", world.project, shown.pk), {"status": "fixed"}).status_code == 403
    assert client.post(url("edit", world.project, shown.pk), {"title": "x", "severity": "minor"}).status_code == 403
    assert client.get(url("create", world.project)).status_code == 403
    assert PunchItem.objects.get(pk=shown.pk).status == PunchStatus.OPEN


def test_a_customer_reads_an_item_without_its_internal_notes_or_history(world, client_for, customer, technician):
    item = make_item(world.project, "Shown to the customer", customer_visible=True,
                     description="Vendor blamed the optic batch", fingerprint="link-health:port:7",
                     evidence_note="BER 3e-9 on the last run", evidence_at=timezone.now())
    customer_page = client_for(customer).get(url("detail", world.project, item.pk)).content.decode()
    technician_page = client_for(technician).get(url("detail", world.project, item.pk)).content.decode()
    for internal in ("Vendor blamed the optic batch", "link-health:port:7", "BER 3e-9 on the last run"):
        assert internal not in customer_page
        assert internal in technician_page
    assert "Shown to the customer" in customer_page


def test_outsiders_get_404_everywhere(world, client_for, outsider):
    item = make_item(world.project, customer_visible=True)
    client = client_for(outsider)
    for name, args in (("list", ()), ("create", ()), ("detail", (item.pk,))):
        assert client.get(url(name, world.project, *args)).status_code == 404
    assert client.post(url("status", world.project, item.pk), {"status": "fixed"}).status_code == 404


def test_a_technician_opens_an_item_from_a_cable_page_and_marks_it_fixed(world, client_for, technician):
    client = client_for(technician)
    cable_page = client.get(reverse("cabling:cable-detail", args=[world.project.code, world.c1.pk])).content.decode()
    new = f"{url('create', world.project)}?kind=cable&amp;id={world.c1.pk}"
    assert new in cable_page
    form = client.get(new.replace("&amp;", "&"))
    assert form.status_code == 200 and "C00001" in form.content.decode()
    response = client.post(url("create", world.project), {"kind": "cable", "id": world.c1.pk,
                                                          "title": "Dust cap left on", "severity": "minor"})
    item = PunchItem.objects.get(project=world.project, title="Dust cap left on")
    assert response.status_code == 302 and (item.object_kind, item.object_id, item.object_label) == (
        "cable", world.c1.pk, "C00001")
    assert item.opened_by == technician and not item.customer_visible
    # The cable's page lists it now; a technician may not close it as won't fix, but fixes it.
    assert "Dust cap left on" in client.get(reverse("cabling:cable-detail",
                                                    args=[world.project.code, world.c1.pk])).content.decode()
    assert client.post(url("status", world.project, item.pk), {"status": "wont_fix", "note": "meh"}).status_code == 403
    client.post(url("status", world.project, item.pk), {"status": "fixed", "note": "Cap removed."})
    item.refresh_from_db()
    assert item.status == PunchStatus.FIXED and item.resolution_note == "Cap removed."
    detail = client.get(url("detail", world.project, item.pk)).content.decode()
    assert "Cap removed." in detail and 'id="history"' in detail


def test_a_new_item_naming_another_projects_object_is_refused(world, client_for, manager, other_project):
    foreign = build_world(other_project).gpu1  # a device of another project: its id names nothing here
    client = client_for(manager)
    response = client.get(url("create", world.project) + f"?kind=device&id={foreign.pk}")
    assert response.status_code == 400 and "No device" in response.content.decode()
    response = client.post(url("create", world.project), {"kind": "device", "id": foreign.pk, "title": "t",
                                                          "severity": "minor"})
    assert response.status_code == 400
    response = client.post(url("create", world.project), {"kind": "bogus", "id": "x", "title": "t",
                                                          "severity": "minor"})
    assert response.status_code == 400 and not PunchItem.objects.filter(project=world.project).exists()


def test_the_device_page_offers_a_new_item_about_the_device(world, client_for, manager):
    page = client_for(manager).get(reverse("inventory:device-detail", args=[world.project.code, world.gpu1.pk]))
    assert f"?kind=device&amp;id={world.gpu1.pk}" in page.content.decode()


def test_a_manager_closes_as_wont_fix_with_a_reason_only(world, client_for, manager):
    item = make_item(world.project)
    client = client_for(manager)
    client.post(url("status", world.project, item.pk), {"status": "wont_fix", "note": ""})
    assert PunchItem.objects.get(pk=item.pk).status == PunchStatus.OPEN
    client.post(url("status", world.project, item.pk), {"status": "verified"})
    assert PunchItem.objects.get(pk=item.pk).status == PunchStatus.OPEN
    client.post(url("status", world.project, item.pk), {"status": "wont_fix", "note": "Customer's own cable."})
    assert PunchItem.objects.get(pk=item.pk).status == PunchStatus.WONT_FIX


def test_the_list_filters_and_pages_with_a_constant_number_of_queries(world, client_for, manager, technician,
                                                                      django_assert_num_queries):
    client = client_for(manager)
    make_item(world.project, "critical one", severity="critical", assignee=technician, customer_visible=True)
    few = count_queries(lambda: client.get(url("list", world.project)).content)
    for n in range(60):
        make_item(world.project, f"item {n}", assignee=technician if n % 2 else None, opened_by=manager)
    with django_assert_num_queries(few):
        page = client.get(url("list", world.project)).content.decode()
    assert "page 1 of 2" in page
    filtered = client.get(url("list", world.project), {"severity": "critical", "assignee": technician.username,
                                                        "customer_visible": "true"}).content.decode()
    assert "critical one" in filtered and "item 1" not in filtered


def test_the_stages_page_and_the_project_home_link_the_punch_list(world, client_for, customer):
    client = client_for(customer)
    for page in (reverse("stages:list", args=[world.project.code]),
                 reverse("delivery:project-home", args=[world.project.code])):
        assert url("list", world.project) in client.get(page).content.decode()


def test_saving_an_assignment_records_only_the_assignment(world, client_for, manager, technician):
    """The issue: saving an assignment recorded a description change nobody made (the browser sends the
    textarea's lines ending in CR LF). Only the assignee changes; saving again unchanged writes nothing."""
    from delivery.punch.services import punch_item_open

    item = punch_item_open(project=world.project, user=technician, title="Dirty fibre",
                           description="Rx power -11 dBm on lane 2.\nCleaned once already.")
    form = {"title": item.title, "severity": item.severity, "description": item.description.replace("\n", "\r\n"),
            "assignee": technician.pk, "due_date": "", "customer_visible": ""}
    client = client_for(manager)
    assert client.post(url("edit", world.project, item.pk), form).status_code == 302
    item.refresh_from_db()
    newest, before = item.history.all()[:2]
    assert [change.field for change in newest.diff_against(before).changes] == ["assignee"]
    assert item.description == "Rx power -11 dBm on lane 2.\nCleaned once already."
    client.post(url("edit", world.project, item.pk), form)
    assert item.history.count() == 2  # opened, assigned: an unchanged save is no change
