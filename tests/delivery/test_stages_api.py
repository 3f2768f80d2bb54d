"""The stages API (delivery/stages/api.py): a project's stages with their gates as last computed, the workflow
actions through the services (the gate's refusal with its missing items, a waiver then a completion), the
checklist, the recompute request, every endpoint as manager, technician, customer and outsider, hostile
input answered 4xx naming the field, and list query counts that do not grow with the data."""

from __future__ import annotations

import pytest

from delivery.choices import StageStatus
from delivery.models import GateRecompute, Stage
from delivery.stages.data import DEFAULT_STAGES
from delivery.stages.services import gates_recompute, stage_add_custom, waiver_record
from tests.support import count_queries

from .stages_world import build_world

pytestmark = pytest.mark.django_db

LIST = "/api/stages/"
RECOMPUTE = "/api/stages/recompute/"
ACTIONS = ("start", "skip", "complete", "waive")


def stage_of(project, key: str) -> Stage:
    return Stage.objects.get(project=project, key=key)


def url(stage: Stage, action: str = "") -> str:
    return f"/api/stages/{stage.pk}/" + (f"{action}/" if action else "")


def rows(response) -> list[dict]:
    assert response.status_code == 200, response.content
    return response.json()["results"]


@pytest.fixture
def world(project, manager, technician, customer, outsider):
    world = build_world(project)
    gates_recompute(project=project)
    return world


# --- reading -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["manager", "technician", "customer"])
def test_members_list_the_projects_stages_in_order_with_their_gates(world, api_for, request, role):
    body = rows(api_for(request.getfixturevalue(role)).get(LIST, {"project": world.project.code}))
    assert [row["key"] for row in body] == [spec["key"] for spec in DEFAULT_STAGES]
    assert [row["order"] for row in body] == sorted(row["order"] for row in body)
    racking = next(row for row in body if row["key"] == "racking")
    assert racking["depends_on"] == ["site_readiness"] and racking["status"] == StageStatus.NOT_STARTED
    assert racking["gate_passed"] is False and racking["gate_missing_count"] == 3
    assert {item["label"] for item in racking["gate_missing"]} == {"gpu-001", "gpu-002", "leaf-01"}
    assert all(item["ref"].startswith("inventory.device:") for item in racking["gate_missing"])
    assert racking["gate_summary"] and racking["gate_computed_at"] and racking["waivers"] == []
    assert racking["waivers_cover_gate"] is False
    network = next(row for row in body if row["key"] == "network_config")
    assert len(network["checklist"]) == 6 and network["checklist"][0]["confirmed_by"] is None


@pytest.mark.parametrize("role", ["manager", "technician", "customer"])
def test_one_stage_reads_like_its_row_in_the_list(world, api_for, request, role):
    client = api_for(request.getfixturevalue(role))
    racking = stage_of(world.project, "racking")
    answer = client.get(url(racking))
    assert answer.status_code == 200
    listed = next(row for row in rows(client.get(LIST)) if row["key"] == "racking")
    assert answer.json() == listed and answer.json()["project"] == world.project.code


def test_an_outsider_sees_no_stage_of_the_project(world, api_for, outsider):
    client = api_for(outsider)
    assert rows(client.get(LIST)) == []
    assert rows(client.get(LIST, {"project": world.project.code})) == []
    racking = stage_of(world.project, "racking")
    assert client.get(url(racking)).status_code == 404
    for action in ACTIONS:
        assert client.post(url(racking, action), {"reason": "x", "all_items": True}, format="json").status_code == 404


def test_anonymous_requests_are_refused(world):
    from rest_framework.test import APIClient

    assert APIClient().get(LIST).status_code in (401, 403)
    assert APIClient().post(url(stage_of(world.project, "racking"), "complete")).status_code in (401, 403)


def test_filters_by_status_and_key(world, api_for, manager):
    client = api_for(manager)
    client.post(url(stage_of(world.project, "site_readiness"), "complete"))
    done = rows(client.get(LIST, {"project": world.project.code, "status": StageStatus.DONE}))
    assert [row["key"] for row in done] == ["site_readiness"]
    assert [row["key"] for row in rows(client.get(LIST, {"key": "soak"}))] == ["soak"]


# --- the workflow ---------------------------------------------------------------------------------------------


def test_the_gate_refuses_completion_naming_its_missing_items(world, api_for, manager):
    client = api_for(manager)
    done = client.post(url(stage_of(world.project, "site_readiness"), "complete"))
    assert done.status_code == 200 and done.json()["status"] == StageStatus.DONE
    assert done.json()["completed_by"] == "mgr"
    started = client.post(url(stage_of(world.project, "racking"), "start"), {}, format="json")
    assert started.status_code == 200 and started.json()["status"] == StageStatus.IN_PROGRESS
    assert started.json()["started_by"] == "mgr" and started.json()["started_at"]

    refused = client.post(url(stage_of(world.project, "racking"), "complete"))
    assert refused.status_code == 400
    message = " ".join(refused.json()["non_field_errors"])
    assert "3 missing" in message and all(name in message for name in ("gpu-001", "gpu-002", "leaf-01"))
    assert stage_of(world.project, "racking").status == StageStatus.IN_PROGRESS


def test_a_waiver_of_some_items_then_of_all_lets_the_stage_complete(world, api_for, manager):
    client = api_for(manager)
    client.post(url(stage_of(world.project, "site_readiness"), "complete"))
    racking = stage_of(world.project, "racking")
    refs = [item["ref"] for item in racking.gate_missing]

    one = client.post(url(racking, "waive"), {"items": refs[:1], "reason": "Racked by the customer's staff."},
                      format="json")
    assert one.status_code == 201
    assert one.json()["waivers"][0]["items"] == refs[:1] and one.json()["waivers"][0]["recorded_by"] == "mgr"
    assert one.json()["waivers_cover_gate"] is False
    still = client.post(url(racking, "complete"))
    assert still.status_code == 400 and "gpu-002" in still.json()["non_field_errors"][0]

    every = client.post(url(racking, "waive"), {"all_items": True, "reason": "Scanners arrive next week."},
                        format="json")
    assert every.status_code == 201 and every.json()["waivers_cover_gate"] is True
    assert [w["all_items"] for w in every.json()["waivers"]] == [False, True]
    completed = client.post(url(racking, "complete"))
    assert completed.status_code == 200, completed.content
    assert completed.json()["status"] == StageStatus.DONE and completed.json()["completed_by"] == "mgr"
    assert stage_of(world.project, "racking").waivers.count() == 2


def test_skip_needs_a_reason_and_records_it(world, api_for, manager):
    client = api_for(manager)
    soak = stage_of(world.project, "soak")
    blank = client.post(url(soak, "skip"), {"reason": "   "}, format="json")
    assert blank.status_code == 400 and "reason" in blank.json()
    assert client.post(url(soak, "skip"), {}, format="json").json().keys() == {"reason"}
    skipped = client.post(url(soak, "skip"), {"reason": "The customer soaks on their own job."}, format="json")
    assert skipped.status_code == 200
    assert skipped.json()["status"] == StageStatus.SKIPPED
    assert skipped.json()["skipped_reason"] == "The customer soaks on their own job."
    again = client.post(url(soak, "skip"), {"reason": "Twice."}, format="json")
    assert again.status_code == 400 and "already skipped" in again.json()["non_field_errors"][0]


def test_starting_a_stage_with_work_starts_it_and_names_its_job(world, api_for, manager):
    client = api_for(manager)
    for key in ("site_readiness", "racking"):
        client.post(url(stage_of(world.project, key), "skip"), {"reason": "Done before we arrived."}, format="json")
    started = client.post(url(stage_of(world.project, "os_drivers"), "start"), {"runner": "simulated"},
                          format="json")
    assert started.status_code == 200, started.content
    [job] = started.json()["jobs"]
    assert job["type"] == "validation.checkrun"
    assert job["status_url"] == f"/api/jobs/validation.checkrun/{job['id']}/"
    assert client.get(job["status_url"]).status_code == 200
    assert stage_of(world.project, "os_drivers").status == StageStatus.IN_PROGRESS


def test_a_stage_does_not_start_before_its_dependencies_nor_with_an_unknown_runner(world, api_for, manager):
    client = api_for(manager)
    early = client.post(url(stage_of(world.project, "racking"), "start"), {}, format="json")
    assert early.status_code == 400 and "before Site readiness" in early.json()["non_field_errors"][0]
    runner = client.post(url(stage_of(world.project, "site_readiness"), "start"), {"runner": "local"}, format="json")
    assert runner.status_code == 400 and "runner" in runner.json()
    assert stage_of(world.project, "site_readiness").status == StageStatus.NOT_STARTED


def test_a_waiver_names_what_is_wrong_with_it(world, api_for, manager):
    client = api_for(manager)
    racking = url(stage_of(world.project, "racking"), "waive")
    unknown = client.post(racking, {"items": ["inventory.device:999999"], "reason": "x"}, format="json")
    assert unknown.status_code == 400 and "inventory.device:999999" in unknown.json()["items"][0]
    nothing = client.post(racking, {"reason": "x"}, format="json")
    assert nothing.status_code == 400 and "items" in nothing.json()
    assert "reason" in client.post(racking, {"all_items": True}, format="json").json()
    passed = client.post(url(stage_of(world.project, "site_readiness"), "waive"), {"all_items": True, "reason": "x"},
                         format="json")
    assert passed.status_code == 400 and "misses nothing" in passed.json()["items"][0]


@pytest.mark.parametrize("role", ["technician", "customer"])
def test_only_managers_start_skip_complete_waive_and_recompute(world, api_for, request, role):
    client = api_for(request.getfixturevalue(role))
    stage = stage_of(world.project, "site_readiness")
    for action in ACTIONS:
        answer = client.post(url(stage, action), {"reason": "x", "all_items": True}, format="json")
        assert answer.status_code == 403, (action, answer.content)
    assert client.post(RECOMPUTE, {"project": world.project.code}, format="json").status_code == 403
    assert stage_of(world.project, "site_readiness").status == StageStatus.NOT_STARTED


# --- checklist ------------------------------------------------------------------------------------------------


def test_technicians_confirm_a_checklist_item_once(world, api_for, technician, manager):
    item = stage_of(world.project, "network_config").checklist.order_by("order").first()
    confirm = f"/api/checklist-items/{item.pk}/confirm/"
    answer = api_for(technician).post(confirm)
    assert answer.status_code == 200
    assert answer.json()["confirmed_by"] == "tech" and answer.json()["confirmed_at"]
    again = api_for(manager).post(confirm)
    assert again.status_code == 400 and "already confirmed by tech" in again.json()["non_field_errors"][0]


def test_a_customer_reads_a_checklist_item_but_does_not_confirm_and_an_outsider_gets_404(
    world, api_for, customer, outsider, manager, technician
):
    item = stage_of(world.project, "network_config").checklist.first()
    for member in (manager, technician, customer):
        assert api_for(member).get(f"/api/checklist-items/{item.pk}/").json()["text"] == item.text
    assert api_for(customer).post(f"/api/checklist-items/{item.pk}/confirm/").status_code == 403
    assert api_for(outsider).get(f"/api/checklist-items/{item.pk}/").status_code == 404
    assert api_for(outsider).post(f"/api/checklist-items/{item.pk}/confirm/").status_code == 404
    item.refresh_from_db()
    assert item.confirmed_at is None


# --- recompute --------------------------------------------------------------------------------------------------


def test_a_manager_asks_for_a_recompute_once_while_one_is_queued(world, api_for, manager,
                                                                  django_capture_on_commit_callbacks):
    Stage.objects.filter(project=world.project).update(gate_computed_at=None)
    client = api_for(manager)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(RECOMPUTE, {"project": world.project.code}, format="json")
    assert first.status_code == 202 and first.json()["queued"] is True
    assert not Stage.objects.filter(project=world.project, gate_computed_at=None).exists()  # the (eager) task ran
    GateRecompute.objects.filter(project=world.project).update(pending=True)  # as if a worker had not run it yet
    second = client.post(RECOMPUTE, {"project": world.project.code}, format="json")
    assert second.status_code == 202 and second.json()["queued"] is False
    assert "already queued" in second.json()["detail"]


def test_a_recompute_naming_a_project_an_outsider_cannot_see_answers_as_for_no_project(world, api_for, outsider):
    client = api_for(outsider)
    real = client.post(RECOMPUTE, {"project": world.project.code}, format="json")
    made_up = client.post(RECOMPUTE, {"project": "NO-SUCH"}, format="json")
    assert real.status_code == made_up.status_code == 404
    assert real.json() == made_up.json()


# --- hostile input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "field"), [
    ({}, "project"),
    ({"project": 72}, "project"),
    ({"project": ["ACME-72"]}, "project"),
    ({"project": {"code": "ACME-72"}}, "project"),
    ([1, 2], "non_field_errors"),
])
def test_a_recompute_with_a_bad_project_names_it(world, api_for, manager, body, field):
    answer = api_for(manager).post(RECOMPUTE, body, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.content


def test_a_nul_byte_in_a_project_code_is_no_project(world, api_for, manager):
    answer = api_for(manager).post(RECOMPUTE, {"project": "ACME\x00-72"}, format="json")
    assert answer.status_code == 404
    listed = api_for(manager).get(LIST, {"project": "ACME\x00-72"})
    assert listed.status_code == 400 and "project" in listed.json()


@pytest.mark.parametrize(("action", "body", "field"), [
    ("skip", {"reason": 12}, "reason"),
    ("skip", {"reason": ["a"]}, "reason"),
    ("skip", {"reason": "a\x00b"}, "reason"),
    ("skip", {"reason": "x" * 10_000}, "reason"),
    ("waive", {"reason": "x", "items": "inventory.device:1"}, "items"),
    ("waive", {"reason": "x", "items": [{"ref": 1}]}, "items"),
    ("waive", {"reason": "x", "items": ["r"] * 500}, "items"),
    ("waive", {"reason": "x", "all_items": {"yes": 1}}, "all_items"),
    ("waive", {"reason": {"a": [{"b": 1}]}}, "reason"),
    ("start", {"runner": 10**30}, "runner"),
    ("start", {"runner": None}, "runner"),
])
def test_wrong_types_and_sizes_are_400s_naming_the_field(world, api_for, manager, action, body, field):
    answer = api_for(manager).post(url(stage_of(world.project, "racking"), action), body, format="json")
    assert answer.status_code == 400 and field in answer.json(), answer.content


def test_deep_json_huge_ids_and_bad_filters_are_4xx(world, api_for, manager):
    client = api_for(manager)
    deep = "[" * 5000 + "]" * 5000
    answer = client.generic("POST", url(stage_of(world.project, "racking"), "skip"), deep,
                            content_type="application/json")
    assert answer.status_code == 400 and "non_field_errors" in answer.json()
    assert client.get("/api/stages/99999999999999999999999/").status_code == 404
    assert client.post("/api/stages/99999999999999999999999/complete/").status_code == 404
    assert client.post("/api/checklist-items/99999999999999999999999/confirm/").status_code == 404
    bad = client.get(LIST, {"status": "finished"})
    assert bad.status_code == 400 and "status" in bad.json()
    assert client.get(LIST, {"page": "10**30"}).status_code == 404


# --- query counts ----------------------------------------------------------------------------------------------


def test_the_list_costs_the_same_queries_whatever_the_number_of_stages_waivers_and_items(
    world, api_for, manager, customer, django_assert_num_queries
):
    client = api_for(customer)
    client.get(LIST)
    few = count_queries(lambda: client.get(LIST))
    for n in range(6):
        stage_add_custom(project=world.project, user=manager, title=f"Extra {n}", checklist=["a", "b", "c"],
                         depends_on=[])
    gates_recompute(project=world.project)
    for key in ("racking", "cabling", "os_drivers"):
        waiver_record(stage=stage_of(world.project, key), user=manager, all_items=True, reason="For the count.")
    with django_assert_num_queries(few):
        assert len(rows(client.get(LIST))) == 15
