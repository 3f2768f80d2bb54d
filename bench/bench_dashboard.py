"""Time and query count of the project dashboard (/p/<code>/dashboard/) on reference fabric 3 (1,024
servers, 384 switches, 24,576 cables), on PostgreSQL. Goal: under 300 ms, at most 20 queries.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_dashboard.py [SPEC]

Like bench_plan_apply.py it creates a scratch database `bringup_bench_dashboard` on that server (dropped
first if a previous run left it), migrates it, applies the spec and drops it at the end. Not part of the
test run.

The project is made mid-delivery: the default stages with their gates computed, three weeks of history
(about two thirds of the cables verified by scan, spread over 21 days, a few by the fabric's word; a
link-health result for most planned links, some failing), scans today by a few technicians, and check runs
in progress. The page is fetched through Django's test client as a project manager (not staff, so the
membership scoping joins are in every query): once to warm up, then timed REPEAT times, then once more
counting its queries.
"""

from __future__ import annotations

import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

from bench_plan_apply import catalogue_for_fabric_3, scratch_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DB = "bringup_bench_dashboard"
GOAL_MS = 300
MAX_QUERIES = 20
REPEAT = 7
HISTORY_DAYS = 21


def project_mid_delivery(spec_path: Path):
    from cabling.planner import load_spec, plan
    from cabling.services import plan_apply
    from delivery.choices import Role
    from delivery.models import Project
    from delivery.services import membership_set, user_ensure

    catalogue_for_fabric_3()
    project = Project.objects.create(code="BENCH-DASH", name="Bench dashboard", customer_name="Bench")
    started = time.perf_counter()
    plan_apply(project=project, planned=plan(load_spec(spec_path)))
    print(f"  plan applied in {time.perf_counter() - started:.1f} s")
    manager = user_ensure(username="bench-manager", password="bench-pw-1")
    membership_set(project=project, user=manager, role=Role.MANAGER)
    technicians = [user_ensure(username=f"bench-tech-{n}", password="bench-pw-1") for n in range(4)]
    for tech in technicians:
        membership_set(project=project, user=tech, role=Role.TECHNICIAN)
    return project, manager, technicians


def history(project, technicians) -> None:
    """Three weeks of verified cables and link-health results, today's scans and runs in progress."""
    from django.db import connection
    from django.utils import timezone

    from cabling.choices import CableStatus, FabricState, ScanAction, ScanResult
    from cabling.models import Cable, ScanEvent
    from core.choices import JobStatus
    from delivery.roof.dashboard import planned_links_of
    from delivery.roof.services import gates_recompute, stages_create_from_template
    from validation.choices import CheckKind, ResultStatus, Verdict
    from validation.models import CheckResult, CheckRun

    now = timezone.now()
    ids = list(Cable.objects.filter(project=project).order_by("pk").values_list("pk", flat=True))
    verified = ids[: len(ids) * 2 // 3]
    for day in range(HISTORY_DAYS):
        chunk = verified[day::HISTORY_DAYS]
        at = now - timedelta(days=HISTORY_DAYS - day)
        if day % 7 == 6:  # a comparison that saw them ok: verified by the fabric's word only
            Cable.objects.filter(pk__in=chunk).update(status=CableStatus.VERIFIED, fabric_state=FabricState.OK,
                                                     fabric_checked_at=at)
        else:
            Cable.objects.filter(pk__in=chunk).update(status=CableStatus.VERIFIED, verified_at=at)
    # The gates before the link-health results: with them, validation's link checks gate may take minutes
    # on PostgreSQL (its examples query, a subquery per link); the page reads the stored outcome either way.
    stages_create_from_template(project=project)
    started = time.perf_counter()
    gates_recompute(project=project)
    print(f"  gates computed in {time.perf_counter() - started:.2f} s (not part of the page)")
    links = list(planned_links_of(Cable.objects.filter(project=project, removed_from_plan=False),
                                  project_ids=[project.pk])
                 .order_by("pk").values_list("pk", "label"))
    measured = links[: len(links) * 3 // 4]
    for day in range(0, HISTORY_DAYS, 3):
        at = now - timedelta(days=HISTORY_DAYS - day)
        run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.DONE,
                                      created_at=at, finished_at=at)
        CheckResult.objects.bulk_create(
            CheckResult(run=run, target_key=label, cable_id=pk, status=ResultStatus.DONE, finished_at=at,
                        verdict=Verdict.FAIL if (pk + day) % 23 == 0 else Verdict.PASS)
            for pk, label in measured[day::3]
        )
    ScanEvent.objects.bulk_create(
        ScanEvent(project=project, user=technicians[n % len(technicians)], action=ScanAction.CABLE_END,
                  raw_code=f"C{n:06}/A", result=ScanResult.ACCEPTED)
        for n in range(600)
    )
    for n in range(3):
        CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.RUNNING,
                                progress_total=8192, progress_done=1000 * n)
    with connection.cursor() as cursor:  # the statistics autovacuum would gather on a live database
        cursor.execute("ANALYZE")
    print(f"  history: {len(verified):,} of {len(ids):,} cables verified over {HISTORY_DAYS} days, "
          f"{CheckResult.objects.filter(run__project=project).count():,} link-health results on "
          f"{len(measured):,} of {len(links):,} planned links, 600 scans today")


def measure(project, manager) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, setup_test_environment
    from django.urls import reverse

    setup_test_environment()  # the test client's host and a locmem email backend
    client = Client()
    client.force_login(manager)
    url = reverse("delivery:dashboard", args=[project.code])
    response = client.get(url)
    assert response.status_code == 200, response.status_code
    times = []
    for _ in range(REPEAT):
        started = time.perf_counter()
        client.get(url)
        times.append((time.perf_counter() - started) * 1000)
    with CaptureQueriesContext(connection) as captured:
        client.get(url)
    queries = len(captured.captured_queries)
    slowest = sorted(captured.captured_queries, key=lambda q: -float(q["time"]))[:3]
    median = statistics.median(times)
    print(f"dashboard of {project.code}: median {median:.0f} ms, best {min(times):.0f} ms, worst "
          f"{max(times):.0f} ms over {REPEAT} requests (goal < {GOAL_MS} ms); {queries} queries (at most "
          f"{MAX_QUERIES}); page {len(response.content) / 1024:.0f} KiB")
    for q in slowest:
        print(f"  {float(q['time']) * 1000:7.1f} ms  {q['sql'][:110]}")
    print("  " + ("OK" if median < GOAL_MS and queries <= MAX_QUERIES else "OVER THE GOAL"))


def main(argv: list[str]) -> None:
    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "fabric-1024.yaml"
    with scratch_database(BENCH_DB):
        project, manager, technicians = project_mid_delivery(spec_path)
        history(project, technicians)
        measure(project, manager)


if __name__ == "__main__":
    main(sys.argv[1:])
