"""The floor's API: POST /api/scans/ (recorded once per key, 201 then 200 with the same answer), the scan
list, /api/cables/ with its filters and its scan and status actions, /api/search/. Roles and outsiders,
hostile input (always a 400 in the one error shape, never a 500), the answers' keys as the schema
declares them, and list query counts that do not grow with the rows."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from cabling.api.scans import (
    CableVerificationSerializer,
    ScanAnswerSerializer,
    ScanNextEndSerializer,
    ScanNextSerializer,
)
from cabling.api.serializers import (
    CableEndAnswerSerializer,
    CableSerializer,
    DeviceBriefSerializer,
    PortBriefSerializer,
    ScanEventSerializer,
)
from cabling.choices import CableStatus, FabricState, ScanAction
from cabling.models import Cable, CableEnd, ScanEvent
from cabling.services import cable_status_set, cables_fabric_record, scan_record
from tests.support import count_queries

pytestmark = pytest.mark.django_db

SCANS = "/api/scans/"


def post(api, body, url=SCANS):
    return api.post(url, body, format="json")


def confirm(code, where, **more):
    return {"project": "ACME-72", "action": "cable_end", "code": code, "port_code": where, **more}


def is_error_shape(body) -> bool:
    return isinstance(body, dict) and all(
        isinstance(v, list) and all(isinstance(m, str) for m in v) for v in body.values()
    )


# --- POST /api/scans/ -----------------------------------------------------------------------------------------


def test_a_scan_answers_201_with_the_event_and_a_replay_200_with_the_same_answer(fabric, technician, api_for):
    api = api_for(technician)
    first = post(api, confirm("C00001/A", "gpu-001:ib0/0", idempotency_key="tab1-000001", source="page"))
    assert first.status_code == 201, first.content
    body = first.json()
    assert (body["action"], body["result"], body["replayed"]) == ("cable_end", "accepted", False)
    assert body["reason"] == "C00001/A confirmed in gpu-001 port ib0/0. Next: C00001/B at leaf-01 port p1."
    assert body["user"] == "tech" and body["project"] == "ACME-72" and body["source"] == "page"
    assert body["port"]["code"] == "gpu-001:ib0/0"
    assert [m["kind"] for m in body["matches"]] == ["cable_end"]
    cable = body["cable"]
    assert (cable["label"], cable["status"]) == ("C00001", "installed")
    a_end, b_end = cable["ends"]
    assert {k: a_end[k] for k in ("side", "code", "rack", "top_u", "device", "port", "lane", "plane", "optic_part",
                                  "confirmed_by", "far_ends")} == {
        "side": "A", "code": "C00001/A", "rack": "A01", "top_u": 10, "device": "gpu-001", "port": "ib0/0",
        "lane": 0, "plane": 0, "optic_part": "OPT-NODE-800", "confirmed_by": "tech", "far_ends": ["C00001/B"]}
    assert a_end["confirmed_at"] and b_end["confirmed_at"] is None and b_end["tag"] == "N01-U01-leaf-01-p1"

    again = post(api, confirm("C00001/A", "gpu-001:ib0/0", idempotency_key="tab1-000001", source="offline"))
    assert again.status_code == 200
    assert again.json() == {**body, "replayed": True}
    assert ScanEvent.objects.count() == 1


def test_the_answer_has_the_keys_the_schema_declares(fabric, technician, api_for):
    api = api_for(technician)
    scan_record(user=technician, project=fabric.project, action="rack", code="gpu-001")
    post(api, confirm("C00001/A", "gpu-001:ib0/0"))
    body = post(api, confirm("C00001/B", "leaf-01:p1")).json()
    assert set(body) == set(ScanAnswerSerializer().fields) == {*ScanEventSerializer().fields, "next"}
    assert set(body["next"]) == set(ScanNextSerializer().fields)
    assert set(body["next"]["verified"]) == set(CableVerificationSerializer().fields)
    halfway = post(api, confirm("C00002/A", "gpu-001:ib0/1")).json()["next"]
    assert set(halfway["expected"]) == set(halfway["left"][0]) == set(ScanNextEndSerializer().fields)
    assert set(body["cable"]) == set(CableSerializer().fields)
    assert set(body["cable"]["ends"][0]) == set(CableEndAnswerSerializer().fields)
    assert set(body["port"]) == set(PortBriefSerializer().fields)
    racked = api.get(reverse("scan-detail", args=[ScanEvent.objects.get(action="rack").pk])).json()
    assert set(racked["device"]) == set(DeviceBriefSerializer().fields) and racked["device"]["racked_by"] == "tech"
    assert set(racked) == set(ScanEventSerializer().fields)  # a scan read back: what it was, not what is next


# --- the next step: what the floor does next with the cable ----------------------------------------------------


def codes(steps) -> list[str]:
    return [step["code"] for step in steps]


def test_every_answer_says_the_next_end_leg_by_leg_and_who_verified_it_and_when(fabric, technician, api_for):
    technician.first_name, technician.last_name = "Tomas", "Ruiz"
    technician.save()
    api = api_for(technician)
    lookup = post(api, {"project": "ACME-72", "action": "lookup", "code": "C00005/B2"}).json()["next"]
    # The end in hand (its label scanned) is the one to confirm first; every end is still to confirm.
    assert (lookup["cable"], lookup["expected"]["code"], codes(lookup["left"]), lookup["verified"]) == (
        "C00005", "C00005/B2", ["C00005/A", "C00005/B1", "C00005/B2"], None)

    accepted = post(api, confirm("C00005/A", "gpu-003:ib0")).json()
    assert accepted["result"] == "accepted"
    b1 = {"code": "C00005/B1", "leg": "B1", "side": "B", "position": 0, "rack": "N01", "top_u": 1,
          "device": "leaf-01", "device_id": fabric.leaf1.pk, "port": "p3", "port_code": "leaf-01:p3", "lane": None,
          "plane": 0}
    expected = accepted["next"]["expected"]
    assert {k: expected[k] for k in b1} == b1 and expected == accepted["next"]["left"][0]
    assert codes(accepted["next"]["left"]) == ["C00005/B1", "C00005/B2"]
    assert expected["id"] == CableEnd.objects.get(cable=fabric.breakout, side="B", position=0).pk

    # Refused at the wrong port: the end it was about is still the one to confirm, where it belongs.
    refused = post(api, confirm("C00005/B1", "leaf-02:p3")).json()
    assert (refused["result"], refused["next"]["expected"]["port_code"]) == ("refused", "leaf-01:p3")
    assert codes(refused["next"]["left"]) == ["C00005/B1", "C00005/B2"]

    # An old label (the bare cable label) confirms the leg planned on the port: B2 here; B1 is next.
    bare = post(api, confirm("C00005", "leaf-02:p3")).json()
    assert (bare["result"], bare["next"]["expected"]["code"], codes(bare["next"]["left"])) == (
        "accepted", "C00005/B1", ["C00005/B1"])

    last = post(api, confirm("C00005/B1", "leaf-01:p3", idempotency_key="last-end-01")).json()
    cable = Cable.objects.get(pk=fabric.breakout.pk)
    assert cable.status == CableStatus.VERIFIED
    assert last["next"] == {"cable": "C00005", "expected": None, "left": [], "verified": {
        "how": "scan", "by": "tech", "by_name": "Tomas Ruiz", "at": last["cable"]["verified_at"]}}
    assert datetime.fromisoformat(last["next"]["verified"]["at"]) == cable.verified_at
    replay = post(api, confirm("C00005/B1", "leaf-01:p3", idempotency_key="last-end-01"))
    assert replay.status_code == 200 and replay.json()["next"] == last["next"]


def test_a_cable_the_fabric_verified_still_asks_for_its_ends_until_a_scan_verifies_it(fabric, technician, api_for):
    seen = timezone.now() - timedelta(hours=2)
    cables_fabric_record(project=fabric.project, observations={fabric.c6.pk: FabricState.OK}, checked_at=seen,
                         cause="Topology comparison: link up.")
    api = api_for(technician)
    first = post(api, confirm("C00006/A", "leaf-01:p7")).json()["next"]
    assert (first["expected"]["code"], codes(first["left"])) == ("C00006/B", ["C00006/B"])
    assert first["verified"]["how"] == "fabric" and first["verified"]["by"] is None
    assert datetime.fromisoformat(first["verified"]["at"]) == seen
    done = post(api, confirm("C00006/B", "spine-01:p1")).json()["next"]
    assert (done["expected"], done["left"], done["verified"]["how"], done["verified"]["by"]) == (
        None, [], "scan", "tech")


def test_a_faulty_cable_asks_for_every_end_again(fabric, technician, manager, api_for):
    api = api_for(technician)
    post(api, confirm("C00001/A", "gpu-001:ib0/0"))
    post(api, confirm("C00001/B", "leaf-01:p1"))
    cable_status_set(cables=[fabric.c1], status=CableStatus.FAULTY, user=manager, reason="no light")
    again = post(api, {"project": "ACME-72", "action": "lookup", "code": "C00001"}).json()["next"]
    assert (again["expected"]["code"], codes(again["left"]), again["verified"]) == (
        "C00001/A", ["C00001/A", "C00001/B"], None)
    fixed = post(api, confirm("C00001/B", "leaf-01:p1")).json()["next"]  # its old A confirmation gives way
    assert (fixed["expected"]["code"], codes(fixed["left"])) == ("C00001/A", ["C00001/A"])


def test_a_scan_about_no_cable_has_no_next_step(fabric, technician, api_for):
    body = post(api_for(technician), {"project": "ACME-72", "action": "rack", "code": "gpu-001"}).json()
    assert body["result"] == "accepted" and body["next"] is None


def test_a_mismatch_is_recorded_as_refused_with_its_reason(fabric, technician, api_for):
    answer = post(api_for(technician), confirm("C00001/B", "leaf-01:p2"))
    assert answer.status_code == 201
    assert (answer.json()["result"], answer.json()["reason"]) == (
        "refused", "C00001/B belongs in leaf-01 port p1; you are at leaf-01 port p2.")
    assert not CableEnd.objects.filter(confirmed_at__isnull=False).exists()


def test_who_may_scan(fabric, manager, customer, outsider, other_project, api_for):
    from projects.choices import Role
    from tests.factories import MembershipFactory

    body = confirm("C00001/A", "gpu-001:ib0/0")
    assert post(api_for(manager), body).status_code == 201
    refused = post(api_for(customer), body)
    assert refused.status_code == 403 and set(refused.json()) == {"detail"}
    # Outside the project (a manager there, or a customer): the same answer as for a project that does not exist.
    boss = MembershipFactory(project=other_project, role=Role.MANAGER).user
    for stranger in (boss, outsider):
        theirs, nowhere = post(api_for(stranger), body), post(api_for(stranger), {**body, "project": "NO-SUCH"})
        assert theirs.status_code == nowhere.status_code == 404 and theirs.json() == nowhere.json()
    assert APIClient().post(SCANS, body, format="json").status_code in (401, 403)
    assert ScanEvent.objects.count() == 1


HOSTILE = {
    "a 100 KB code": {"action": "lookup", "code": "C" * 100_000},
    "a code that is an object": {"action": "lookup", "code": {"$gt": ""}},
    "a code that is a number": {"action": "lookup", "code": 417},
    "a code that is a list": {"action": "lookup", "code": ["C00001"]},
    "an empty code": {"action": "lookup", "code": "   "},
    "an unknown action": {"action": "teleport", "code": "C00001"},
    "a malformed key": {"action": "lookup", "code": "C00001", "idempotency_key": "'; DROP TABLE--"},
    "a huge position_u": {"action": "rack", "code": "gpu-001", "position_u": 10**30},
    "a position_u of infinity": {"action": "rack", "code": "gpu-001", "position_u": "Infinity"},
    "a port that is an object": {"action": "cable_end", "code": "C00001", "port": {"id": 1}},
    "a huge port id": {"action": "cable_end", "code": "C00001", "port": 2**70},
    "an unknown port id": {"action": "cable_end", "code": "C00001", "port": 987654321},
    "a NUL in the port code": {"action": "cable_end", "code": "C00001", "port_code": "leaf-01:p1\x00"},
    "no port for a cable end": {"action": "cable_end", "code": "C00001"},
    "a date that is not one": {"action": "lookup", "code": "C00001", "scanned_at": "yesterday-ish"},
    "an unknown source": {"action": "lookup", "code": "C00001", "source": "pigeon"},
}


@pytest.mark.parametrize("body", HOSTILE.values(), ids=HOSTILE.keys())
def test_hostile_input_is_a_400_in_the_one_error_shape(fabric, technician, api_for, body):
    answer = post(api_for(technician), {"project": "ACME-72", **body})
    assert answer.status_code == 400, answer.content[:300]
    assert is_error_shape(answer.json())
    assert not ScanEvent.objects.exists()


@pytest.mark.parametrize(
    "raw",
    ['["a list", "of things"]', "[" * 100_000 + "]" * 100_000, '{"project": "ACME-72", "code": ', "\ufeff{}", "null"],
    ids=["a list", "nested too deep", "cut short", "a byte order mark", "null"],
)
def test_bodies_that_are_not_a_json_object_are_a_400(fabric, technician, api_for, raw):
    answer = api_for(technician).generic("POST", SCANS, raw.encode(), content_type="application/json")
    assert answer.status_code == 400, answer.content[:300]
    assert is_error_shape(answer.json()) or set(answer.json()) == {"detail"}


def test_a_project_given_as_an_object_is_a_400(fabric, technician, api_for):
    answer = post(api_for(technician), {"project": {"code": "ACME-72"}, "action": "lookup", "code": "C00001"})
    assert answer.status_code == 400 and "project" in answer.json()


# --- GET /api/scans/ ------------------------------------------------------------------------------------------


def test_the_scan_list_is_newest_first_filtered_and_scoped(fabric, technician, manager, outsider, api_for):
    for code, where in (("C00001/A", "gpu-001:ib0/0"), ("C00001/B", "leaf-01:p2"), ("C00002/A", "gpu-001:ib0/1")):
        scan_record(user=technician, project=fabric.project, action="cable_end", code=code, port_code=where)
    scan_record(user=manager, project=fabric.project, action="rack", code="gpu-002")
    api = api_for(manager)
    listed = api.get(SCANS, {"project": "ACME-72"}).json()["results"]
    assert [s["raw_code"] for s in listed] == ["gpu-002", "C00002/A", "C00001/B", "C00001/A"]

    def raw_codes(**filters):
        return [s["raw_code"] for s in api.get(SCANS, filters).json()["results"]]

    assert raw_codes(result="refused") == ["C00001/B"]
    assert raw_codes(action="rack", user="mgr") == ["gpu-002"]
    assert raw_codes(cable=fabric.c1.pk) == ["C00001/B", "C00001/A"]
    assert raw_codes(device=fabric.gpu2.pk) == ["gpu-002"]
    assert raw_codes(project="OTHER-8") == []
    assert api.get(SCANS, {"action": "dance"}).status_code == 400
    assert api_for(outsider).get(SCANS).json()["results"] == []
    assert api_for(outsider).get(reverse("scan-detail", args=[ScanEvent.objects.first().pk])).status_code == 404


def test_the_scan_list_costs_the_same_queries_for_3_or_30_scans(fabric, technician, api_for):
    api = api_for(technician)

    def scans(n):
        for i in range(n):
            code, where = [("C00001/A", "gpu-001:ib0/0"), ("C00005/B", "leaf-02:p3"), ("gpu-003", "")][i % 3]
            action = "rack" if code.startswith("gpu") else "cable_end"
            scan_record(user=technician, project=fabric.project, action=action, code=code, port_code=where or None)

    scans(3)
    few = count_queries(lambda: api.get(SCANS, {"project": "ACME-72"}))
    scans(27)
    assert count_queries(lambda: api.get(SCANS, {"project": "ACME-72"})) == few


# --- /api/cables/ ---------------------------------------------------------------------------------------------


def labels(answer) -> list[str]:
    assert answer.status_code == 200, answer.content[:300]
    return [c["label"] for c in answer.json()["results"]]


def test_the_cable_list_filters_and_shows_each_end_with_its_far_ends(fabric, customer, api_for):
    api = api_for(customer)
    assert labels(api.get("/api/cables/")) == [f"C0000{i}" for i in range(1, 8)] + ["O00001"]
    assert labels(api.get("/api/cables/", {"network": "oob"})) == ["O00001"]
    assert labels(api.get("/api/cables/", {"plane": 1})) == ["C00002", "C00004", "C00007"]
    assert labels(api.get("/api/cables/", {"rack": "A01", "device": "gpu-003"})) == ["C00005"]
    assert labels(api.get("/api/cables/", {"label": "c00006"})) == ["C00006"]
    assert labels(api.get("/api/cables/", {"status": "verified"})) == []
    assert labels(api.get("/api/cables/", {"project": "OTHER-8"})) == []
    breakout = api.get(f"/api/cables/{fabric.breakout.pk}/").json()
    assert [(e["code"], e["device"], e["port"], e["far_ends"]) for e in breakout["ends"]] == [
        ("C00005/A", "gpu-003", "ib0", ["C00005/B1", "C00005/B2"]),
        ("C00005/B1", "leaf-01", "p3", ["C00005/A"]),
        ("C00005/B2", "leaf-02", "p3", ["C00005/A"]),
    ]
    assert len(api.get("/api/cables/", {"page_size": 10_000}).json()["results"]) == 8  # capped page, never refused


def test_outsiders_see_no_cable(fabric, outsider, api_for):
    api = api_for(outsider)
    assert labels(api.get("/api/cables/")) == ["C00001-FOREIGN"]
    assert api.get(f"/api/cables/{fabric.c1.pk}/").status_code == 404
    assert post(api, {}, f"/api/cables/{fabric.c1.pk}/scan/").status_code == 404
    assert post(api, {"status": "faulty"}, f"/api/cables/{fabric.c1.pk}/status/").status_code == 404


def test_the_cable_list_costs_the_same_queries_for_5_or_50_cables(project, manager, api_for, add_cables):
    api = api_for(manager)
    add_cables(project, 5, 0)
    few = count_queries(lambda: api.get("/api/cables/", {"project": project.code}))
    add_cables(project, 45, 5)
    assert count_queries(lambda: api.get("/api/cables/", {"project": project.code})) == few


def test_scanning_a_cable_through_its_own_action(fabric, technician, api_for):
    api = api_for(technician)
    url = f"/api/cables/{fabric.c1.pk}/scan/"
    first = post(api, {"port_code": "leaf-01:p1", "idempotency_key": "cable-scan-1"}, url)  # the bare label
    assert first.status_code == 201 and first.json()["reason"].startswith("C00001/B confirmed in leaf-01 port p1.")
    assert post(api, {"port_code": "leaf-01:p1", "idempotency_key": "cable-scan-1"}, url).status_code == 200
    other = post(api, {"code": "C00002/A", "port_code": "gpu-001:ib0/1"}, url).json()
    assert (other["result"], other["reason"]) == ("refused", "C00002/A is the label of C00002, not of C00001.")
    assert post(api, {"code": {"no": 1}, "port_code": "leaf-01:p1"}, url).status_code == 400


def test_setting_a_cables_status_by_hand_with_a_reason(fabric, technician, customer, api_for):
    url = f"/api/cables/{fabric.c1.pk}/status/"
    answer = post(api_for(technician), {"status": "faulty", "reason": "  bent at the tray  "}, url)
    assert answer.status_code == 200, answer.content
    assert (answer.json()["status"], answer.json()["status_cause"]) == ("faulty", "Set to faulty by tech: bent at the "
                                                                                  "tray")
    assert Cable.objects.get(pk=fabric.c1.pk).history.latest().history_user == technician
    refused = post(api_for(technician), {"status": "verified"}, url)
    assert refused.status_code == 400
    assert refused.json() == {"status": ["A cable is verified by a scan of both its ends, not set by hand: scan it "
                                         "instead."]}
    assert post(api_for(technician), {"status": ["faulty"]}, url).status_code == 400
    assert post(api_for(customer), {"status": "installed"}, url).status_code == 403
    assert Cable.objects.get(pk=fabric.c1.pk).status == CableStatus.FAULTY


# --- /api/search/ ----------------------------------------------------------------------------------------------


def test_search_resolves_a_code_in_one_step(fabric, customer, outsider, api_for):
    api = api_for(customer)
    found = api.get("/api/search/", {"project": "ACME-72", "q": "leaf-01:p1"}).json()["matches"]
    assert [(m["kind"], m["label"], m["how"]) for m in found] == [("port", "leaf-01:p1", "device and port")]
    assert found[0]["url"] == reverse("inventory:device-detail", args=["ACME-72", fabric.leaf1.pk])
    assert api_for(outsider).get("/api/search/", {"project": "ACME-72", "q": "C00001"}).json() == {"matches": []}
    assert api.get("/api/search/", {"project": "ACME-72", "q": "x" * 600}).status_code == 400
    for nothing_asked in ({"project": "ACME-72", "q": "  "}, {"project": "ACME-72"}, {}):
        assert api.get("/api/search/", nothing_asked).json() == {"matches": []}


def test_the_schema_documents_the_floor_api():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    scans = schema["paths"]["/api/scans/"]["post"]
    assert {"200", "201", "400", "403", "404"} <= set(scans["responses"])
    assert scans["requestBody"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ScanInput"}
    assert {"/api/cables/", "/api/cables/{id}/", "/api/cables/{id}/scan/", "/api/cables/{id}/status/",
            "/api/scans/{id}/", "/api/search/"} <= set(schema["paths"])
    components = schema["components"]["schemas"]
    assert set(components["ScanActionEnum"]["enum"]) == set(ScanAction.values)
    assert {"project", "action", "code", "idempotency_key", "port_code", "position_u"} <= set(
        components["ScanInput"]["properties"])
    assert json.dumps(components["ScanEvent"])  # serialisable: no lazy objects left in it


HOSTILE_READS = [
    ("/api/cables/", {"plane": "99999999999999999999"}),
    ("/api/cables/", {"plane": "1e999"}),
    ("/api/cables/", {"page": "99999999999999999999"}),
    ("/api/cables/", {"rack": "x" * 100_000}),
    ("/api/cables/", {"label": "a\x00b"}),
    ("/api/scans/", {"cable": "99999999999999999999999"}),
    ("/api/scans/", {"device": "1e999"}),
    ("/api/scans/", {"user": "\x00"}),
    ("/api/scans/", {"cursor": "garbage"}),
    ("/api/scans/", {"result": "x" * 100_000}),
    ("/api/search/", {"project": "ACME-72", "q": "\x00"}),
    ("/api/search/", {"project": "\x00", "q": "C00001"}),
    ("/api/search/", {"project": "ACME-72", "q": "a" * 100_000}),
]


@pytest.mark.parametrize(("url", "params"), HOSTILE_READS, ids=[f"{u} {sorted(p)[0]}" for u, p in HOSTILE_READS])
def test_hostile_filters_are_never_a_500(fabric, technician, api_for, url, params):
    answer = api_for(technician).get(url, params)
    assert answer.status_code in (200, 400, 404), answer.content[:300]


def test_a_scan_costs_the_same_queries_whatever_the_cable(fabric, technician, api_for):
    """A scan reads and writes a fixed number of rows: confirming the last end of a breakout (three ends,
    three ports moving on) costs what it costs on a plain cable, and the answer reads nothing more."""
    api = api_for(technician)
    post(api, confirm("C00001/A", "gpu-001:ib0/0"))
    post(api, confirm("C00005/A", "gpu-003:ib0"))
    post(api, confirm("C00005/B1", "leaf-01:p3"))
    plain = count_queries(lambda: post(api, confirm("C00001/B", "leaf-01:p1")))
    breakout = count_queries(lambda: post(api, confirm("C00005/B2", "leaf-02:p3")))
    assert plain == breakout <= 18
    assert Cable.objects.filter(status=CableStatus.VERIFIED).count() == 2
    lookups = [count_queries(lambda code=code: post(api, {"project": "ACME-72", "action": "lookup", "code": code}))
               for code in ("C00002", "C00006")]
    assert lookups[0] == lookups[1] <= 12
