"""Time, queries, peak memory and size of a check run's page at 72 and 1,024 servers (issue 11: "check-run
detail, link health: at most 500 ms, under 300 KB"), and of a bandwidth-matrix run's page and its image.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_check_run_detail.py \
        [--sizes 72,1024] [--repeat N] [--no-matrix]

On the kept reference projects of bench/harness.py: a finished link-health run with a result for every
planned link's GPU-node port (576 at 72 servers, 8,192 at 1,024), made in bulk directly in the
database with the metrics the real mlxlink parser makes of a real output (bench_report.metric_templates),
most ports without errors (1.5e-254), some warning, a few failing; and a finished bandwidth-matrix run with
every pair of the project's GPU nodes (2,556 pairs at 72, 523,776 at 1,024), synthetic figures. Each run's
figures are stored as the engine stores them when a run closes (services.check_run_summary_store, timed:
the cost a run's close now carries); the matrix page is also measured with them cleared (counted live, as
every page did before they were stored), and the plan of its first page's query is printed (EXPLAIN
ANALYZE: the index checkresult_worst_pairs_idx, not a sort of every pair). The pages
are fetched through Django's test client as the project's manager (not staff: the membership joins are in
every query): the run page as it opens, filtered by a BER bucket on a later page, and the matrix run's page
and its PNG. What the bench made is removed at the end (also after an error), so the kept project is as
it was. Times on a shared 2-core machine are upper bounds.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import arguments, bench_project, client_for, measure, report  # noqa: E402

GOAL_MS = 500
GOAL_BYTES = 300_000
BATCH = 5000


def link_health_run(project):
    """A finished link-health run with one result per planned link, at its GPU node's end, in bulk."""
    from bench_report import metric_templates
    from django.utils import timezone

    from cabling.models import Cable, CableEnd
    from core.choices import JobStatus
    from delivery.dashboard.selectors import planned_links_of
    from inventory.choices import HardwareKind
    from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
    from validation.models import CheckResult, CheckRun

    template = metric_templates()["link"]
    now = timezone.now()
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SIMULATED,
                                  status=JobStatus.DONE, created_at=now, started_at=now, finished_at=now,
                                  log="\n".join(f"target {n} done" for n in range(2000)))
    links = planned_links_of(Cable.objects.filter(project=project, removed_from_plan=False), project_ids=[project.pk])
    ends = (CableEnd.objects.filter(cable__in=links, port__device__hardware_model__kind=HardwareKind.GPU_SERVER)
            .order_by("cable_id", "position").values_list("cable_id", "port_id", "port__device_id",
                                                          "port__device__name", "port__name"))
    rows, seen = [], set()
    for n, (cable_id, port_id, device_id, device, port) in enumerate(ends):
        if cable_id in seen:
            continue
        seen.add(cable_id)
        ber, verdict = (3.2e-9, Verdict.FAIL) if n % 997 == 0 else (2e-13, Verdict.WARN) if n % 211 == 0 \
            else (1.5e-254, Verdict.PASS)
        metrics = dict(template, counters=dict(template.get("counters") or {}, effective_ber=ber,
                                               raw_ber=(1 + n % 9) * 1e-12))
        rows.append(CheckResult(run=run, target_key=f"{device}:{port}", status=ResultStatus.DONE, device_id=device_id,
                                port_id=port_id, cable_id=cable_id, host=device, finished_at=now, verdict=verdict,
                                metrics=metrics, raw_output="mlxlink output\n" * 40,
                                reasons=[{"level": verdict, "text": f"Effective BER {ber}"}] if verdict != "pass"
                                else []))
    CheckResult.objects.bulk_create(rows, batch_size=BATCH)
    CheckRun.objects.filter(pk=run.pk).update(progress_total=len(rows), progress_done=len(rows))
    run.refresh_from_db()
    return run


def matrix_run(project):
    """A finished bandwidth-matrix run: every pair of the project's GPU nodes, a few slow and failing."""
    from django.utils import timezone

    from core.choices import JobStatus
    from inventory.choices import HardwareKind
    from inventory.models import Device
    from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
    from validation.models import CheckResult, CheckRun

    now = timezone.now()
    run = CheckRun.objects.create(project=project, kind=CheckKind.BANDWIDTH_MATRIX, runner=RunnerKind.SIMULATED,
                                  status=JobStatus.DONE, created_at=now, started_at=now, finished_at=now)
    nodes = list(Device.objects.filter(project=project, hardware_model__kind=HardwareKind.GPU_SERVER)
                 .order_by("name").values_list("pk", "name"))
    rows, total = [], 0
    for i, (a, a_name) in enumerate(nodes):
        for j in range(i + 1, len(nodes)):
            b, b_name = nodes[j]
            n = total
            slow = i == 17 or j == 17
            failing = n % 50_021 == 7
            figure = 12.0 if failing else 180.0 if slow else 385.0 + (i * 7 + j * 13) % 11
            verdict = Verdict.FAIL if failing else Verdict.WARN if slow else Verdict.PASS
            rows.append(CheckResult(run=run, target_key=f"{a_name}~{b_name}", status=ResultStatus.DONE, device_id=a,
                                    peer_device_id=b, host=a_name, finished_at=now, verdict=verdict,
                                    metrics={"min_gbps": figure, "mean_gbps": figure + 3.0, "use_cuda": True,
                                             "rails": [{"rail": r, "bw_avg_gbps": figure + r} for r in range(8)]}))
            total += 1
            if len(rows) >= BATCH:
                CheckResult.objects.bulk_create(rows, batch_size=BATCH)
                rows = []
    CheckResult.objects.bulk_create(rows, batch_size=BATCH)
    CheckRun.objects.filter(pk=run.pk).update(progress_total=total, progress_done=total)
    run.refresh_from_db()
    return run


def store_summary(run, servers: int) -> None:
    """The run's figures, as the engine stores them when it closes the run (timed)."""
    from validation import services

    started = time.perf_counter()
    services.check_run_summary_store(run=run)
    print(f"{servers} servers: {run.get_kind_display()} run's figures stored in "
          f"{(time.perf_counter() - started) * 1000:.0f} ms (once, at its close)")


def without_summary(run):
    """Clear the run's stored figures for the block (its pages count live), then put them back."""
    from contextlib import contextmanager

    from validation.models import CheckRun

    @contextmanager
    def cleared():
        CheckRun.objects.filter(pk=run.pk).update(summarised_at=None)
        try:
            yield
        finally:
            CheckRun.objects.filter(pk=run.pk).update(summarised_at=run.summarised_at)

    return cleared()


def explain_first_page(run, user) -> None:
    """EXPLAIN ANALYZE of the results' first page as the run page asks for it (worst first)."""
    from validation import selectors

    results = selectors.check_result_list(user=user, run=run)
    ordered = selectors.worst_pairs_first(results) if run.kind == "bw_matrix" else selectors.worst_first(results)
    plan = ordered[:50].explain(analyze=True)
    lines = plan.splitlines()
    print("  EXPLAIN ANALYZE of the first page of results:")
    for line in [*lines[:12], *(["  ..."] if len(lines) > 14 else []), *lines[-2:]]:
        print(f"    {line}")


def analyze() -> None:
    """The statistics autovacuum would gather after a bulk load."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE validation_checkresult")
        cursor.execute("ANALYZE validation_checkrun")


def remove(runs) -> None:
    """The bench's runs and their results, straight in SQL (nothing refers to these results: no soak sample)."""
    from django.db import connection

    ids = [run.pk for run in runs if run is not None]
    if not ids:
        return
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM validation_checkresult WHERE run_id = ANY(%s)", [ids])
        cursor.execute("DELETE FROM validation_checkrun WHERE id = ANY(%s)", [ids])


def fetch(client, url: str, sizes: list[int]):
    def step():
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        sizes.append(len(response.content))
        return response

    return step


def measure_page(row: str, servers: int, client, url: str, *, repeat: int, goal: bool = True) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    sizes: list[int] = []
    figures = measure(fetch(client, url, sizes), repeat=repeat)
    # harness.measure reads its captured queries after one more request, whose request_started signal
    # empties the connection's query log (reset_queries): it prints 0. Counted here instead.
    with CaptureQueriesContext(connection) as captured:
        fetch(client, url, sizes)()
        figures.queries = len(captured.captured_queries)
    figures.extra = f"{sizes[-1] / 1000:8.1f} KB" + (f" (goal < {GOAL_BYTES // 1000} KB)" if goal else "")
    report(row, servers, figures, goal_ms=GOAL_MS if goal else None)


def main() -> None:
    args = arguments(__doc__.splitlines()[0], extra=lambda p: p.add_argument(
        "--no-matrix", action="store_true", help="skip the bandwidth-matrix run (its 523,776 pairs take minutes)"))
    for servers in args.sizes:
        with bench_project(servers) as bench:
            from django.conf import settings
            from django.urls import reverse

            # harness.client_for's test client calls itself "testserver", which the settings do not allow.
            settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]

            made = []
            try:
                started = time.perf_counter()
                link = link_health_run(bench.project)
                made.append(link)
                analyze()
                print(f"{servers} servers: link-health run of {link.progress_total} results made in "
                      f"{time.perf_counter() - started:.1f} s")
                store_summary(link, servers)
                client = client_for(bench.manager)
                page = reverse("validation:run-detail", args=[bench.project.code, link.pk])
                measure_page("check-run detail, link health", servers, client, page, repeat=args.repeat)
                measure_page("  filtered by a BER bucket, page 3", servers, client, page + "?ber=below&page=3",
                             repeat=args.repeat)
                measure_page("  failures only", servers, client, page + "?verdict=fail", repeat=args.repeat)
                if args.no_matrix:
                    continue
                started = time.perf_counter()
                matrix = matrix_run(bench.project)
                made.append(matrix)
                analyze()
                print(f"{servers} servers: bandwidth-matrix run of {matrix.progress_total} pairs made in "
                      f"{time.perf_counter() - started:.1f} s")
                store_summary(matrix, servers)
                page = reverse("validation:run-detail", args=[bench.project.code, matrix.pk])
                image = reverse("validation:run-matrix-image", args=[bench.project.code, matrix.pk])
                measure_page("check-run detail, bandwidth matrix", servers, client, page, repeat=args.repeat)
                explain_first_page(matrix, bench.manager)
                with without_summary(matrix):
                    measure_page("  without stored figures (counted live, as before)", servers, client, page,
                                 repeat=max(1, args.repeat // 2), goal=False)
                measure_page("  its heat map (PNG)", servers, client, image, repeat=max(1, args.repeat // 2),
                             goal=False)
            finally:
                remove(made)


if __name__ == "__main__":
    main()
