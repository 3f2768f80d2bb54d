"""The plan pages: the spec form (text, upload, examples), the preview with the plan's figures, BOM and
diff, Confirm (the apply runs as a task on the FabricPlan row, its progress polled from the one job
status endpoint), and who may see them: managers only (technicians and customers 403, outsiders 404).
Query counts stay constant."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cabling.choices import CableStatus
from cabling.models import Cable, FabricPlan
from cabling.services import fabric_plan_preview, plan_apply
from cabling.tasks import apply_fabric_plan
from core.choices import JobStatus
from tests.cabling.test_plan_apply import fabric72_catalogue, small_spec
from tests.support import count_queries

pytestmark = pytest.mark.django_db


def page_url(project, name="page", *args) -> str:
    return reverse(f"plans:{name}", args=[project.code, *args])


def job_url(row) -> str:
    return reverse("api-job-status", args=[row.job_type, row.pk])


def submit(client, project, spec: str):
    return client.post(page_url(project), {"spec": spec})


@pytest.fixture
def previewed(project, manager):
    fabric72_catalogue()
    return fabric_plan_preview(project=project, user=manager, spec_text=small_spec(4))


# --- the manager's way through -----------------------------------------------------------------------


def test_the_form_offers_the_examples_and_loads_one(client_for, manager, project):
    client = client_for(manager)
    body = client.get(page_url(project)).content.decode()
    for name in ("fabric-72", "fabric-256", "fabric-1024", "demo-72"):
        assert f'data-example="{name}"' in body
        assert page_url(project, "example", name) in body
    loaded = client.get(page_url(project) + "?example=fabric-72").content.decode()
    assert "name: fabric-72" in loaded and "Q3400-RA" in loaded
    download = client.get(page_url(project, "example", "fabric-256"))
    assert download.status_code == 200 and b"name: fabric-256" in download.content
    assert client.get(page_url(project, "example", "passwd")).status_code == 404


def test_submit_preview_confirm_apply(client_for, manager, project, django_capture_on_commit_callbacks):
    fabric72_catalogue()
    client = client_for(manager)
    response = submit(client, project, small_spec(4))
    row = FabricPlan.objects.get(project=project)
    assert response.status_code == 302 and response["Location"] == page_url(project, "detail", row.pk)
    assert row.status == JobStatus.WAITING and not Cable.objects.filter(project=project).exists()
    body = client.get(response["Location"]).content.decode()
    assert '<tr data-network="compute"><td>compute</td><td>4</td><td>2</td><td>8</td><td>1</td>' in body
    assert '<tr data-count="cables_added"><td>cables_added</td><td>64</td></tr>' in body
    assert "<td>switch (leaf)</td><td>Q3400-RA</td><td>8</td>" in body  # the BOM
    assert 'data-cable="C00001"' in body and "A01-U12-gpu-001-ib0 &gt; N01-U05-ib-leaf-01-p1" in body
    assert "Confirm and apply" in body
    with django_capture_on_commit_callbacks(execute=True):
        confirmed = client.post(page_url(project, "confirm", row.pk))
    assert confirmed.status_code == 302
    row.refresh_from_db()
    assert row.status == JobStatus.DONE and row.confirmed_by == manager and row.applied_at
    assert Cable.objects.filter(project=project).count() == 64
    status = client.get(job_url(row)).json()
    assert (status["type"], status["status"], status["status_label"], status["settled"]) == (
        "cabling.fabricplan", JobStatus.DONE, "Applied", True)
    assert status["done"] == status["total"] == row.progress_total and status["percent"] == 100
    body = client.get(page_url(project, "detail", row.pk)).content.decode()
    assert "What applying changed" in body and "Confirm and apply" not in body
    # Confirming twice, or the task running twice, does nothing more.
    client.post(page_url(project, "confirm", row.pk))
    assert apply_fabric_plan.delay(row.pk).get() == JobStatus.DONE
    assert Cable.objects.filter(project=project).count() == 64 and Cable.history.count() == 64


def test_a_confirmed_plan_shows_the_progress_partial_until_it_settles(client_for, manager, project, previewed):
    """Confirmed, its task not yet run (no commit in this test): the page polls the one job endpoint."""
    client = client_for(manager)
    client.post(page_url(project, "confirm", previewed.pk))
    previewed.refresh_from_db()
    assert previewed.status == JobStatus.QUEUED and previewed.confirmed_by == manager
    body = client.get(page_url(project, "detail", previewed.pk)).content.decode()
    assert f'data-progress-url="{job_url(previewed)}"' in body and "data-progress-reload" in body
    assert "js/progress.js" in body and "Confirm and apply" not in body
    status = client.get(job_url(previewed)).json()
    assert (status["status"], status["settled"]) == (JobStatus.QUEUED, False)
    waiting = fabric_plan_preview(project=project, user=manager, spec_text=small_spec(2))
    assert "data-progress-url" not in client.get(page_url(project, "detail", waiting.pk)).content.decode()


def test_a_spec_can_be_uploaded(client_for, manager, project):
    fabric72_catalogue()
    upload = SimpleUploadedFile("mini.yaml", small_spec(4).encode(), content_type="application/yaml")
    response = client_for(manager).post(page_url(project), {"spec": "", "upload": upload})
    assert response.status_code == 302
    assert FabricPlan.objects.get(project=project).spec_text == small_spec(4)


def test_a_bad_spec_is_shown_with_its_field_and_nothing_is_stored(client_for, manager, project):
    response = submit(client_for(manager), project, small_spec(4).replace("radix: 144", "radix: 0"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "The spec cannot be planned" in body
    assert "switch_models.Q3400-RA.radix: expected a positive integer, got 0" in body
    assert not FabricPlan.objects.exists()
    empty = submit(client_for(manager), project, "   ")
    assert "Paste a spec, upload one, or start from an example." in empty.content.decode()
    broken = submit(client_for(manager), project, "name: [unclosed")
    assert "spec line 1: not valid YAML" in broken.content.decode()


def test_a_plan_the_project_cannot_take_is_stored_as_failed_with_its_reasons(client_for, manager, project):
    response = submit(client_for(manager), project, small_spec(4))  # no catalogue entries at all
    row = FabricPlan.objects.get(project=project)
    assert row.status == JobStatus.FAILED
    body = client_for(manager).get(response["Location"]).content.decode()
    assert "switch_models.Q3400-RA: no hardware model with part number" in body
    assert "Confirm and apply" not in body


def test_a_blocked_plan_needs_keep_installed(client_for, manager, project, django_capture_on_commit_callbacks):
    fabric72_catalogue()
    plan_apply(project=project, spec_text=small_spec(8), user=manager)
    Cable.objects.filter(project=project, ends__port__device__name="gpu-008").update(status=CableStatus.INSTALLED)
    client = client_for(manager)
    row = FabricPlan.objects.get(pk=int(submit(client, project, small_spec(4))["Location"].rstrip("/").split("/")[-1]))
    body = client.get(page_url(project, "detail", row.pk)).content.decode()
    assert "Blocked: installed cables and switches in place" in body and 'name="keep_installed"' in body
    with django_capture_on_commit_callbacks(execute=True):
        refused = client.post(page_url(project, "confirm", row.pk), follow=True)
    assert "tick keep installed" in refused.content.decode()
    row.refresh_from_db()
    assert row.status == JobStatus.WAITING
    with django_capture_on_commit_callbacks(execute=True):
        client.post(page_url(project, "confirm", row.pk), {"keep_installed": "on"})
    row.refresh_from_db()
    assert row.status == JobStatus.DONE and row.keep_installed
    assert Cable.objects.filter(project=project, removed_from_plan=True).count() == 8


def test_an_apply_refused_at_run_time_fails_the_row_and_writes_nothing(
    client_for, manager, project, django_capture_on_commit_callbacks
):
    fabric72_catalogue()
    client = client_for(manager)
    row = FabricPlan.objects.get(pk=int(submit(client, project, small_spec(4))["Location"].rstrip("/").split("/")[-1]))
    from inventory.models import HardwareModel

    HardwareModel.objects.filter(part_number="Q3400-RA").update(part_number="RENAMED")  # after the preview
    with django_capture_on_commit_callbacks(execute=True):
        client.post(page_url(project, "confirm", row.pk))
    row.refresh_from_db()
    assert row.status == JobStatus.FAILED
    assert row.errors == ["switch_models.Q3400-RA: no hardware model with part number 'Q3400-RA' in the catalogue"]
    assert not Cable.objects.filter(project=project).exists()
    assert "Why this plan cannot be applied" in client.get(page_url(project, "detail", row.pk)).content.decode()


# --- who may ------------------------------------------------------------------------------------------


def all_urls(project, row) -> list[tuple[str, str]]:
    return [
        ("get", page_url(project)),
        ("post", page_url(project)),
        ("get", page_url(project, "example", "fabric-72")),
        ("get", page_url(project, "detail", row.pk)),
        ("post", page_url(project, "confirm", row.pk)),
    ]


@pytest.mark.parametrize("who", ["technician", "customer"])
def test_technicians_and_customers_get_403(request, client_for, project, previewed, who):
    client = client_for(request.getfixturevalue(who))
    for method, url in all_urls(project, previewed):
        assert getattr(client, method)(url, {"spec": small_spec(4)}).status_code == 403, url
    previewed.refresh_from_db()
    assert previewed.status == JobStatus.WAITING


def test_outsiders_get_404(client_for, outsider, project, previewed):
    client = client_for(outsider)
    for method, url in all_urls(project, previewed):
        assert getattr(client, method)(url, {"spec": small_spec(4)}).status_code == 404, url


def test_a_plan_of_another_project_is_404(client_for, manager, project, other_project):
    fabric72_catalogue()
    from tests.factories import UserFactory

    theirs = fabric_plan_preview(project=other_project, user=UserFactory(), spec_text=small_spec(4))
    assert client_for(manager).get(page_url(project, "detail", theirs.pk)).status_code == 404


def test_anonymous_users_are_sent_to_login(client, project, previewed):
    response = client.get(page_url(project, "detail", previewed.pk))
    assert response.status_code == 302 and reverse("login") in response["Location"]


# --- query counts -------------------------------------------------------------------------------------


def page_queries(client, url) -> int:
    def get():
        assert client.get(url).status_code == 200

    return count_queries(get)


def test_plan_list_query_count_does_not_grow(client_for, manager, project, django_assert_num_queries):
    fabric72_catalogue()
    client = client_for(manager)
    for _ in range(2):
        fabric_plan_preview(project=project, user=manager, spec_text=small_spec(4))
    few = page_queries(client, page_url(project))
    for _ in range(10):
        fabric_plan_preview(project=project, user=manager, spec_text=small_spec(4))
    with django_assert_num_queries(few):
        body = client.get(page_url(project)).content.decode()
    assert body.count("<tr data-plan=") == 12


def test_plan_detail_query_count_does_not_grow_with_the_plan(client_for, manager, project,
                                                              django_assert_num_queries):
    fabric72_catalogue()
    client = client_for(manager)
    small = fabric_plan_preview(project=project, user=manager, spec_text=small_spec(2))
    few = page_queries(client, page_url(project, "detail", small.pk))
    big = fabric_plan_preview(project=project, user=manager, spec_text=small_spec(72))
    with django_assert_num_queries(few):
        body = client.get(page_url(project, "detail", big.pk)).content.decode()
    assert body.count("<tr data-cable=") == 100 and "of 1152" in body
