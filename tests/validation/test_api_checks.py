"""The check-run API: list and read runs and results (filtered, paginated, constant query count), start a
run, cancel it, re-run its failures. Managers and technicians write, customers get 403, outsiders 404;
bad input is a 400 naming the field."""

import pytest

from core.choices import JobStatus
from tests.support import count_queries
from validation import services
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun
from validation.runners import plan_faults

from .conftest import SEED

pytestmark = pytest.mark.django_db

RUNS = "/api/check-runs/"
RESULTS = "/api/check-results/"


@pytest.fixture
def post_start(api_for, project, django_capture_on_commit_callbacks):
    """POST a start as `user`; the run's tasks execute on commit, as they do outside tests."""

    def post(user, **payload):
        payload.setdefault("project", project.code)
        with django_capture_on_commit_callbacks(execute=True):
            return api_for(user).post(RUNS, payload, format="json")

    return post


# -- reading -------------------------------------------------------------------------------------------------


def test_members_list_their_projects_runs_with_progress_and_counts(api_for, customer, link_run):
    body = api_for(customer).get(RUNS).json()
    assert body["count"] == 1
    (run,) = body["results"]
    assert run["id"] == link_run.pk and run["project"] == "ACME-72" and run["kind"] == "link_health"
    assert (run["status"], run["done"], run["total"], run["percent"], run["finished"]) == ("done", 16, 16, 100, True)
    assert (run["passed"], run["warned"], run["failed"], run["errored"]) == (14, 0, 2, 0)
    assert "log" not in run  # the list leaves the log to the run's own endpoint
    detail = api_for(customer).get(f"{RUNS}{link_run.pk}/").json()
    assert "finished: 14 pass, 0 warn, 2 fail, 0 error" in detail["log"] and detail["options"] == {"seed": SEED}


def test_runs_filter_by_project_kind_and_status(api_for, technician, start, nodes):
    link = start(CheckKind.LINK_HEALTH)
    queued = start(CheckKind.NCCL, execute=False)
    api = api_for(technician)
    assert [r["id"] for r in api.get(RUNS, {"kind": "nccl"}).json()["results"]] == [queued.pk]
    assert [r["id"] for r in api.get(RUNS, {"status": "done"}).json()["results"]] == [link.pk]
    assert api.get(RUNS, {"project": "OTHER-8"}).json()["count"] == 0
    bad = api.get(RUNS, {"kind": "tea"})
    assert bad.status_code == 400 and "kind" in bad.json()


def test_results_list_filters_and_leaves_out_the_raw_output(api_for, technician, project, link_run, nodes):
    api = api_for(technician)
    failed = api.get(RESULTS, {"run": link_run.pk, "verdict": "fail"}).json()
    assert len(failed["results"]) == 2 and all(r["verdict"] == "fail" and r["reasons"] for r in failed["results"])
    assert "raw_output" not in failed["results"][0]
    faults = plan_faults(services.sim_cluster_for(project), SEED)
    keys = {r["target_key"] for r in failed["results"]}
    assert f"{faults.dirty_fiber[0]}:ib{faults.dirty_fiber[1][-1]}" in keys
    one_node = api.get(RESULTS, {"device": nodes[1].name, "kind": "link_health"}).json()
    assert len(one_node["results"]) == 8 and {r["device"] for r in one_node["results"]} == {nodes[1].name}
    assert len(api.get(RESULTS, {"plane": 3, "run": link_run.pk}).json()["results"]) == 16
    assert api.get(RESULTS, {"network": "storage"}).json()["results"] == []
    assert api.get(RESULTS, {"plane": -1}).status_code == 400


def test_a_result_carries_its_raw_output_metrics_and_what_it_concerns(api_for, customer, link_run):
    result = link_run.results.filter(verdict=Verdict.FAIL).first()
    body = api_for(customer).get(f"{RESULTS}{result.pk}/").json()
    assert body["raw_output"] == result.raw_output and body["command"] == result.command
    assert body["metrics"]["state"] == "Active" and body["device"] == result.device.name
    assert body["port"] == result.port.name and body["port_id"] == result.port_id
    assert body["reasons"] == result.reasons and body["kind"] == "link_health"


def test_results_and_runs_are_read_only(api_for, manager, link_run):
    api = api_for(manager)
    result = link_run.results.first()
    assert api.patch(f"{RESULTS}{result.pk}/", {"verdict": "pass"}, format="json").status_code == 405
    assert api.delete(f"{RUNS}{link_run.pk}/").status_code == 405
    assert api.post(RESULTS, {}, format="json").status_code == 405


# -- starting ------------------------------------------------------------------------------------------------


def test_technician_starts_a_run_that_finds_the_injected_faults(api_for, post_start, technician, project, nodes):
    response = post_start(technician, kind="link_health", runner="simulated", options={"seed": SEED})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["requested_by"], body["kind"], body["total"], body["options"]) == ("tech", "link_health", 16,
                                                                                  {"seed": SEED})
    # The test database never commits, so the run's tasks ran after the response was built: read it again.
    after = api_for(technician).get(f"{RUNS}{body['id']}/").json()
    assert (after["status"], after["done"], after["failed"]) == ("done", 16, 2)
    assert CheckRun.objects.get(pk=body["id"]).requested_by == technician


def test_runner_defaults_to_simulated(post_start, manager, nodes):
    body = post_start(manager, kind="node_inventory").json()
    assert body["runner"] == "simulated" and CheckRun.objects.get(pk=body["id"]).status == JobStatus.DONE


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"kind": "tea"}, "kind"),
        ({"kind": "link_health", "runner": "carrier pigeon"}, "runner"),
        ({"kind": "link_health", "runner": "local"}, "runner"),
        ({"kind": "link_health", "options": {"seed": -1}}, "options.seed"),
        ({"kind": "link_health", "options": {"launcher": "srun"}}, "options.launcher"),
        ({"kind": "link_health", "options": [1, 2]}, "options"),
        ({"kind": "soak"}, "kind"),
        ({"project": "", "kind": "link_health"}, "project"),
    ],
)
def test_bad_input_is_a_400_naming_the_field(post_start, technician, nodes, payload, field):
    response = post_start(technician, **payload)
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not CheckRun.objects.exists()


def test_a_project_without_gpu_nodes_is_a_400_saying_so(post_start, technician):
    response = post_start(technician, kind="nccl")
    assert response.status_code == 400 and "no GPU nodes" in response.json()["kind"][0]


def test_customer_gets_403_and_outsider_404_when_starting(post_start, customer, outsider, nodes):
    assert post_start(customer, kind="link_health").status_code == 403
    assert post_start(outsider, kind="link_health").status_code == 404
    assert post_start(outsider, kind="link_health", project="NO-SUCH").status_code == 404
    assert not CheckRun.objects.exists()


# -- cancelling and re-running ---------------------------------------------------------------------------------


def test_technician_cancels_a_queued_run_and_cannot_cancel_it_twice(api_for, technician, start, nodes):
    run = start(CheckKind.LINK_HEALTH, execute=False)
    api = api_for(technician)
    response = api.post(f"{RUNS}{run.pk}/cancel/")
    assert response.status_code == 200 and response.json()["status"] == "cancelled"
    assert run.results.filter(status=ResultStatus.CANCELLED).count() == 16
    again = api.post(f"{RUNS}{run.pk}/cancel/")
    assert again.status_code == 400 and "already cancelled" in again.json()["non_field_errors"][0]


def test_rerun_failed_creates_a_child_run_of_the_failures(
    api_for, manager, link_run, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api_for(manager).post(f"{RUNS}{link_run.pk}/rerun-failed/")
    assert response.status_code == 201
    child = CheckRun.objects.get(pk=response.json()["id"])
    assert child.parent == link_run and response.json()["parent"] == link_run.pk and child.progress_total == 2
    assert child.status == JobStatus.DONE  # the same faults, found again
    assert set(child.results.values_list("target_key", flat=True)) == set(
        link_run.results.filter(verdict=Verdict.FAIL).values_list("target_key", flat=True)
    )


def test_rerun_of_a_clean_run_is_a_400(api_for, manager, start, nodes):
    run = start(CheckKind.NODE_INVENTORY)
    response = api_for(manager).post(f"{RUNS}{run.pk}/rerun-failed/")
    assert response.status_code == 400 and "no failed targets" in response.json()["non_field_errors"][0]


def test_customer_gets_403_on_cancel_and_rerun(api_for, customer, link_run, start):
    queued = start(CheckKind.LINK_HEALTH, execute=False)
    api = api_for(customer)
    assert api.post(f"{RUNS}{queued.pk}/cancel/").status_code == 403
    assert api.post(f"{RUNS}{link_run.pk}/rerun-failed/").status_code == 403
    queued.refresh_from_db()
    assert queued.status == JobStatus.QUEUED and CheckRun.objects.count() == 2


def test_outsider_gets_404_on_every_run_and_result_endpoint(api_for, outsider, link_run):
    api = api_for(outsider)
    result = link_run.results.first()
    assert api.get(RUNS).json()["count"] == 0 and api.get(RESULTS).json()["results"] == []
    assert api.get(f"{RUNS}{link_run.pk}/").status_code == 404
    assert api.get(f"{RESULTS}{result.pk}/").status_code == 404
    assert api.post(f"{RUNS}{link_run.pk}/cancel/").status_code == 404
    assert api.post(f"{RUNS}{link_run.pk}/rerun-failed/").status_code == 404


def test_anonymous_gets_nothing(client, link_run):
    assert client.get(RUNS).status_code in (401, 403)
    assert client.post(RUNS, {"project": "ACME-72", "kind": "link_health"}).status_code in (401, 403)


# -- query counts ----------------------------------------------------------------------------------------------


def test_run_list_costs_the_same_queries_for_5_and_50_runs(api_for, technician, project, django_assert_num_queries):
    def add(count):
        CheckRun.objects.bulk_create(
            CheckRun(project=project, kind=CheckKind.NCCL, requested_by=technician, progress_total=2, progress_done=1)
            for _ in range(count)
        )

    add(5)
    api = api_for(technician)
    few = count_queries(lambda: api.get(RUNS).json()["count"])
    add(45)
    with django_assert_num_queries(few):
        assert api.get(RUNS).json()["count"] == 50


def test_result_list_costs_the_same_queries_for_5_and_50_results(
    api_for, technician, project, link_run, django_assert_num_queries
):
    template = list(link_run.results.all())
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, progress_total=50)

    def add(start, count):
        CheckResult.objects.bulk_create(
            CheckResult(run=run, target_key=f"t{i}", device_id=t.device_id, port_id=t.port_id, metrics=t.metrics,
                        verdict=t.verdict, reasons=t.reasons, status=ResultStatus.DONE)
            for i, t in zip(range(start, start + count), template * 4, strict=False)
        )

    add(0, 5)
    api = api_for(technician)
    few = count_queries(lambda: api.get(RESULTS, {"run": run.pk}).json()["results"])
    add(5, 45)
    with django_assert_num_queries(few):
        assert len(api.get(RESULTS, {"run": run.pk}).json()["results"]) == 50


def test_more_runs_than_a_page_are_paginated(api_for, technician, project):
    CheckRun.objects.bulk_create(CheckRun(project=project, kind=CheckKind.NCCL) for _ in range(105))
    body = api_for(technician).get(RUNS).json()
    assert body["count"] == 105 and len(body["results"]) == 100 and body["next"]


def test_results_page_by_cursor_in_id_order_without_a_count(api_for, technician, project):
    run = CheckRun.objects.create(project=project, kind=CheckKind.NCCL, progress_total=105)
    CheckResult.objects.bulk_create(CheckResult(run=run, target_key=f"t{i}") for i in range(105))
    api = api_for(technician)
    first = api.get(RESULTS, {"run": run.pk}).json()
    assert set(first) == {"next", "previous", "results"} and len(first["results"]) == 100  # no COUNT of them all
    rest = api.get(first["next"]).json()
    assert len(rest["results"]) == 5 and rest["next"] is None
    ids = [r["id"] for r in first["results"] + rest["results"]]
    assert ids == sorted(run.results.values_list("pk", flat=True))


def test_a_project_without_runs_lists_nothing(api_for, manager, project):
    assert api_for(manager).get(RUNS).json() == {"count": 0, "next": None, "previous": None, "results": []}


def test_cancel_and_rerun_of_an_upload_run_are_a_400_saying_why(api_for, technician, project, nodes):
    upload = CheckRun.objects.create(
        project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.UPLOAD, status=JobStatus.DONE,
        progress_total=1, progress_done=1,
    )
    upload.results.create(target_key="gpu-001:ib0", status=ResultStatus.DONE, verdict=Verdict.FAIL)
    api = api_for(technician)
    for action in ("cancel", "rerun-failed"):
        response = api.post(f"{RUNS}{upload.pk}/{action}/")
        assert response.status_code == 400, response.content
        assert "holds uploaded results" in response.json()["non_field_errors"][0]
    assert CheckRun.objects.count() == 1


@pytest.mark.parametrize("kind", ["soak", "port_state"])
def test_kinds_that_are_not_runs_of_targets_cannot_be_started(post_start, technician, nodes, kind):
    response = post_start(technician, kind=kind)
    assert response.status_code == 400 and "kind" in response.json()
    assert not CheckRun.objects.exists()
