"""Time and query count of the project dashboard (/p/<code>/dashboard/) on reference fabric 3 (1,024
servers, 384 switches, 24,576 cables), on PostgreSQL. Goal: under 300 ms, at most 20 queries.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_dashboard.py \
        [--keep] [--reuse] [SPEC]

Like bench_plan_apply.py it creates a scratch database `bringup_bench_dashboard` on that server (dropped
first if a previous run left it), migrates it, applies the spec and drops it at the end. Not part of the
test run. Building the project takes minutes; to iterate on the page without rebuilding it, `--keep`
leaves the database behind and `--reuse` measures the one a kept run left (migrated first, so a new
index is there; built as usual when there is none), keeping it again.

The project is made mid-delivery: the default stages with their gates computed, three weeks of history
(about two thirds of the cables verified by scan, spread over 21 days, a few by the fabric's word; a
link-health result for most planned links, some failing), scans today by a few technicians, and check runs
in progress. The page is fetched through Django's test client as a project manager (not staff, so the
membership scoping joins are in every query): once to warm up, then timed REPEAT times, then once more
counting its queries.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

from bench_plan_apply import _admin, _with_database, catalogue_for_fabric_3, scratch_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DB = "bringup_bench_dashboard"
GOAL_MS = 300
MAX_QUERIES = 20
REPEAT = 15
HISTORY_DAYS = 21


def project_mid_delivery(spec_path: Path):
    from cabling.planner import load_spec, plan
    from cabling.services import plan_apply
    from projects.choices import Role
    from projects.models import Project
    from projects.services import membership_set, user_ensure

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


def analyze() -> None:
    """The statistics autovacuum would gather on a live database."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def seat_optics(project, cable_ids) -> int:
    """A transceiver in every cage the ends of `cable_ids` need one in (as the scan page seats them before
    a cable is verified), so the floor's optics count has real rows to find. Returns how many."""
    from django.db.models import Q
    from django.db.models.functions import Coalesce

    from cabling.choices import Side
    from cabling.models import CableEnd
    from inventory.choices import FormFactor, OpticStatus
    from inventory.models import Optic

    needs = (Q(side=Side.A) & ~Q(cable__optic_part_a="")) | (Q(side=Side.B) & ~Q(cable__optic_part_b=""))
    cages = (CableEnd.objects.filter(cable_id__in=cable_ids, optic_count__gt=0).filter(needs)
             .annotate(cage=Coalesce("port__parent_id", "port_id"))
             .values_list("cage", "side", "cable__optic_part_a", "cable__optic_part_b").distinct())
    seated = {cage: part_a if side == Side.A else part_b for cage, side, part_a, part_b in cages}
    Optic.objects.bulk_create(
        (Optic(project=project, vendor="Bench", part_number=part, serial=f"BENCH-{cage}", port_id=cage,
               form_factor=FormFactor.OSFP, speed_gbps=800, status=OpticStatus.INSTALLED)
         for cage, part in seated.items()), batch_size=5000)
    return len(seated)


def history(project, technicians) -> None:
    """Three weeks of verified cables and link-health results, today's scans and runs in progress."""
    from django.utils import timezone

    from cabling.choices import CableStatus, FabricState, ScanAction, ScanResult
    from cabling.models import Cable, ScanEvent
    from core.choices import JobStatus
    from delivery.dashboard.selectors import planned_links_of
    from delivery.stages.services import gates_recompute, stages_create_from_template
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
                                                     fabric_checked_at=at, fabric_verified_at=at)
        else:
            Cable.objects.filter(pk__in=chunk).update(status=CableStatus.VERIFIED, verified_at=at)
    optics = seat_optics(project, verified)
    # The gates before the link-health results: with them, validation's link checks gate may take minutes
    # on PostgreSQL (its examples query, a subquery per link); the page reads the stored outcome either way.
    # Statistics first: without them (autovacuum may be off) PostgreSQL plans the gates' queries for empty
    # tables and the link checks gate runs for many minutes.
    analyze()
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
    analyze()
    print(f"  history: {len(verified):,} of {len(ids):,} cables verified over {HISTORY_DAYS} days, {optics:,} "
          "optics seated in their cages, "
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
    median, p90 = statistics.median(times), statistics.quantiles(times, n=10, method="inclusive")[-1]
    print(f"dashboard of {project.code}: median {median:.0f} ms, p90 {p90:.0f} ms, best {min(times):.0f} ms, "
          f"worst {max(times):.0f} ms over {REPEAT} requests (goal < {GOAL_MS} ms); {queries} queries (at most "
          f"{MAX_QUERIES}); page {len(response.content) / 1024:.0f} KiB")
    for q in slowest:
        print(f"  {float(q['time']) * 1000:7.1f} ms  {q['sql'][:110]}")
    print("  " + ("OK" if median < GOAL_MS and queries <= MAX_QUERIES else "OVER THE GOAL"))


@contextmanager
def kept_database(name: str) -> Iterator[bool]:
    """The database a `--keep` run left, migrated, with Django set up on it; yields whether it exists (when
    it does not, the caller builds the project in it as a first run would). Never dropped."""
    import psycopg

    url = os.environ.get("DATABASE_URL", "")
    with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is not None
    if not exists:
        _admin(url, f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = _with_database(url, name)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    try:
        yield exists
    finally:
        from django.db import connections

        connections.close_all()
        print(f"{name}: kept (drop it with DROP DATABASE \"{name}\")")


def built_project(spec_path: Path):
    project, manager, technicians = project_mid_delivery(spec_path)
    history(project, technicians)
    return project, manager


def kept_project():
    """The project and manager a kept run built, or None when there is none. A build interrupted half-way
    (no check run in progress yet: the last thing `history` makes) is refused: run with --keep to rebuild."""
    from django.contrib.auth import get_user_model

    from core.choices import ACTIVE_JOB_STATUSES
    from projects.models import Project

    project = Project.objects.filter(code="BENCH-DASH").first()
    if project is None:
        return None
    manager = get_user_model().objects.filter(username="bench-manager").first()
    if manager is None or not project.check_runs.filter(status__in=ACTIVE_JOB_STATUSES).exists():
        sys.exit(f"{BENCH_DB} holds a project built half-way: run with --keep (without --reuse) to rebuild it")
    return project, manager


def main(argv: list[str]) -> None:
    flags = {arg for arg in argv if arg.startswith("--")}
    unknown = flags - {"--keep", "--reuse"}
    if unknown:
        sys.exit(f"unknown option(s): {', '.join(sorted(unknown))} (known: --keep, --reuse)")
    paths = [arg for arg in argv if not arg.startswith("--")]
    spec_path = Path(paths[0]) if paths else ROOT / "examples" / "fabric-1024.yaml"
    if "--reuse" in flags or "--keep" in flags:
        if "--keep" in flags and "--reuse" not in flags:
            url = os.environ.get("DATABASE_URL", "")
            _admin(url, f'DROP DATABASE IF EXISTS "{BENCH_DB}"')
        with kept_database(BENCH_DB):
            kept = kept_project() if "--reuse" in flags else None
            if kept is None:
                kept = built_project(spec_path)
            else:
                print(f"  reusing {kept[0].code} in {BENCH_DB}")
            measure(*kept)
        return
    with scratch_database(BENCH_DB):
        measure(*built_project(spec_path))


if __name__ == "__main__":
    main(sys.argv[1:])
