"""A finished run's stored figures (issue 11: a 1,024-node matrix page under 500 ms): verdict counts, results
and a matrix's colour-scale range written on the run as it closes (services.progress.check_run_summary_store,
from the engine's finish and from cancel), equal to a recount after runs of several kinds; read by the run
header, the status endpoint, the pager and the matrix's scale instead of counting the results; cleared by a
result recorded after a cancel, so a page never shows stale figures; and computed for the runs that finished
before, by the migration's backfill. Members only, as every run page."""

from __future__ import annotations

import importlib
import re
from collections import Counter

import pytest
from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from core.choices import JobStatus
from tests.support import count_queries
from validation import criteria, services
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun

from .test_run_pages import bare_nodes, finished_run, link_run_of, listed, matrix_run_of

pytestmark = pytest.mark.django_db

VERDICT_FIELDS = {Verdict.PASS: "summary_passed", Verdict.WARN: "summary_warned", Verdict.FAIL: "summary_failed",
                  Verdict.ERROR: "summary_errored"}


def recount(run: CheckRun) -> dict:
    """The figures counted from the results in Python, by another road than the service's aggregate."""
    rows = list(run.results.values_list("verdict", "metrics", "device_id", "peer_device_id"))
    verdicts = Counter(verdict for verdict, *_ in rows)
    figures = {field: verdicts.get(verdict, 0) for verdict, field in VERDICT_FIELDS.items()}
    slowest = [metrics["min_gbps"] for _, metrics, a, b in rows
               if a and b and (metrics or {}).get("min_gbps") is not None]
    matrix = run.kind == CheckKind.BANDWIDTH_MATRIX and slowest
    return {**figures, "summary_results": len(rows), "summary_figure_lo": min(slowest) if matrix else None,
            "summary_figure_hi": max(slowest) if matrix else None}


def stored(run: CheckRun) -> dict:
    run.refresh_from_db()
    assert run.summarised_at is not None, "the run has no stored figures"
    return {field: getattr(run, field) for field in recount(run)}


def url(name, project, *args):
    return reverse(f"validation:{name}", args=[project.code, *args])


def header_counts(page: str) -> dict[str, int]:
    """The verdict counts the run header prints (templates/validation/_counts.html)."""
    return {field: int(n) for field, n in re.findall(r'data-progress-field="(\w+)" data-count="\w+">(\d+)<', page)}


def shown(figures: dict) -> dict:
    """The counts the header prints: errors only when there are some."""
    return {name: n for name, n in figures.items() if n or name != "errored"}


# -- the engine stores them as a run closes --------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, options",
    [
        (CheckKind.LINK_HEALTH, {}),  # the seed's faults: failing and warning ports
        (CheckKind.BANDWIDTH_MATRIX, {}),  # rounds of pairs, and the scale's range
        (CheckKind.NODE_INVENTORY, {"down_hosts": ["gpu-003"]}),  # a node that stays down: an error
    ],
)
def test_a_finished_run_stores_the_figures_a_recount_gives(start, gpu_nodes, settings, kind, options):
    settings.VALIDATION_MAX_RETRIES = 0
    run = start(kind, **options)
    assert run.status == JobStatus.DONE
    figures = stored(run)
    assert figures == recount(run)
    assert figures["summary_results"] == run.progress_total > 0
    if kind == CheckKind.BANDWIDTH_MATRIX:
        assert figures["summary_figure_lo"] is not None and figures["summary_figure_lo"] <= figures["summary_figure_hi"]
    if kind == CheckKind.NODE_INVENTORY:
        assert figures["summary_errored"] == 1
    if kind == CheckKind.LINK_HEALTH:
        assert figures["summary_failed"] + figures["summary_warned"] > 0  # the faults are counted, not all passes


def test_a_run_that_measured_nothing_fails_with_its_figures(start, gpu_nodes, settings):
    settings.VALIDATION_MAX_RETRIES = 0
    run = start(CheckKind.NODE_INVENTORY, down_hosts=[node.name for node in gpu_nodes])
    assert run.status == JobStatus.FAILED
    assert stored(run) == recount(run) and run.summary_errored == 4


def test_a_cancelled_run_stores_its_figures_and_a_late_result_clears_them(
    project, gpu_nodes, technician, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False):
        run = services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, requested_by=technician)
    first, *_ = services.check_run_advance(run_id=run.pk)
    running = services.check_target_claim(result_id=first)  # a worker has it when the run is cancelled
    services.check_run_cancel(run=run, user=technician)
    assert stored(run) == recount(run) == {**recount(run), "summary_results": 32}
    assert run.results.filter(status=ResultStatus.CANCELLED).count() == 31

    # The running target finishes after the cancel: it is kept and counted, and the stored figures go.
    failed = services.Measurement(verdict=criteria.error_verdict("the port went down"))
    assert services.check_target_record(result=running, measurement=failed) is not None
    run.refresh_from_db()
    assert run.summarised_at is None and run.progress_done == 32
    assert run.status_figures() == {"passed": 0, "warned": 0, "failed": 0, "errored": 1}


def test_a_rerun_stores_its_own_figures_and_leaves_its_parents(
    start, gpu_nodes, technician, django_capture_on_commit_callbacks
):
    run = start(CheckKind.LINK_HEALTH)
    before = stored(run)
    with django_capture_on_commit_callbacks(execute=True):
        child = services.check_run_rerun_failed(run=run, requested_by=technician)
    assert stored(child) == recount(child) and child.summary_results == before["summary_failed"] + before[
        "summary_errored"]
    assert stored(run) == before


# -- the pages read them --------------------------------------------------------------------------------------


def test_a_finished_runs_page_shows_its_stored_counts_and_a_running_runs_counts_live(
    client_for, manager, project, start, gpu_nodes
):
    run = start(CheckKind.LINK_HEALTH)
    live = run.status_figures()
    client = client_for(manager)
    assert header_counts(client.get(url("run-detail", project, run.pk)).content.decode()) == shown(live)
    # What the page shows is what is stored (made different here to tell them apart).
    CheckRun.objects.filter(pk=run.pk).update(summary_failed=77, summary_results=5000)
    page = client.get(url("run-detail", project, run.pk)).content.decode()
    assert header_counts(page)["failed"] == 77
    assert "failed (77)" in page
    assert "page 1 of 100" in page  # the pager's count is the stored one when nothing filters the list
    filtered = client.get(url("run-detail", project, run.pk), {"verdict": "pass"}).content.decode()
    assert "page 1 of 100" not in filtered and f"{live['passed']} " in filtered  # a filtered list counts its rows
    # The status endpoint polled by the progress bar reads them too.
    run.refresh_from_db()
    assert run.status_figures()["failed"] == 77
    # A running run has nothing stored: it is counted live.
    CheckRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, summarised_at=None)
    assert header_counts(client.get(url("run-detail", project, run.pk)).content.decode()) == shown(live)


def test_a_large_matrix_page_reads_no_result_to_count_or_scale_and_its_queries_do_not_grow(
    client_for, customer, project
):
    nodes = bare_nodes(project, 72)
    small = matrix_run_of(project, nodes[:52], slow=nodes[3])  # 1,326 pairs: the image, not an SVG
    large = matrix_run_of(project, nodes, slow=nodes[3], failing={(nodes[0].name, nodes[9].name)})  # 2,556
    client = client_for(customer)
    client.get(url("run-detail", project, small.pk))  # warm: the session, the content types
    few = count_queries(lambda: client.get(url("run-detail", project, small.pk)))
    with CaptureQueriesContext(connection) as captured:
        page = client.get(url("run-detail", project, large.pk)).content.decode()
    assert len(captured.captured_queries) == few
    sql = " ".join(query["sql"].upper() for query in captured.captured_queries)
    # No aggregate reads the results: the only counts are the run header's live ones, each behind the CASE
    # that takes the stored figure of a finished run instead (the database never runs them).
    assert sql.count("COUNT(") == sql.count('"SUMMARISED_AT" IS NOT NULL THEN') == 4
    assert "MIN(" not in sql and "MAX(" not in sql
    assert "run-matrix-image" not in page and url("run-matrix-image", project, large.pk) in page
    assert listed(page)[0] == f"{nodes[0].name}~{nodes[9].name}"  # the worst pair first, read from the index
    assert header_counts(page) == {"passed": 2556 - 71 - 1, "warned": 71, "failed": 1}


def test_the_worst_first_page_is_read_from_the_index_on_postgresql(project):
    """The index must hold the very expressions the page orders by (JSONNumber's guard included), or
    PostgreSQL sorts every pair: the plan of the first page names the index and sorts nothing."""
    if connection.vendor != "postgresql":
        pytest.skip("an expression index's use is PostgreSQL's plan")
    from validation import selectors

    run = matrix_run_of(project, bare_nodes(project, 12), failing={("gpu-0001", "gpu-0004")})
    page = selectors.worst_pairs_first(CheckResult.objects.filter(run=run))[:50]
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # a dozen rows: make the planner show its choice
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        # A sort of a dozen rows costs nothing: discourage it too, so the plan shows whether the index CAN give
        # the order (in CI, with other tests' rows in the table, the planner chose a sort).
        cursor.execute("SET LOCAL enable_sort = off")
        sql, params = page.query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "checkresult_worst_pairs_idx" in plan and "Sort" not in plan, plan


def test_the_matrix_scale_is_the_stored_range(project):
    nodes = bare_nodes(project, 5)
    run = matrix_run_of(project, nodes, slow=nodes[1], failing={(nodes[0].name, nodes[4].name)})
    run.refresh_from_db()
    from validation import selectors

    scale = selectors.matrix_scale(user=None, run=run)
    assert (scale.lo_gbps, scale.hi_gbps) == (12.0, run.summary_figure_hi) and run.summary_figure_hi > 380


def test_an_outsider_gets_404_for_a_run_with_stored_figures(client_for, outsider, project):
    nodes = bare_nodes(project, 3)
    run = matrix_run_of(project, nodes)
    assert run.summarised_at is not None
    client = client_for(outsider)
    assert client.get(url("run-detail", project, run.pk)).status_code == 404
    assert client.get(url("run-matrix-image", project, run.pk)).status_code == 404


def test_an_uploaded_runs_figures_are_stored_as_it_is_filed(project, technician, django_capture_on_commit_callbacks):
    """An upload makes its run done with every result at once: its figures are stored then, like a run's."""
    from validation.uploads.services import tool_upload_create, tool_upload_process

    from .conftest import fixture_text, make_gpu_nodes

    make_gpu_nodes(project, 2)
    with django_capture_on_commit_callbacks(execute=False):
        upload = tool_upload_create(project=project, user=technician, host="gpu-002",
                                    data=fixture_text("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt").encode())
    upload = tool_upload_process(upload_id=upload.pk)
    run = upload.run
    assert run.runner == RunnerKind.UPLOAD and run.status == JobStatus.DONE
    assert stored(run) == recount(run) and run.summary_results == 8


# -- the migration computes them for the runs that finished before ------------------------------------------------


def test_the_migration_backfills_the_finished_runs_and_leaves_the_others(project):
    migration = importlib.import_module("validation.migrations.0008_checkrun_summary")
    nodes = bare_nodes(project, 6)
    matrix = matrix_run_of(project, nodes, slow=nodes[2], failing={(nodes[0].name, nodes[5].name)})
    link = link_run_of(project, nodes[0], [1e-20] * 5 + [2e-13, 3e-9, None])
    cancelled = link_run_of(project, nodes[1], [1e-20, 3e-9])
    CheckRun.objects.filter(pk=cancelled.pk).update(status=JobStatus.CANCELLED)
    running = link_run_of(project, nodes[2], [1e-20])
    CheckRun.objects.filter(pk=running.pk).update(status=JobStatus.RUNNING)
    soak = finished_run(project, CheckKind.SOAK, 1)
    CheckResult.objects.create(run=soak, target_key="p", status=ResultStatus.DONE, verdict=Verdict.PASS)
    empty = finished_run(project, CheckKind.NCCL, 0)
    CheckRun.objects.update(summarised_at=None, summary_results=None, summary_passed=None, summary_figure_lo=None)

    migration.backfill_run_summaries(apps, None)

    for run in (matrix, link, cancelled, empty):
        assert stored(run) == recount(run), run.kind
    assert matrix.summary_figure_lo == 12.0 and link.summary_errored == 1 and empty.summary_results == 0
    for run in (running, soak):
        run.refresh_from_db()
        assert run.summarised_at is None and run.summary_results is None
    assert link.runner == RunnerKind.SIMULATED and timezone.now() >= link.summarised_at
