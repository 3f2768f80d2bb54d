"""The fabric plan API: POST a spec (YAML text or a JSON object) to preview, POST to apply; 400 naming the
spec field on bad specs; managers only (technicians and customers 403, outsiders 404); the list's query
count does not grow with the number of plans."""

from __future__ import annotations

import pytest
import yaml

from cabling.choices import CableStatus
from cabling.models import Cable, FabricPlan
from cabling.services import fabric_plan_preview, plan_apply
from core.choices import JobStatus
from tests.cabling.test_plan_apply import fabric72_catalogue, small_spec
from tests.support import count_queries

pytestmark = pytest.mark.django_db

PREVIEW = "/api/fabric-plans/preview/"


def apply_url(row) -> str:
    return f"/api/fabric-plans/{row.pk}/apply/"


def detail_url(row) -> str:
    return f"/api/fabric-plans/{row.pk}/"


@pytest.fixture
def previewed(project, manager):
    fabric72_catalogue()
    return fabric_plan_preview(project=project, user=manager, spec_text=small_spec(4))


def test_preview_then_apply(api_for, manager, project, django_capture_on_commit_callbacks):
    fabric72_catalogue()
    api = api_for(manager)
    response = api.post(PREVIEW, {"project": project.code, "spec": small_spec(4)}, format="json")
    assert response.status_code == 201
    data = response.json()
    assert data["status"] == JobStatus.WAITING and data["project"] == project.code
    assert data["summary"]["switches"] == {"compute": {"leaf": 8, "spine": 1, "super_spine": 0}}
    assert data["summary"]["cables"] == 64 and data["diff"]["counts"]["cables_added"] == 64
    assert data["diff"]["cables_added"][0] == {
        "label": "C00001", "network": "compute", "ends": ["A01-U12-gpu-001-ib0", "N01-U05-ib-leaf-01-p1"],
    }
    assert not Cable.objects.filter(project=project).exists()
    row = FabricPlan.objects.get(pk=data["id"])
    with django_capture_on_commit_callbacks(execute=True):
        applied = api.post(apply_url(row), {}, format="json")
    assert applied.status_code == 202 and applied.json()["status"] in (JobStatus.QUEUED,
                                                                       JobStatus.DONE)
    now = api.get(detail_url(row)).json()
    assert now["status"] == JobStatus.DONE and now["finished"] and now["confirmed_by"] == manager.username
    assert Cable.objects.filter(project=project).count() == 64
    again = api.post(apply_url(row), {}, format="json")
    # The one error shape (core.api.exceptions): a refusal that names no field is a non-field error.
    assert again.status_code == 400
    assert again.json() == {"non_field_errors": ["This plan is not waiting for confirmation."]}


def test_the_spec_may_be_a_json_object(api_for, manager, project):
    fabric72_catalogue()
    spec = yaml.safe_load(small_spec(2))
    response = api_for(manager).post(PREVIEW, {"project": project.code, "spec": spec}, format="json")
    assert response.status_code == 201 and response.json()["summary"]["servers"] == 2
    assert yaml.safe_load(FabricPlan.objects.get().spec_text) == spec


def test_a_bad_spec_is_400_naming_the_field(api_for, manager, project):
    spec = yaml.safe_load(small_spec(4))
    spec["networks"]["compute"]["planes"] = 3
    response = api_for(manager).post(PREVIEW, {"project": project.code, "spec": spec}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "spec": ["servers[0].ports[0].lanes: compute has 3 planes, one per lane, so its ports need 3 lanes (has 4)"]
    }
    assert api_for(manager).post(PREVIEW, {"project": project.code, "spec": 7}, format="json").status_code == 400
    missing = api_for(manager).post(PREVIEW, {"project": project.code}, format="json")
    assert missing.status_code == 400 and "spec" in missing.json()
    assert not FabricPlan.objects.exists()


def test_a_blocked_plan_needs_keep_installed(api_for, manager, project, django_capture_on_commit_callbacks):
    fabric72_catalogue()
    plan_apply(project=project, spec_text=small_spec(8), user=manager)
    Cable.objects.filter(project=project, ends__port__device__name="gpu-007").update(status=CableStatus.VERIFIED)
    api = api_for(manager)
    data = api.post(PREVIEW, {"project": project.code, "spec": small_spec(4)}, format="json").json()
    assert data["diff"]["counts"]["cables_blocked"] == 8 and len(data["diff"]["blocked"]) == 8
    row = FabricPlan.objects.get(pk=data["id"])
    refused = api.post(apply_url(row), {}, format="json")
    assert refused.status_code == 400 and list(refused.json()) == ["keep_installed"]
    with django_capture_on_commit_callbacks(execute=True):
        kept = api.post(apply_url(row), {"keep_installed": True}, format="json")
    assert kept.status_code == 202
    assert api.get(detail_url(row)).json()["status"] == JobStatus.DONE
    assert Cable.objects.filter(project=project, removed_from_plan=True, status=CableStatus.VERIFIED).count() == 8


# --- who may ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("who", ["technician", "customer"])
def test_technicians_and_customers_get_403(request, api_for, project, previewed, who):
    api = api_for(request.getfixturevalue(who))
    assert api.post(PREVIEW, {"project": project.code, "spec": small_spec(4)}, format="json").status_code == 403
    assert api.post(apply_url(previewed), {}, format="json").status_code == 403
    assert api.get(detail_url(previewed)).status_code == 403
    assert api.get("/api/fabric-plans/").status_code == 403
    previewed.refresh_from_db()
    assert previewed.status == JobStatus.WAITING and FabricPlan.objects.count() == 1


def test_outsiders_get_404(api_for, outsider, project, previewed):
    api = api_for(outsider)
    assert api.post(PREVIEW, {"project": project.code, "spec": small_spec(4)}, format="json").status_code == 404
    assert api.post(apply_url(previewed), {}, format="json").status_code == 404
    assert api.get(detail_url(previewed)).status_code == 404
    assert api.post(PREVIEW, {"project": "NO-SUCH", "spec": small_spec(4)}, format="json").status_code == 404


def test_the_list_holds_only_the_plans_of_projects_the_user_manages(api_for, manager, project, other_project,
                                                                     previewed):
    from tests.factories import UserFactory

    theirs = fabric_plan_preview(project=other_project, user=UserFactory(), spec_text=small_spec(2))
    ids = [row["id"] for row in api_for(manager).get("/api/fabric-plans/").json()["results"]]
    assert ids == [previewed.pk] and theirs.pk not in ids
    assert "spec_text" not in api_for(manager).get("/api/fabric-plans/").json()["results"][0]


def test_anonymous_requests_are_refused(client, previewed):
    assert client.get("/api/fabric-plans/").status_code in (401, 403)
    assert client.post(PREVIEW, {}).status_code in (401, 403)


def test_list_query_count_does_not_grow(api_for, manager, project, django_assert_num_queries):
    fabric72_catalogue()
    api = api_for(manager)
    for _ in range(2):
        fabric_plan_preview(project=project, user=manager, spec_text=small_spec(2))
    few = count_queries(lambda: api.get("/api/fabric-plans/"))
    for _ in range(8):
        fabric_plan_preview(project=project, user=manager, spec_text=small_spec(2))
    with django_assert_num_queries(few):
        assert len(api.get("/api/fabric-plans/").json()["results"]) == 10
