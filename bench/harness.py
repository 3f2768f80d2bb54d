"""What the benches of issue 11's table share: the reference project at 72 and at 1,024 servers, built
from the examples with the shipped catalogue, kept in a PostgreSQL database per size, and one way to
measure a step (median time, queries, peak memory) and print it beside its goal.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_<row>.py \
        [--sizes 72,1024] [--fresh] [--repeat N]

The projects: 72 servers is examples/fabric-72.yaml (XDR InfiniBand, one plane); 1,024 servers is
examples/fabric-1024.yaml (dual-plane 400G RoCE, 24,576 cables) with the catalogue's B300-8GPU-ETH servers
and SN5600 switches in place of the example's placeholder part numbers. Each size
lives in its own database (`bringup_bench_72`, `bringup_bench_1024`), built once and kept: the next bench
migrates it and reuses the project; `--fresh` drops and rebuilds it. A bench that changes data makes its
own project or rows and removes them, so that the next bench measures the same base (see `scratch_code`).
Building the 1,024 project takes about a minute. Benches are not part of the test run; `make bench` runs
them all.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bringup"
SIZES = (72, 1024)
SPECS = {72: ROOT / "examples" / "fabric-72.yaml", 1024: ROOT / "examples" / "fabric-1024.yaml"}
# The example names placeholder part numbers (its server model is the XDR build's, its switch is no catalogue
# part): the shipped catalogue's Ethernet B300 and Spectrum-4 SN5600 (64 x 800G, 2 x 400G breakout) stand in.
MODEL_SWAPS = {
    1024: (("model: B300-8GPU\n", "model: B300-8GPU-ETH\n"), ("N9570-64OC", "SN5600"),
           ("    height_u: 4\n", "    height_u: 2\n")),
}
PROJECT_CODE = "BENCH"
MANAGER = "bench-manager"
PASSWORD = "bench-pw-1"


def arguments(description: str, *, extra: Callable[[argparse.ArgumentParser], None] | None = None):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="server counts to measure, comma-separated (72, 1024)")
    parser.add_argument("--fresh", action="store_true", help="drop and rebuild the kept project databases")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions of each measurement")
    if extra:
        extra(parser)
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",") if size]
    unknown = set(sizes) - set(SIZES)
    if unknown:
        parser.error(f"--sizes: {sorted(unknown)} unknown (known: 72, 1024)")
    args.sizes = sizes
    return args


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _admin(url: str, statement: str, params: tuple = ()) -> object:
    import psycopg

    with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as conn:  # the maintenance database
        cursor = conn.execute(statement, params)
        return cursor.fetchone() if statement.startswith("SELECT") else None


def database_name(servers: int) -> str:
    return f"bringup_bench_{servers}"


_SERVER_URL = ""


def _server_url() -> str:
    global _SERVER_URL
    if not _SERVER_URL:
        _SERVER_URL = os.environ.get("DATABASE_URL") or DEFAULT_URL
        if urlsplit(_SERVER_URL).scheme not in ("postgres", "postgresql"):
            sys.exit("DATABASE_URL must point at PostgreSQL, e.g. " + DEFAULT_URL)
    return _SERVER_URL


def _setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
    import django

    django.setup()


@dataclass
class BenchProject:
    servers: int
    project: object
    manager: object


@contextmanager
def bench_project(servers: int, *, fresh: bool = False) -> Iterator[BenchProject]:
    """The reference project of `servers` servers in its kept database, with a project manager (not staff)
    as a member; built first when the database has none. Django is set up on that database while inside;
    switching to another size closes the connections first."""
    url = _server_url()
    name = database_name(servers)
    if fresh:
        _admin(url, f'DROP DATABASE IF EXISTS "{name}"')
    if _admin(url, "SELECT 1 FROM pg_database WHERE datname = %s", (name,)) is None:
        _admin(url, f'CREATE DATABASE "{name}"')
    from django.conf import settings

    if settings.configured:
        from django.db import connections

        connections.close_all()
        connections["default"].settings_dict["NAME"] = name
    os.environ["DATABASE_URL"] = _with_database(url, name)
    _setup_django()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    built = _kept_project(servers) or _build_project(servers)
    _vacuum()
    try:
        yield built
    finally:
        from django.db import connections

        connections.close_all()


def _vacuum() -> None:
    """VACUUM ANALYZE the kept database: the benches before this one deleted what they made, and where autovacuum
    is off (or has not come round yet) the dead rows slow every scan and the stale statistics mislead the
    planner (a kept database had 30 dead port rows for each live one)."""
    from django.db import connection

    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")
    print(f"  {connection.settings_dict['NAME']}: VACUUM ANALYZE in {time.perf_counter() - started:.1f} s")


def _kept_project(servers: int) -> BenchProject | None:
    from django.contrib.auth import get_user_model

    from projects.models import Project

    project = Project.objects.filter(code=PROJECT_CODE).first()
    manager = get_user_model().objects.filter(username=MANAGER).first()
    if project is None or manager is None or not project.cables.exists():
        return None
    return BenchProject(servers, project, manager)


def _build_project(servers: int) -> BenchProject:
    """Catalogue, project, the example's plan applied, a project manager (bench_project then VACUUM ANALYZEs)."""
    from django.core.management import call_command

    from cabling.planner import load_spec_text, plan
    from cabling.services import plan_apply
    from projects.choices import Role
    from projects.models import Project
    from projects.services import membership_set, user_ensure

    started = time.perf_counter()
    print(f"building the {servers}-server project in {database_name(servers)} (once; kept for the next benches)")
    Project.objects.filter(code=PROJECT_CODE).delete()
    call_command("load_catalogue", verbosity=0, stdout=open(os.devnull, "w"))
    text = SPECS[servers].read_text(encoding="utf-8")
    for placeholder, part_number in MODEL_SWAPS.get(servers, ()):
        text = text.replace(placeholder, part_number)
    project = Project.objects.create(code=PROJECT_CODE, name=f"Bench {servers} servers", customer_name="Bench")
    plan_apply(project=project, planned=plan(load_spec_text(text, source=SPECS[servers].name)))
    manager = user_ensure(username=MANAGER, password=PASSWORD)
    membership_set(project=project, user=manager, role=Role.MANAGER)
    print(f"  built in {time.perf_counter() - started:.1f} s")
    return BenchProject(servers, project, manager)


def scratch_code(name: str) -> str:
    """A project code for a bench's own project, deleted first if an interrupted run left it."""
    from projects.models import Project

    code = f"BENCH-{name.upper()}"
    Project.objects.filter(code=code).delete()
    return code


@dataclass
class Figures:
    median_ms: float
    p90_ms: float
    queries: int
    peak_mib: float
    extra: str = ""


def measure(step: Callable[[], object], *, repeat: int = 5, warm: bool = True, memory: bool = True) -> Figures:
    """Median and p90 of `repeat` timed calls (after one warm-up call), the queries of one more call, and the
    peak Python memory (tracemalloc) of a last call, which is not timed (tracing slows Python down).
    A step that changes data must undo it itself (or be built to be repeated)."""
    from django.db import connection

    if warm:
        step()
    times = []
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        step()
        times.append((time.perf_counter() - started) * 1000)
    # Counted by a wrapper round every execution: CaptureQueriesContext reads connection.queries, which
    # every request through the test client empties when it starts.
    statements: list[str] = []

    def counted(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(counted):
        step()
    peak = 0.0
    if memory:
        tracemalloc.start()
        step()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    times.sort()
    return Figures(
        median_ms=statistics.median(times),
        p90_ms=times[min(len(times) - 1, int(round(0.9 * (len(times) - 1))))],
        queries=len(statements),
        peak_mib=peak,
    )


def report(row: str, servers: int, figures: Figures, *, goal_ms: float | None = None, goal: str = "") -> None:
    """One line: the row of the table, the size, the figures, and the goal with OK or OVER (goals are for
    1,024 servers; at 72 the line shows the figures only)."""
    verdict = ""
    if goal_ms is not None and servers == 1024:
        verdict = "OK" if figures.median_ms <= goal_ms else "OVER THE GOAL"
        goal = goal or f"goal <= {goal_ms:g} ms"
    print(f"{row:38} {servers:5} servers  median {figures.median_ms:9.1f} ms  p90 {figures.p90_ms:9.1f} ms  "
          f"{figures.queries:5} queries  peak {figures.peak_mib:7.1f} MiB  {figures.extra}  {goal} {verdict}".rstrip())


def client_for(user):
    """A Django test client logged in as `user` (pages are fetched in process, through the middleware)."""
    from django.conf import settings
    from django.test import Client

    if "testserver" not in settings.ALLOWED_HOSTS:  # the test client's host name (the test runner adds it too)
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]
    client = Client()
    client.force_login(user)
    return client


def measure_page(row: str, servers: int, client, url: str, *, repeat: int, goal_ms: float | None,
                 extra: str = "") -> None:
    """GET `url` through `client` (which must answer 200) with `measure`, and print its line with the answer's
    size: what the page benches (fabric view, API lists, leaf page) share."""
    sizes: list[int] = []

    def step():
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.content[:200])
        sizes.append(len(response.content))

    figures = measure(step, repeat=repeat)
    figures.extra = f"{sizes[-1] / 1000:8.1f} KB" + (f"  {extra}" if extra else "")
    report(row, servers, figures, goal_ms=goal_ms)


def process_stat(pid: int | str) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name (which may hold spaces): fields[1] is the parent's
    pid, fields[11] and fields[12] the user and system CPU ticks; None when the process is gone or not ours to
    read (another machine's database server)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def stat_cpu_s(fields: list[str]) -> float:
    """CPU seconds (user + system) of a process_stat()."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds a process has used so far (Linux /proc; None when it cannot be read)."""
    fields = process_stat(pid)
    return stat_cpu_s(fields) if fields is not None else None
