"""The punch list API (delivery/punch/api.py): lists filtered like the page, items opened, edited and moved
through the punch services, every endpoint as manager, technician, customer and outsider (a customer reads
the customer-visible items only, without their internal fields, and writes nothing), hostile input answered
4xx naming the field, and list query counts that do not grow with the data."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from delivery.choices import PunchObjectKind, PunchSeverity, PunchSource, PunchStatus
from delivery.models import PunchItem
from delivery.punch.api import INTERNAL_PUNCH_FIELDS
from projects.choices import Role
from tests.factories import MembershipFactory, UserFactory
from tests.support import count_queries

from .stages_world import build_world

pytestmark = pytest.mark.django_db

LIST = "/api/punch-items/"


def item_url(item, action: str = "") -> str:
    return f"{LIST}{item.pk}/" + (f"{action}/" if action else "")


def make_item(project, title="Loose latch", **fields) -> PunchItem:
    return PunchItem.objects.create(project=project, title=title, opened_at=timezone.now(), **fields)


def rows(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


def titles(response) -> set[str]:
    return {row["title"] for row in rows(response)}


@pytest.fixture
def world(project, manager, technician, customer, outsider):
    world = build_world(project)
    world.shown = make_item(project, "Shown to the customer", customer_visible=True,
                            description="Vendor says the latch batch is bad", severity=PunchSeverity.MINOR)
    world.internal = make_item(
        project, "C00001: link health fail", object_kind=PunchObjectKind.CABLE, object_id=world.c1.pk,
        object_label="C00001", source=PunchSource.CHECK_RESULT, fingerprint=f"link_health:cable:{world.c1.pk}",
        evidence_note="Link health result #9: fail.", evidence_at=timezone.now(), assignee=technician,
    )
    return world


# --- reading ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["manager", "technician"])
def test_the_team_reads_every_item_with_its_internal_fields(world, api_for, request, role):
    client = api_for(request.getfixturevalue(role))
    assert titles(client.get(LIST)) == {"Shown to the customer", "C00001: link health fail"}
    body = client.get(item_url(world.internal)).json()
    assert body["fingerprint"] == f"link_health:cable:{world.c1.pk}"
    assert body["evidence_note"] == "Link health result #9: fail." and body["assignee"] == "tech"
    assert body["object_kind"] == "cable" and body["object_label"] == "C00001"
    assert body["object_url"] == reverse("cabling:cable-detail", args=[world.project.code, world.c1.pk])
    assert set(INTERNAL_PUNCH_FIELDS) <= set(body)


def test_a_customer_reads_only_customer_visible_items_without_internal_fields(world, api_for, customer):
    client = api_for(customer)
    listed = rows(client.get(LIST))
    assert [row["title"] for row in listed] == ["Shown to the customer"]
    assert not set(INTERNAL_PUNCH_FIELDS) & set(listed[0])
    one = client.get(item_url(world.shown))
    assert one.status_code == 200 and "description" not in one.json() and one.json()["severity"] == "minor"
    assert "Vendor says" not in one.content.decode()
    assert client.get(item_url(world.internal)).status_code == 404
    assert rows(client.get(LIST, {"customer_visible": "false"})) == []


def test_someone_who_is_a_customer_here_and_a_technician_there_sees_each_project_as_their_role(
    world, api_for, other_project
):
    both = UserFactory(username="both")
    MembershipFactory(user=both, project=world.project, role=Role.CUSTOMER)
    MembershipFactory(user=both, project=other_project, role=Role.TECHNICIAN)
    theirs = make_item(other_project, "Internal in the other project", description="for the team")
    listed = {row["title"]: row for row in rows(api_for(both).get(LIST))}
    assert set(listed) == {"Shown to the customer", "Internal in the other project"}
    assert "description" not in listed["Shown to the customer"]
    assert listed["Internal in the other project"]["description"] == "for the team"
    assert api_for(both).get(item_url(theirs)).json()["description"] == "for the team"


def test_an_outsider_sees_nothing_of_the_project(world, api_for, outsider, other_project):
    own = make_item(other_project, "Their own item", customer_visible=True)
    client = api_for(outsider)
    assert titles(client.get(LIST)) == {"Their own item"}
    assert rows(client.get(LIST, {"project": world.project.code})) == []
    for item in (world.shown, world.internal):
        assert client.get(item_url(item)).status_code == 404
        assert client.patch(item_url(item), {"title": "x"}, format="json").status_code == 404
        assert client.post(item_url(item, "status"), {"status": "fixed"}, format="json").status_code == 404
    assert own.pk


def test_anonymous_requests_are_refused(world):
    from rest_framework.test import APIClient

    assert APIClient().get(LIST).status_code in (401, 403)
    assert APIClient().post(LIST, {"project": "ACME-72", "title": "x"}, format="json").status_code in (401, 403)


def test_filters(world, api_for, manager):
    client = api_for(manager)
    code = world.project.code
    assert titles(client.get(LIST, {"project": code, "customer_visible": "true"})) == {"Shown to the customer"}
    assert titles(client.get(LIST, {"severity": "minor"})) == {"Shown to the customer"}
    assert titles(client.get(LIST, {"assignee": "tech"})) == {"C00001: link health fail"}
    assert titles(client.get(LIST, {"object_kind": "cable", "object_id": world.c1.pk})) == {"C00001: link health fail"}
    assert titles(client.get(LIST, {"object_kind": "device"})) == set()
    world.shown.status = PunchStatus.FIXED
    world.shown.save()
    assert titles(client.get(LIST, {"status": "fixed"})) == {"Shown to the customer"}
    assert titles(client.get(LIST, {"q": "C00001"})) == {"C00001: link health fail"}


@pytest.mark.parametrize(("params", "field"), [
    ({"status": "closed"}, "status"),
    ({"severity": 3}, "severity"),
    ({"object_kind": "rack"}, "object_kind"),
    ({"object_id": "1e30"}, "object_id"),
    ({"object_id": "99999999999999999999999"}, "object_id"),
    ({"project": "ACME\x00-72"}, "project"),
])
def test_bad_filters_are_400s_naming_the_parameter(world, api_for, manager, params, field):
    answer = api_for(manager).get(LIST, params)
    assert answer.status_code == 400 and field in answer.json(), answer.content


# --- opening ------------------------------------------------------------------------------------------------------


def test_a_technician_opens_an_item_on_a_cable_of_the_project(world, api_for, technician):
    answer = api_for(technician).post(LIST, {
        "project": world.project.code, "title": "C00002: bent past its radius", "severity": "critical",
        "description": "Route it again", "object_kind": "cable", "object_id": world.c2.pk, "assignee": "tech",
        "due_date": "2030-01-31",
    }, format="json")
    assert answer.status_code == 201, answer.content
    body = answer.json()
    assert body["object_label"] == "C00002"
    assert body["object_url"] == reverse("cabling:cable-detail", args=[world.project.code, world.c2.pk])
    assert body["opened_by"] == "tech" and body["source"] == "manual" and body["status"] == "open"
    assert body["severity"] == "critical" and body["due_date"] == "2030-01-31" and body["customer_visible"] is False
    item = PunchItem.objects.get(pk=body["id"])
    assert item.project == world.project and item.assignee.username == "tech"
    assert item.history.first().history_user.username == "tech"  # through the service: history says who


def test_only_a_manager_opens_an_item_the_customer_sees(world, api_for, manager, technician):
    payload = {"project": world.project.code, "title": "Rack door latch", "customer_visible": True}
    assert api_for(technician).post(LIST, payload, format="json").status_code == 403
    shown = api_for(manager).post(LIST, payload, format="json")
    assert shown.status_code == 201 and shown.json()["customer_visible"] is True


def test_a_customer_opens_nothing_and_an_outsider_learns_nothing(world, api_for, customer, outsider):
    payload = {"project": world.project.code, "title": "x"}
    assert api_for(customer).post(LIST, payload, format="json").status_code == 403
    real = api_for(outsider).post(LIST, payload, format="json")
    made_up = api_for(outsider).post(LIST, {**payload, "project": "NO-SUCH"}, format="json")
    assert real.status_code == made_up.status_code == 404 and real.json() == made_up.json()
    assert PunchItem.objects.filter(title="x").count() == 0


@pytest.mark.parametrize(("payload", "field"), [
    ({}, "title"),
    ({"title": ""}, "title"),
    ({"title": 42}, "title"),
    ({"title": "a\x00b"}, "title"),
    ({"title": "x" * 5000}, "title"),
    ({"title": {"nested": {"deeper": [1]}}}, "title"),
    ({"title": "x", "severity": "urgent"}, "severity"),
    ({"title": "x", "severity": ["major"]}, "severity"),
    ({"title": "x", "object_kind": "cable"}, "object_id"),
    ({"title": "x", "object_id": 1}, "object_kind"),
    ({"title": "x", "object_kind": "cable", "object_id": 999_999}, "object_id"),
    ({"title": "x", "object_kind": "cable", "object_id": 10**30}, "object_id"),
    ({"title": "x", "object_kind": "cable", "object_id": "one"}, "object_id"),
    ({"title": "x", "assignee": "cust"}, "assignee"),
    ({"title": "x", "assignee": "nobody-here"}, "assignee"),
    ({"title": "x", "due_date": "31/01/2030"}, "due_date"),
    ({"title": "x", "due_date": "99999-01-01"}, "due_date"),
    ({"title": "x", "customer_visible": "perhaps"}, "customer_visible"),
])
def test_a_bad_item_is_a_400_naming_the_field(world, api_for, manager, payload, field):
    answer = api_for(manager).post(LIST, {"project": world.project.code, **payload}, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.content
    assert answer.json()[field] and all(isinstance(m, str) for m in answer.json()[field])


@pytest.mark.parametrize("code", [72, ["ACME-72"], None, ""])
def test_a_create_with_a_bad_project_names_it(world, api_for, manager, code):
    answer = api_for(manager).post(LIST, {"project": code, "title": "x"}, format="json")
    assert answer.status_code == 400 and "project" in answer.json()


def test_a_nul_byte_in_the_project_code_is_no_project(world, api_for, manager):
    answer = api_for(manager).post(LIST, {"project": "ACME-72\x00", "title": "x"}, format="json")
    assert answer.status_code == 404


def test_a_body_that_is_no_object_is_a_400(world, api_for, manager):
    client = api_for(manager)
    assert "non_field_errors" in client.post(LIST, [1, 2], format="json").json()
    deep = client.generic("POST", LIST, "{\"a\":" * 2000 + "1" + "}" * 2000, content_type="application/json")
    assert deep.status_code == 400 and "non_field_errors" in deep.json()


# --- editing and moving --------------------------------------------------------------------------------------------


def test_a_technician_edits_an_item_a_field_left_out_keeps_its_value(world, api_for, technician):
    client = api_for(technician)
    patched = client.patch(item_url(world.internal), {"severity": "critical", "due_date": "2030-02-01"},
                           format="json")
    assert patched.status_code == 200, patched.content
    item = PunchItem.objects.get(pk=world.internal.pk)
    assert (item.severity, str(item.due_date), item.title) == ("critical", "2030-02-01", "C00001: link health fail")
    assert item.assignee.username == "tech"
    unassigned = client.patch(item_url(world.internal), {"assignee": None}, format="json")
    assert unassigned.status_code == 200 and unassigned.json()["assignee"] is None
    put = client.put(item_url(world.internal), {"severity": "minor"}, format="json")
    assert put.status_code == 400 and "title" in put.json()
    show = client.patch(item_url(world.internal), {"customer_visible": True}, format="json")
    assert show.status_code == 403
    assert client.delete(item_url(world.internal)).status_code == 405


def test_a_manager_shows_an_item_to_the_customer_who_then_reads_it(world, api_for, manager, customer):
    shown = api_for(manager).patch(item_url(world.internal), {"customer_visible": True}, format="json")
    assert shown.status_code == 200 and shown.json()["customer_visible"] is True
    seen = api_for(customer).get(item_url(world.internal))
    assert seen.status_code == 200 and "fingerprint" not in seen.json() and "evidence_note" not in seen.json()


def test_a_customer_edits_nothing(world, api_for, customer):
    client = api_for(customer)
    assert client.patch(item_url(world.shown), {"title": "Mine now"}, format="json").status_code == 403
    assert client.put(item_url(world.shown), {"title": "Mine now"}, format="json").status_code == 403
    assert client.post(item_url(world.shown, "status"), {"status": "fixed"}, format="json").status_code == 403
    assert client.patch(item_url(world.internal), {"title": "Mine now"}, format="json").status_code == 404
    assert PunchItem.objects.get(pk=world.shown.pk).title == "Shown to the customer"


def test_a_technician_marks_an_item_fixed_and_only_a_manager_closes_it_as_wont_fix(
    world, api_for, technician, manager
):
    fixed = api_for(technician).post(item_url(world.internal, "status"),
                                     {"status": "fixed", "note": "Re-seated both optics."}, format="json")
    assert fixed.status_code == 200, fixed.content
    assert fixed.json()["status"] == "fixed" and fixed.json()["fixed_by"] == "tech"
    assert fixed.json()["resolution_note"] == "Re-seated both optics."
    wont = api_for(technician).post(item_url(world.shown, "status"), {"status": "wont_fix", "note": "x"},
                                    format="json")
    assert wont.status_code == 403
    why = api_for(manager).post(item_url(world.shown, "status"), {"status": "wont_fix"}, format="json")
    assert why.status_code == 400 and "note" in why.json()
    closed = api_for(manager).post(item_url(world.shown, "status"),
                                   {"status": "wont_fix", "note": "Cosmetic; the customer agreed."}, format="json")
    assert closed.status_code == 200 and closed.json()["wont_fix_reason"] == "Cosmetic; the customer agreed."


@pytest.mark.parametrize(("payload", "field"), [
    ({"status": "verified"}, "status"),
    ({"status": "open"}, "status"),  # already open
    ({"status": "done"}, "status"),
    ({}, "status"),
    ({"status": "fixed", "note": 5}, "note"),
    ({"status": "fixed", "note": "x" * 3000}, "note"),
    ({"status": "fixed", "note": "a\x00"}, "note"),
])
def test_a_bad_status_change_is_a_400_naming_the_field(world, api_for, manager, payload, field):
    answer = api_for(manager).post(item_url(world.internal, "status"), payload, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.content
    assert PunchItem.objects.get(pk=world.internal.pk).status == PunchStatus.OPEN


def test_huge_ids_are_404s(world, api_for, manager):
    client = api_for(manager)
    assert client.get(f"{LIST}99999999999999999999999/").status_code == 404
    assert client.post(f"{LIST}99999999999999999999999/status/", {"status": "fixed"}, format="json").status_code == 404


# --- query counts ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["manager", "customer"])
def test_the_list_costs_the_same_queries_whatever_the_number_of_items(
    world, api_for, request, role, technician, manager, django_assert_num_queries
):
    client = api_for(request.getfixturevalue(role))
    client.get(LIST)
    few = count_queries(lambda: client.get(LIST))
    people = [technician, manager, *UserFactory.create_batch(3)]
    for n in range(12):
        make_item(world.project, f"Item {n}", customer_visible=n % 2 == 0, assignee=people[n % 2],
                  opened_by=people[n % len(people)], fixed_by=people[(n + 1) % len(people)])
    with django_assert_num_queries(few):
        listed = rows(client.get(LIST))
    assert len(listed) == (14 if role == "manager" else 7)
