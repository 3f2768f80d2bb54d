"""The validation pages: check runs (list, start form, a run with progress, charts, log and filtered
results), a result and its raw output, a link's history and the acceptance profile. Members read,
managers and technicians start/cancel/re-run, managers edit the profile, customers get 403 on writes
and outsiders 404 everywhere; list pages cost the same number of queries with 5 or 50 rows."""

import json
import math
import re
from decimal import Decimal
from xml.etree import ElementTree

import pytest
from django.urls import reverse

from cabling.choices import CableType, Side
from cabling.models import Cable, CableEnd
from core.choices import JobStatus
from inventory.choices import Network
from inventory.models import Port
from inventory.services import device_update
from tests.factories import RackFactory
from tests.support import count_queries
from validation import criteria, services
from validation.charts import FAIL_COLOUR
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import AcceptanceProfile, CheckResult, CheckRun
from validation.runners import plan_faults

from .conftest import SEED, make_gpu_nodes

pytestmark = pytest.mark.django_db

SVG = "{http://www.w3.org/2000/svg}"


def url(name, project, *args):
    return reverse(f"validation:{name}", args=[project.code, *args])


def html(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def svgs(page: str) -> list[ElementTree.Element]:
    return [ElementTree.fromstring(m) for m in re.findall(r"<svg .*?</svg>", page, re.S)]


def marks(svg, css_class: str) -> list[ElementTree.Element]:
    return [e for e in svg.iter() if e.get("class") == css_class]


def result_rows(page: str) -> list[str]:
    return re.findall(r'<tr class="result [^"]*"[^>]*data-target="([^"]+)"', page)


# -- the runs list and the start form -------------------------------------------------------------------


def test_runs_list_shows_each_run_with_progress_counts_who_and_the_start_form(
    client_for, technician, project, link_run
):
    page = html(client_for(technician).get(url("run-list", project)))
    row = re.search(rf'<tr class="run" data-run="{link_run.pk}".*?</tr>', page, re.S).group(0)
    assert "Link health (mlxlink)" in row and "Done" in row
    assert f'value="{link_run.progress_total}" max="{link_run.progress_total}"' in row and ">100</span>%" in row
    assert 'data-count="pass">14<' in row and 'data-count="fail">2<' in row
    assert "the system" in row  # started by the service without a user
    start_form = re.search(r'<section class="card" id="start-run">.*?</section>', page, re.S).group(0)
    assert 'name="kind"' in start_form and 'value="link_health"' in start_form
    # Only kinds a run can execute are offered; soak windows and uploads are not started here.
    assert 'value="soak"' not in start_form


def job_status_url(run) -> str:
    return reverse("api-job-status", args=[run.job_type, run.pk])


def test_a_running_run_polls_its_status_endpoint_from_the_list(client_for, customer, project, start, nodes):
    run = start(CheckKind.LINK_HEALTH, execute=False)  # queued: its task has not run
    done = start(CheckKind.LINK_HEALTH)
    page = html(client_for(customer).get(url("run-list", project)))
    assert f'data-progress-url="{job_status_url(run)}" data-progress-interval="2000"' in page
    assert job_status_url(done) not in page  # a finished run has nothing to poll
    assert "js/progress.js" in page


def test_customer_sees_runs_but_no_start_form_and_cannot_start_one(client_for, customer, project, link_run):
    client = client_for(customer)
    page = html(client.get(url("run-list", project)))
    assert f'data-run="{link_run.pk}"' in page and 'id="start-run"' not in page
    response = client.post(url("run-list", project), {"kind": CheckKind.LINK_HEALTH, "runner": "simulated"})
    assert response.status_code == 403
    assert CheckRun.objects.count() == 1


def test_technician_starts_a_run_and_lands_on_its_finished_page(
    client_for, technician, project, nodes, django_capture_on_commit_callbacks
):
    client = client_for(technician)
    with django_capture_on_commit_callbacks(execute=True):  # eager: the run's tasks run on commit
        response = client.post(
            url("run-list", project), {"kind": CheckKind.LINK_HEALTH, "runner": "simulated", "seed": SEED}
        )
    run = CheckRun.objects.get()
    assert response.status_code == 302 and response.url == url("run-detail", project, run.pk)
    assert (run.requested_by, run.options, run.status) == (technician, {"seed": SEED}, JobStatus.DONE)
    page = html(client.get(response.url))
    assert f'value="{run.progress_total}" max="{run.progress_total}"' in page and ">100</span>%" in page
    failed = set(run.results.filter(verdict=Verdict.FAIL).values_list("target_key", flat=True))
    assert len(failed) == 2 and set(result_rows(page)[:2]) == failed  # the failures come first


@pytest.mark.parametrize(
    ("form", "field", "message"),
    [
        ({"kind": CheckKind.LINK_HEALTH, "runner": "local"}, "runner", "only NCCL"),
        ({"kind": CheckKind.LINK_HEALTH, "runner": "ssh", "seed": 3}, "seed", "simulated runner"),
        ({"kind": "tea", "runner": "simulated"}, "kind", "Select a valid choice"),
    ],
)
def test_start_form_errors_name_the_field_and_start_nothing(
    client_for, technician, project, nodes, form, field, message
):
    page = html(client_for(technician).post(url("run-list", project), form))
    error = re.search(rf'<ul class="errorlist" id="error-{field}">(.*?)</ul>', page, re.S)
    assert error and message in error.group(1)
    assert not CheckRun.objects.exists()


def test_starting_without_gpu_nodes_says_why(client_for, technician, project):
    page = html(client_for(technician).post(url("run-list", project), {"kind": "nccl", "runner": "simulated"}))
    assert "Nothing to check: the project has no GPU nodes" in page


# -- a run's page --------------------------------------------------------------------------------------


def test_run_page_shows_progress_log_and_each_failure_with_reasons_and_raw_output(
    client_for, customer, project, link_run
):
    page = html(client_for(customer).get(url("run-detail", project, link_run.pk)))
    faults = plan_faults(services.sim_cluster_for(project), SEED)
    dirty = f"{faults.dirty_fiber[0]}:ib{faults.dirty_fiber[1][-1]}"
    dirty_result = link_run.results.get(target_key=dirty)
    row = re.search(rf'<tr class="result verdict-row-fail"[^>]*data-target="{dirty}".*?</tr>', page, re.S).group(0)
    assert "effective BER" in row and "&gt; fail level 1e-12" in row
    assert url("result-raw", project, dirty_result.pk) in row
    assert url("link-history", project, "port", dirty_result.port_id) in row
    assert "finished: 14 pass, 0 warn, 2 fail, 0 error" in page  # the log
    assert "Re-run" not in page and "Cancel run" not in page  # customers do not get the buttons
    assert "js/progress.js" not in page  # finished: nothing to poll


def test_run_page_ber_chart_counts_ports_per_decade_and_its_table_the_same(
    client_for, manager, project, link_run
):
    """Ports per effective-BER decade, not a bar per port (issue 11; tests/validation/test_run_pages.py tests
    it at scale): the dirty fiber is the one port in a decade above the fail line, the others counted no
    errors and share the "< 1e-20" bar."""
    page = html(client_for(manager).get(url("run-detail", project, link_run.pk)))
    (chart,) = svgs(page)
    bars = marks(chart, "bar")
    assert sum(int(b.get("data-count")) for b in bars) == link_run.progress_total == 16
    faults = plan_faults(services.sim_cluster_for(project), SEED)
    dirty = link_run.results.get(target_key=f"{faults.dirty_fiber[0]}:ib{faults.dirty_fiber[1][-1]}")
    ber = dirty.metrics["counters"]["effective_ber"]
    decade = criteria.fmt_sci(10.0 ** math.floor(math.log10(ber)))
    (failing,) = [b for b in bars if b.get("data-bucket") == decade]
    assert failing.get("data-count") == "1" and ber > 1e-12
    section = re.search(r'<section class="card" id="chart-ber">.*?</section>', page, re.S).group(0)
    assert sum(int(n) for n in re.findall(r'<tr [^>]*data-count="(\d+)"', section)) == 16


def test_results_filters_by_verdict_device_plane_network_and_rack(
    client_for, technician, project, link_run, nodes
):
    client = client_for(technician)
    run_url = url("run-detail", project, link_run.pk)
    failed = result_rows(html(client.get(run_url, {"verdict": Verdict.FAIL})))
    assert len(failed) == 2 and all(
        link_run.results.get(target_key=t).verdict == Verdict.FAIL for t in failed
    )
    assert len(result_rows(html(client.get(run_url, {"device": nodes[1].name})))) == 8
    # Every rail's 4 lanes carry planes 0..3, so a plane matches every port (once, not four times).
    assert len(result_rows(html(client.get(run_url, {"plane": 2})))) == 16
    assert result_rows(html(client.get(run_url, {"network": "storage"}))) == []
    rack = RackFactory(project=project, name="R07")
    device_update(device=nodes[0], rack=rack, position_u=10)
    in_rack = result_rows(html(client.get(run_url, {"rack": "R07"})))
    assert len(in_rack) == 8 and all(t.startswith(nodes[0].name) for t in in_rack)
    bad = html(client.get(run_url, {"verdict": "maybe"}))
    assert "Some filters were ignored" in bad and "verdict" in bad


def test_results_table_is_paginated(client_for, technician, project, start):
    make_gpu_nodes(project, 7)  # 56 ports
    run = start(CheckKind.LINK_HEALTH)
    client = client_for(technician)
    first = html(client.get(url("run-detail", project, run.pk)))
    second = html(client.get(url("run-detail", project, run.pk), {"page": 2}))
    assert len(result_rows(first)) == 50 and len(result_rows(second)) == 6
    assert "page 1 of 2" in first and "56 results" in first


def test_the_job_status_endpoint_reports_the_run_row_and_its_verdict_counts(
    client_for, customer, project, start, nodes
):
    run = start(CheckKind.LINK_HEALTH, execute=False)
    client = client_for(customer)
    state = client.get(job_status_url(run)).json()
    assert {key: state[key] for key in ("id", "type", "status", "status_label", "done", "total", "finished")} == {
        "id": run.pk, "type": "validation.checkrun", "status": JobStatus.QUEUED, "status_label": "Queued",
        "done": 0, "total": 16, "finished": False,
    }
    assert (state["passed"], state["warned"], state["failed"], state["errored"]) == (0, 0, 0, 0)
    page = html(client.get(url("run-detail", project, run.pk)))
    assert f'data-progress-url="{job_status_url(run)}" data-progress-reload' in page
    finished = start(CheckKind.LINK_HEALTH)
    state = client.get(job_status_url(finished)).json()
    assert (state["status"], state["done"], state["finished"]) == (JobStatus.DONE, 16, True)
    assert (state["passed"], state["warned"], state["failed"], state["errored"]) == (14, 0, 2, 0)


def test_technician_cancels_a_queued_run(client_for, technician, project, start, nodes):
    run = start(CheckKind.LINK_HEALTH, execute=False)
    client = client_for(technician)
    assert "Cancel run" in html(client.get(url("run-detail", project, run.pk)))
    response = client.post(url("run-cancel", project, run.pk))
    assert response.status_code == 302 and response.url == url("run-detail", project, run.pk)
    run.refresh_from_db()
    assert run.status == JobStatus.CANCELLED and run.progress_done == run.progress_total == 16
    again = html(client.post(url("run-cancel", project, run.pk), follow=True))
    assert "already cancelled" in again


def test_rerun_failed_starts_a_child_run_of_the_failures_only(client_for, manager, project, link_run):
    client = client_for(manager)
    assert "Re-run the 2 failed target(s)" in html(client.get(url("run-detail", project, link_run.pk)))
    response = client.post(url("run-rerun-failed", project, link_run.pk))
    child = CheckRun.objects.exclude(pk=link_run.pk).get()
    assert response.url == url("run-detail", project, child.pk)
    assert child.parent == link_run and child.progress_total == 2
    failed = set(link_run.results.filter(verdict=Verdict.FAIL).values_list("target_key", flat=True))
    assert set(child.results.values_list("target_key", flat=True)) == failed
    page = html(client.get(response.url))
    assert "re-runs the failed targets of" in page and url("run-detail", project, link_run.pk) in page


def test_customer_gets_403_on_cancel_and_rerun(client_for, customer, project, link_run, start):
    queued = start(CheckKind.LINK_HEALTH, execute=False)
    client = client_for(customer)
    assert client.post(url("run-cancel", project, queued.pk)).status_code == 403
    assert client.post(url("run-rerun-failed", project, link_run.pk)).status_code == 403
    queued.refresh_from_db()
    assert queued.status == JobStatus.QUEUED and CheckRun.objects.count() == 2


# -- charts on a run's page, by kind --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "lines"),
    [
        # GPU memory is held to a share of the line rate, host memory to the profile's own figures.
        (CheckKind.GPU_RDMA, {"fail": 760.0, "warn": 776.0, "line": 800.0}),
        (CheckKind.CPU_BANDWIDTH, {"fail": 440.0, "warn": 445.0, "line": 800.0}),
    ],
)
def test_bandwidth_page_has_a_histogram_against_line_rate_and_its_table(
    client_for, manager, project, start, nodes, kind, lines
):
    run = start(kind)
    page = html(client_for(manager).get(url("run-detail", project, run.pk)))
    (chart,) = svgs(page)
    counts = {float(b.get("data-lo")): int(b.get("data-count")) for b in marks(chart, "bar")}
    assert sum(counts.values()) == run.progress_total == 8
    measured = run.results.values_list("metrics__bw_avg_gbps", flat=True)
    assert all(any(lo <= bw < lo + 20 for lo in counts) for bw in measured)
    assert {t.get("data-level"): float(t.get("data-value")) for t in marks(chart, "threshold")} == lines
    section = re.search(r'id="chart-histogram".*?</section>', page, re.S).group(0)
    table = dict(re.findall(r'<tr data-bin-lo="([\d.]+)" data-count="(\d+)">', section))
    assert {float(lo): int(n) for lo, n in table.items()} == {lo: n for lo, n in counts.items() if n}


def test_matrix_page_has_a_heatmap_with_the_slow_node_flagged(client_for, manager, project, start):
    make_gpu_nodes(project, 4)
    run = start(CheckKind.BANDWIDTH_MATRIX)
    slow = plan_faults(services.sim_cluster_for(project), SEED).slow_gpu_rdma_node
    page = html(client_for(manager).get(url("run-detail", project, run.pk)))
    (chart,) = svgs(page)
    cells = marks(chart, "cell")
    assert len(cells) == 6  # 4 nodes: every pair once
    flagged = {(c.get("data-row"), c.get("data-col")) for c in cells if c.get("data-flag") == "fail"}
    assert len(flagged) == 3 and all(slow in pair for pair in flagged)
    assert all(f"fill: {_rgb(FAIL_COLOUR)}" in c.get("style") for c in cells if c.get("data-flag") == "fail")
    assert "3 pair(s) flagged" in page
    assert page.count('data-level="fail"') == 3


def test_nccl_page_has_a_curve_per_result_with_the_profile_line(client_for, manager, project, start, nodes):
    run = start(CheckKind.NCCL)
    result = run.results.get()
    page = html(client_for(manager).get(url("run-detail", project, run.pk)))
    (chart,) = svgs(page)
    points = marks(chart, "point")
    assert len(points) == len(result.metrics["curve"])
    assert [int(p.get("data-size")) for p in points] == sorted(p["size_bytes"] for p in result.metrics["curve"])
    assert {t.get("data-level"): float(t.get("data-value")) for t in marks(chart, "threshold")} == {
        "fail": 780.0, "warn": 800.0,
    }
    assert page.count('<tr data-size="') == len(points)


# -- one result ------------------------------------------------------------------------------------------


def test_link_result_page_has_reasons_dom_per_lane_and_links(client_for, customer, project, link_run):
    faults = plan_faults(services.sim_cluster_for(project), SEED)
    hot = link_run.results.get(target_key=f"{faults.hot_optic[0]}:ib{faults.hot_optic[1][-1]}")
    page = html(client_for(customer).get(url("result-detail", project, hot.pk)))
    assert "Rx power lane 0" in page and "&lt; module low limit -10.4 dBm" in page
    (chart,) = svgs(page)
    rx = [p for p in marks(chart, "point") if p.get("data-series") == "Rx power"]
    assert [float(p.get("data-value")) for p in rx] == hot.metrics["module"]["rx_power_dbm"]
    assert {p.get("data-level") for p in rx} == {"fail"}
    assert page.count('<tr data-lane="') == 4
    assert url("result-raw", project, hot.pk) in page and url("link-history", project, "port", hot.port_id) in page


def test_raw_output_is_served_as_the_tool_printed_it(client_for, customer, project, link_run):
    result = link_run.results.first()
    response = client_for(customer).get(url("result-raw", project, result.pk))
    assert response.status_code == 200 and response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == result.raw_output and "Physical Counters and BER Info" in result.raw_output


# -- a link's history -------------------------------------------------------------------------------------


def test_port_history_lists_every_run_that_touched_the_port_newest_first(
    client_for, technician, project, start, nodes
):
    first = start(CheckKind.LINK_HEALTH)
    start(CheckKind.CPU_BANDWIDTH)
    second = start(CheckKind.LINK_HEALTH, seed=2)
    port = Port.objects.get(device=nodes[0], name="ib3")
    page = html(client_for(technician).get(url("link-history", project, "port", port.pk)))
    runs = [int(n) for n in re.findall(r'<td><a href="/p/[^/]+/checks/runs/(\d+)/">#', page)]
    assert runs[0] == second.pk and runs[-1] == first.pk and len(runs) == 3  # two link runs and the pair test
    ber, counters = svgs(page)
    assert len([p for p in marks(ber, "point") if p.get("data-series") == "effective BER"]) == 2
    assert {t.get("data-level") for t in marks(ber, "threshold")} == {"warn", "fail"}
    assert len(marks(counters, "point")) == 6  # three counters, two readings
    # A lane stands for its physical port.
    lane = port.lanes.first()
    assert html(client_for(technician).get(url("link-history", project, "port", lane.pk))).count("#") >= 3


def test_cable_history_covers_both_ends(client_for, technician, project, start, nodes):
    a = Port.objects.get(device=nodes[0], name="ib0")
    b = Port.objects.get(device=nodes[1], name="ib0")
    cable = Cable.objects.create(
        project=project, label="C-0001", network=Network.COMPUTE, cable_type=CableType.FIBER,
        length_m=Decimal("5.0"), speed_gbps=800,
    )
    CableEnd.objects.create(cable=cable, side=Side.A, port=a)
    CableEnd.objects.create(cable=cable, side=Side.B, port=b.lanes.get(lane=0))
    run = start(CheckKind.LINK_HEALTH)
    page = html(client_for(technician).get(url("link-history", project, "cable", cable.pk)))
    shown = set(result_rows(page))
    assert shown == {f"{nodes[0].name}:ib0", f"{nodes[1].name}:ib0"}
    assert run.results.filter(cable=cable).count() == 2


# -- the acceptance profile ---------------------------------------------------------------------------


def test_customer_reads_the_profile_without_a_form(client_for, customer, project):
    page = html(client_for(customer).get(url("profile", project)))
    assert '<tr data-setting="effective_ber_fail"><th>Effective BER: fail above</th><td>1e-12</td>' in page
    assert "<form method=\"post\">" not in page.split('id="profile-values"')[0].split("<main>")[1]
    assert not AcceptanceProfile.objects.exists()  # reading never creates the row


def test_manager_changes_a_threshold_and_the_history_says_who(client_for, manager, project):
    client = client_for(manager)
    form = {name: value for name, value in _profile_form_data().items()}
    form["nccl_busbw_fail_gbs"] = "700"
    response = client.post(url("profile", project), form)
    assert response.status_code == 302
    assert AcceptanceProfile.objects.get(project=project).nccl_busbw_fail_gbs == 700.0
    page = html(client.get(url("profile", project)))
    assert 'value="700.0"' in page and "mgr" in page.split('id="history"')[1]


def test_profile_refuses_a_warn_level_beyond_fail_naming_the_field(client_for, manager, project):
    form = _profile_form_data()
    form["effective_ber_warn"] = "1e-10"
    page = html(client_for(manager).post(url("profile", project), form))
    error = re.search(r'<ul class="errorlist" id="error-effective_ber_warn">(.*?)</ul>', page, re.S)
    assert error and "warn level must be at most the fail level" in error.group(1)
    assert not AcceptanceProfile.objects.exists()


def test_technician_cannot_change_the_profile(client_for, technician, project):
    client = client_for(technician)
    assert "<form method=\"post\">" not in html(client.get(url("profile", project))).split("<main>")[1]
    assert client.post(url("profile", project), _profile_form_data()).status_code == 403


def _profile_form_data() -> dict:
    profile = AcceptanceProfile()
    data = {name: str(getattr(profile, name)) for name in AcceptanceProfile.THRESHOLD_FIELDS}
    data["check_dom"] = "on"
    data["pinned_versions"] = json.dumps({})
    return data


# -- outsiders ---------------------------------------------------------------------------------------------


def test_outsider_gets_404_on_every_page_and_endpoint(client_for, outsider, project, link_run):
    result = link_run.results.exclude(cable__isnull=True).first() or link_run.results.first()
    client = client_for(outsider)
    gets = [
        url("run-list", project),
        url("run-detail", project, link_run.pk),
        job_status_url(link_run),
        url("result-detail", project, result.pk),
        url("result-raw", project, result.pk),
        url("link-history", project, "port", result.port_id),
        url("profile", project),
    ]
    for address in gets:
        assert client.get(address).status_code == 404, address
    posts = [
        url("run-list", project),
        url("run-cancel", project, link_run.pk),
        url("run-rerun-failed", project, link_run.pk),
        url("profile", project),
    ]
    for address in posts:
        assert client.post(address, {"kind": "link_health", "runner": "simulated"}).status_code == 404, address
    assert CheckRun.objects.count() == 1


def test_a_run_of_another_project_is_404_under_this_projects_address(
    client_for, manager, project, other_project, link_run
):
    from projects.choices import Role
    from tests.factories import MembershipFactory

    MembershipFactory(user=manager, project=other_project, role=Role.MANAGER)
    client = client_for(manager)
    assert client.get(url("run-detail", other_project, link_run.pk)).status_code == 404
    assert client.get(url("result-detail", other_project, link_run.results.first().pk)).status_code == 404


# -- query counts ----------------------------------------------------------------------------------------


def _clone_results(run: CheckRun, count: int) -> None:
    """`count` results like the run's own (same ports, metrics and verdicts), for a bigger table."""
    template = list(run.results.all())
    CheckResult.objects.bulk_create(
        CheckResult(
            run=run, target_key=f"clone-{i}", device_id=t.device_id, port_id=t.port_id, metrics=t.metrics,
            verdict=t.verdict, reasons=t.reasons, status=ResultStatus.DONE, raw_output=t.raw_output,
        )
        for i, t in zip(range(count), template * (count // len(template) + 1), strict=False)
    )
    services.check_run_summary_store(run=run)  # the finished run's stored figures, counting the clones


def test_run_page_query_count_is_the_same_for_5_and_50_results(
    client_for, manager, project, start, nodes, django_assert_num_queries
):
    small, big = start(CheckKind.LINK_HEALTH), start(CheckKind.LINK_HEALTH)
    small.results.exclude(pk__in=small.results.values_list("pk", flat=True)[:5]).delete()
    services.check_run_summary_store(run=small)
    _clone_results(big, 34)  # 16 + 34 = 50
    assert (small.results.count(), big.results.count()) == (5, 50)
    client = client_for(manager)
    few = count_queries(lambda: html(client.get(url("run-detail", project, small.pk))))
    with django_assert_num_queries(few):
        page = client.get(url("run-detail", project, big.pk))
    assert len(result_rows(page.content.decode())) == 50


def test_run_list_query_count_is_the_same_for_5_and_50_runs(
    client_for, technician, project, start, nodes, django_assert_num_queries
):
    run = start(CheckKind.LINK_HEALTH)
    for _ in range(4):
        CheckRun.objects.create(
            project=project, kind=run.kind, requested_by=technician, progress_total=3, progress_done=1
        )
    client = client_for(technician)
    few = count_queries(lambda: html(client.get(url("run-list", project))))
    for _ in range(45):
        CheckRun.objects.create(project=project, kind=CheckKind.NCCL, requested_by=technician, progress_total=1)
    with django_assert_num_queries(few):
        page = client.get(url("run-list", project))
    assert page.content.decode().count('<tr class="run"') == 50


def _rgb(hex_colour: str) -> str:
    """A colour the way reportlab writes it into SVG styles."""
    from reportlab.lib import colors

    c = colors.HexColor(hex_colour)
    return "rgb({:d}%,{:d}%,{:d}%)".format(*(int(v * 100) for v in (c.red, c.green, c.blue)))


def test_an_upload_run_offers_no_cancel_or_rerun_and_refuses_them_with_a_message(
    client_for, technician, project, nodes
):
    upload = CheckRun.objects.create(
        project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.UPLOAD, status=JobStatus.DONE,
        progress_total=1, progress_done=1,
    )
    upload.results.create(target_key=f"{nodes[0].name}:ib0", status=ResultStatus.DONE, verdict=Verdict.FAIL)
    client = client_for(technician)
    page = html(client.get(url("run-detail", project, upload.pk)))
    assert "Cancel run" not in page and "Re-run the" not in page
    for action in ("run-cancel", "run-rerun-failed"):
        refused = html(client.post(url(action, project, upload.pk), follow=True))
        assert f"Run #{upload.pk} holds uploaded results" in refused
    assert CheckRun.objects.count() == 1


def test_a_matrix_run_filtered_by_rack_name_lists_the_pairs_of_its_nodes(client_for, technician, project, start):
    nodes = make_gpu_nodes(project, 3)
    device_update(device=nodes[2], rack=RackFactory(project=project, name="R01"), position_u=10)
    run = start(CheckKind.BANDWIDTH_MATRIX)
    in_rack = result_rows(html(client_for(technician).get(url("run-detail", project, run.pk), {"rack": "R01"})))
    assert sorted(in_rack) == sorted(
        r.target_key for r in run.results.all() if nodes[2].name in r.target_key.split("~")
    ) and len(in_rack) == 2
