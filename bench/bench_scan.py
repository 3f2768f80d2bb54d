"""Throughput and latency of the scan endpoint (POST /api/scans/) on PostgreSQL behind gunicorn, driven by
50 concurrent clients, on the 1,024-server project of examples/fabric-1024.yaml (24,576 cables).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_scan.py \
        [--workers N] [--clients 50] [--rate 200] [--seconds 30] [--keep] [--reuse]

Like bench_plan_apply.py, it creates a scratch database `bringup_bench_scan` on that server (dropped first
if a previous run left it), migrates it, applies the spec through the planner's apply (plan_apply), makes
one technician per client (each with an API token), and drops the database at the end (--keep leaves it;
--reuse starts from a database a --keep run left). Then it starts gunicorn on 127.0.0.1 (a free port),
with DEBUG off and persistent database connections, and sends it scans from one asyncio process over
keep-alive HTTP/1.1 connections (raw asyncio streams: no client library needed). Every request goes to
127.0.0.1 only, and every loop is bounded in count and time.

The mix is what a technician's day sends: about one lookup for every three cable-end confirmations, each
client walking its own cables end by end (A at the server, then each B at the leaves), every scan with its
own idempotency key, as the floor page sends them; one scan in fifty is a replay of the previous one.

Two phases, after a warm-up:
- paced: each client scans at its own steady pace (rate / clients a second, with jitter), together the
  offered rate (200 scans/s by default) for --seconds: the goal is p99 under 100 ms at 50 clients and at
  least 200 scans/s;
- saturated: each client sends its next scan as soon as the last is answered, for a third of --seconds:
  the most the server gives. By Little's law its latency is clients / throughput (50 clients at 400 /s
  wait 125 ms each), so its percentiles say how much headroom the paced phase had, not a goal.

Before the server starts it also prints the queries one scan of each kind costs (in-process, the same
code path as the endpoint); after the paced phase, the CPU a scan cost the gunicorn workers and the
PostgreSQL backends (their /proc entries: the figure that decides the rate a machine can take, whatever else
runs on it; at 200 scans/s on two cores the two together must stay well under 10 ms).

The server runs as production does: prepared statements (settings: psycopg prepares a statement it sees
again, so the database plans each once per connection; DATABASE_PREPARED=0 in the environment measures
without), a broker (Redis database 15, or BENCH_CELERY_BROKER_URL) to which accepted scans hand the recompute
of the project's stage gates (the project has its stages, as every project has), and one Celery worker on
the same machine that runs them (one every GATES_RECOMPUTE_DELAY_S at most, however many scans ask; warmed
by its first before the phases, as a site's long-running worker is), or none with --no-worker (the endpoint
alone); the queue is emptied at the end. `--db-options` adds psycopg options to the server's DATABASE_URL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_plan_apply import _admin, _with_database, catalogue_for_fabric_3  # noqa: E402
from harness import process_cpu_s, process_stat, stat_cpu_s  # noqa: E402

BENCH_DB = "bringup_bench_scan"
CODE = "BENCH-SCAN"
REPLAY_EVERY = 50
LOOKUP_SHARE = 0.25
WARM_UP_SCANS = 300
REQUEST_TIMEOUT_S = 10
# Where the server queues the gates' recomputes that accepted scans ask for, as in production (with no broker
# the task would run inside the scan's request), and one Celery worker runs them: its own Redis database,
# emptied at the end.
BROKER_URL = os.environ.get("BENCH_CELERY_BROKER_URL", "redis://127.0.0.1:6379/15")


# --- the project ----------------------------------------------------------------------------------------


def _setup_django(url: str) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ["CELERY_BROKER_URL"] = BROKER_URL  # queued, as the server does, not run in the scan
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
    import django

    django.setup()


def build(spec_path: Path, clients: int) -> None:
    """Migrate, apply the spec to project CODE, and make one technician (with a token) per client."""
    from django.core.management import call_command

    from cabling.planner import load_spec, plan
    from cabling.services import plan_apply
    from projects.models import Project

    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    catalogue_for_fabric_3()
    project = Project.objects.create(code=CODE, name="Bench scans", customer_name="Bench")
    plan_apply(project=project, planned=plan(load_spec(spec_path), check=False))
    stages_ready(project)
    print(f"built {CODE} from {spec_path.name} in {time.perf_counter() - started:.0f} s")
    technicians(project, clients)


# The resolver (cabling.search) matches codes case-insensitively (UPPER(x) = UPPER(code)): without an index
# on UPPER(x), each scan reads all 24,576 cables (10 ms). These are the indexes asked of the models (the
# same names); until their migration exists, the bench makes them, and says so.
RESOLVER_INDEXES = {
    "cable_label_upper": 'ON "cabling_cable" ("project_id", (UPPER("label")))',
    "device_name_upper": 'ON "inventory_device" ("project_id", (UPPER("name")))',
    "device_serial_upper": 'ON "inventory_device" ("project_id", (UPPER("serial")))',
    "device_asset_tag_upper": 'ON "inventory_device" ("project_id", (UPPER("asset_tag")))',
    "port_name_upper": 'ON "inventory_port" ("device_id", (UPPER("name")))',
    "optic_serial_upper": 'ON "inventory_optic" ("project_id", (UPPER("serial")))',
}


def database_ready() -> None:
    """Migrated (a --reuse database may predate the latest migrations), the resolver's expression indexes
    (in the migrations since cabling 0007 and inventory 0008; made here only for a database from before
    them), and fresh planner statistics: a site's autovacuum gathers them soon after a bulk load; the bench
    does not wait for it."""
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0)
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE indexname = ANY(%s)", [list(RESOLVER_INDEXES)])
        present = {row[0] for row in cursor.fetchall()}
        missing = [name for name in RESOLVER_INDEXES if name not in present]
        for name in missing:
            cursor.execute(f'CREATE INDEX "{name}" {RESOLVER_INDEXES[name]}')
        if missing:
            print(f"made the resolver's indexes this database lacked: {', '.join(missing)}")
        cursor.execute("ANALYZE")


def stages_ready(project) -> None:
    """The project's stages, as every real project has them (a --reuse database from before may lack them):
    each accepted scan then asks for a recompute of their gates, as on a site."""
    from delivery.models import Stage
    from delivery.stages.services import stages_create_from_template

    if not Stage.objects.filter(project=project).exists():
        stages_create_from_template(project=project)


def broker_empty() -> None:
    """Drop the recomputes the bench's scans queued (no worker took them)."""
    import redis

    redis.Redis.from_url(BROKER_URL).flushdb()


def technicians(project, clients: int) -> list[str]:
    """Token keys of the project's bench technicians bench-tech-00.. (made when missing)."""
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from projects.choices import Role
    from projects.models import Membership

    keys = []
    for n in range(clients):
        user, _ = get_user_model().objects.get_or_create(username=f"bench-tech-{n:02d}")
        Membership.objects.get_or_create(user=user, project=project, defaults={"role": Role.TECHNICIAN})
        keys.append(Token.objects.get_or_create(user=user)[0].key)
    return keys


@dataclass
class Work:
    """What one client scans, in order: (action, code, port_code) of its cables' ends, with lookups mixed in."""

    token: str
    scans: list[dict] = field(default_factory=list)


def workload(project, keys: list[str], seed: int = 1024) -> list[Work]:
    """Each client its own cables (so clients never confirm each other's ends), end by end, each end with
    the port it is planned in; lookups of serials, labels and end codes of the project between them."""
    from cabling.codes import cable_end_code
    from cabling.models import CableEnd
    from inventory.models import Device

    rng = random.Random(seed)
    ends = (
        CableEnd.objects.filter(cable__project=project, cable__verified_at__isnull=True, confirmed_at__isnull=True)
        .order_by("cable__label", "side", "position")
        .values_list("cable_id", "cable__label", "side", "position", "port__device__name", "port__name")
    )
    by_cable: dict[int, list] = {}
    for row in ends:
        by_cable.setdefault(row[0], []).append(row)
    cables = list(by_cable.values())
    rng.shuffle(cables)
    names = list(Device.objects.filter(project=project).values_list("name", flat=True)[:2000])
    works = [Work(token=key) for key in keys]
    for index, cable_ends in enumerate(cables):
        work = works[index % len(works)]
        b_ends = sum(1 for row in cable_ends if row[2] == "B")
        for _, label, side, position, device, port in cable_ends:
            if rng.random() < LOOKUP_SHARE / (1 - LOOKUP_SHARE):
                code = rng.choice([rng.choice(names), label, cable_end_code(label, side, position, b_ends=b_ends)])
                work.scans.append({"action": "lookup", "code": code})
            work.scans.append({"action": "cable_end", "code": cable_end_code(label, side, position, b_ends=b_ends),
                               "port_code": f"{device}:{port}"})
    return works


def queries_per_scan(project, keys: list[str]) -> dict[str, int]:
    """Queries of one scan of each kind through the endpoint's own code (the test client, in-process): a
    lookup, then both ends of a cable nobody scanned yet (the first end, then the one that verifies it)."""
    from django.db import connection
    from django.db.models import Count
    from django.test.utils import CaptureQueriesContext
    from rest_framework.test import APIClient

    from cabling.choices import CableStatus
    from cabling.codes import cable_end_code
    from cabling.models import CableEnd

    cable_id = (CableEnd.objects.filter(cable__project=project, cable__status=CableStatus.PLANNED, side="B")
                .values("cable_id").annotate(legs=Count("id")).filter(legs=1).order_by("-cable_id")
                .values_list("cable_id", flat=True).first())
    ends = list(CableEnd.objects.filter(cable_id=cable_id).select_related("cable", "port__device")
                .order_by("side"))
    api = APIClient(HTTP_HOST="127.0.0.1")
    api.credentials(HTTP_AUTHORIZATION=f"Token {keys[-1]}")
    scans = {"lookup": {"action": "lookup", "code": ends[0].cable.label}}
    for name, end in zip(("cable_end, first end", "cable_end, last end (verifies)"), ends, strict=True):
        scans[name] = {"action": "cable_end", "port_code": f"{end.port.device.name}:{end.port.name}",
                       "code": cable_end_code(end.cable.label, end.side, end.position, b_ends=1)}
    counts = {}
    for name, body in scans.items():
        with CaptureQueriesContext(connection) as captured:
            answer = api.post("/api/scans/", {**body, "project": CODE, "idempotency_key": uuid.uuid4().hex},
                              format="json")
        assert answer.status_code == 201 and answer.json()["result"] in ("found", "accepted"), answer.content[:300]
        counts[name] = len(captured.captured_queries)
    return counts


# --- the server -------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_gunicorn(url: str, port: int, workers: int, worker_class: str) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_DEBUG": "0", "DJANGO_SECRET_KEY": "bench-only-secret",
           "DATABASE_CONN_MAX_AGE": "600", "DJANGO_ALLOWED_HOSTS": "127.0.0.1", "CELERY_BROKER_URL": BROKER_URL}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    if not gunicorn.exists():
        sys.exit(f"{gunicorn} is missing: pip install gunicorn (the production web server, see docs)")
    command = [str(gunicorn), "bringup.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", str(workers),
               "--worker-class", worker_class, "--keep-alive", "30", "--backlog", "256", "--log-level", "warning",
               "--preload"]  # Django imported once, before the workers fork: no slow first request each
    if worker_class == "gthread":
        command += ["--threads", "1"]  # keep-alive connections, one request at a time per process
    server = subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return server
        except OSError:
            if server.poll() is not None:
                sys.exit(f"gunicorn exited with {server.returncode}")
            time.sleep(0.2)
    server.kill()
    sys.exit("gunicorn did not start within 60 s")


def start_worker(url: str) -> subprocess.Popen:
    """One Celery worker (one process) on the bench's broker and database, as production runs one beside the
    web: it runs the gates' recomputes the accepted scans ask for (one every GATES_RECOMPUTE_DELAY_S at most,
    however many scans), on the same two cores."""
    env = {**os.environ, "DATABASE_URL": url, "CELERY_BROKER_URL": BROKER_URL, "DJANGO_DEBUG": "0",
           "DJANGO_SECRET_KEY": "bench-only-secret", "DATABASE_CONN_MAX_AGE": "600"}
    celery = Path(sys.executable).with_name("celery")
    command = [str(celery), "--quiet", "-A", "bringup", "worker", "--pool", "solo", "--loglevel", "warning"]
    return subprocess.Popen(command, cwd=ROOT, env=env, start_new_session=True)


def worker_warmed(project, timeout_s: float = 60) -> None:
    """Wait (bounded) for the worker's first recompute of the gates, which the warm-up's scans asked for: a
    worker's first task loads what every later one reuses (0.6-0.8 s at 1,024 servers, against 0.3 s warm), and
    a site's worker has long been running when technicians scan."""
    from delivery.models import GateRecompute

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not GateRecompute.objects.filter(project=project, pending=True).exists():
            print("worker: its first recompute of the gates is done")
            return
        time.sleep(0.5)
    print(f"worker: no recompute within {timeout_s:g} s (is it running?)")


def workers_cpu_s(master: int) -> float:
    """CPU seconds (user + system) the gunicorn master's worker processes have used so far (Linux /proc):
    what the scans cost the web tier, whatever else the machine runs."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        fields = process_stat(entry.name) if entry.name.isdigit() else None  # None: gone meanwhile
        if fields is not None and int(fields[1]) == master:  # ppid
            total += stat_cpu_s(fields)
    return total


def database_cpu_s(url: str) -> float | None:
    """CPU seconds the PostgreSQL backends serving the bench database have used so far (their /proc entries:
    the server must run on this machine; None when it cannot be read). With persistent connections the
    workers keep their backends, so the difference over a phase is what its scans cost the database."""
    import psycopg

    try:
        with psycopg.connect(url, autocommit=True) as conn:
            pids = [row[0] for row in conn.execute(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")]
        total = 0.0
        for pid in pids:
            total += process_cpu_s(pid) or 0.0  # None: ended meanwhile, or another machine's
        return total
    except psycopg.Error:
        return None


def stop(server: subprocess.Popen) -> None:
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


# --- the clients --------------------------------------------------------------------------------------------


class Connection:
    """One keep-alive HTTP/1.1 connection to the bench server, reopened when the server closes it."""

    def __init__(self, port: int, token: str):
        self.port, self.token = port, token
        self.reader = self.writer = None

    async def post(self, path: str, body: dict) -> tuple[int, dict]:
        payload = json.dumps(body).encode()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Token {self.token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\nConnection: keep-alive\r\n\r\n"
        ).encode()
        for attempt in range(2):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            try:
                self.writer.write(head + payload)
                await self.writer.drain()
                return await self._answer()
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")

    async def _answer(self) -> tuple[int, dict]:
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionResetError("closed by the server")
        status = int(status_line.split()[1])
        length, keep = 0, True
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            name, value = name.strip().lower(), value.strip().lower()
            if name == "content-length":
                length = int(value)
            elif name == "connection" and value == "close":
                keep = False
        body = await self.reader.readexactly(length) if length else b""
        if not keep:
            self.close()
        return status, json.loads(body) if body else {}

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Phase:
    name: str
    latencies: list[float] = field(default_factory=list)
    results: dict[str, int] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def note(self, status: int | str, body: dict, latency: float) -> None:
        self.latencies.append(latency)
        if status in (200, 201):
            key = "replayed" if body.get("replayed") else f"{body.get('action')} {body.get('result')}"
            self.results[key] = self.results.get(key, 0) + 1
        else:
            self.errors[str(status)] = self.errors.get(str(status), 0) + 1

    def report(self) -> None:
        done = len(self.latencies)
        if not done:
            print(f"{self.name}: no scans")
            return
        ms = sorted(1000 * x for x in self.latencies)

        def pct(p: float) -> float:
            return ms[min(done - 1, int(p * done))]

        print(f"{self.name}: {done} scans in {self.seconds:.1f} s = {done / self.seconds:.0f} scans/s; latency ms "
              f"p50 {pct(0.50):.1f}  p95 {pct(0.95):.1f}  p99 {pct(0.99):.1f}  max {ms[-1]:.1f}  "
              f"mean {statistics.fmean(ms):.1f}")
        print(f"  answers: {dict(sorted(self.results.items()))}" + (f"  errors: {self.errors}" if self.errors else ""))


async def client(port: int, work: Work, phase: Phase, *, stop_at: float, count: int | None, pace_s: float | None,
                 rng: random.Random) -> None:
    connection = Connection(port, work.token)
    sent = 0
    last: dict | None = None
    next_at = time.monotonic() + (rng.uniform(0, pace_s) if pace_s else 0)
    try:
        while work.scans and time.monotonic() < stop_at and (count is None or sent < count):
            if pace_s:
                await asyncio.sleep(max(0.0, min(next_at, stop_at) - time.monotonic()))
                if time.monotonic() >= stop_at:
                    break  # its next scan falls after the phase: waiting for it would stretch the phase's seconds
                next_at += rng.expovariate(1 / pace_s)  # scans arrive at random, at the client's rate
            if last is not None and rng.randrange(REPLAY_EVERY) == 0:
                body = last  # the same scan sent again (an offline replay): recorded once
            else:
                body = {**work.scans.pop(0), "project": CODE, "idempotency_key": uuid.uuid4().hex, "source": "page"}
            started = time.perf_counter()
            try:
                status, answer = await asyncio.wait_for(connection.post("/api/scans/", body), REQUEST_TIMEOUT_S)
            except (TimeoutError, ConnectionError, asyncio.IncompleteReadError) as exc:
                connection.close()
                status, answer = type(exc).__name__, {}  # counted as an error, its time as its latency
            phase.note(status, answer, time.perf_counter() - started)
            last, sent = body, sent + 1
    finally:
        connection.close()


async def run_phase(port: int, works: list[Work], name: str, *, seconds: float, count: int | None = None,
                    rate: float | None = None) -> Phase:
    phase = Phase(name)
    pace = len(works) / rate if rate else None
    rng = random.Random(name)
    started = time.perf_counter()
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(client(port, work, phase, stop_at=stop_at, count=count, pace_s=pace,
                                  rng=random.Random(rng.random())) for work in works))
    phase.seconds = time.perf_counter() - started
    return phase


# --- main ----------------------------------------------------------------------------------------------------


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", nargs="?", default=str(ROOT / "examples" / "fabric-1024.yaml"))
    parser.add_argument("--workers", type=int, default=3, help="gunicorn worker processes")
    parser.add_argument("--worker-class", default="sync", choices=["sync", "gthread"],
                        help="sync: a connection per request; gthread: keep-alive connections")
    parser.add_argument("--db-options", default="",
                        help="query string added to the server's DATABASE_URL, e.g. "
                        "server_side_binding=true&prepare_threshold=2 (prepared statements)")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--rate", type=float, default=200, help="scans per second offered in the paced phase")
    parser.add_argument("--seconds", type=float, default=30, help="length of the paced phase")
    parser.add_argument("--no-worker", action="store_true",
                        help="no Celery worker: the endpoint alone (the gates' recomputes stay queued)")
    parser.add_argument("--keep", action="store_true", help="leave the scratch database for --reuse")
    parser.add_argument("--reuse", action="store_true", help="start from the database a --keep run left")
    args = parser.parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # figures as they come, also into a file

    url = os.environ.get("DATABASE_URL", "")
    if urlsplit(url).scheme not in ("postgres", "postgresql"):
        sys.exit("DATABASE_URL must point at PostgreSQL, e.g. postgres://postgres@127.0.0.1:5432/bringup")
    bench_url = _with_database(url, BENCH_DB)
    if not args.reuse:
        _admin(url, f'DROP DATABASE IF EXISTS "{BENCH_DB}"')
        _admin(url, f'CREATE DATABASE "{BENCH_DB}"')
    _setup_django(bench_url)
    server = worker = None
    try:
        from projects.models import Project

        if not args.reuse:
            build(Path(args.spec), args.clients)
        project = Project.objects.get(code=CODE)
        database_ready()
        stages_ready(project)
        keys = technicians(project, args.clients)
        print(f"queries per scan (the endpoint in-process, token auth included): {queries_per_scan(project, keys)}")
        from delivery.models import GateRecompute

        # Those scans asked for a recompute no worker ran yet: clear it, so the phases' scans ask as a site's do.
        broker_empty()
        GateRecompute.objects.filter(project=project).update(pending=False)
        works = workload(project, keys)
        from django.db import connections

        connections.close_all()
        port = free_port()
        server_url = f"{bench_url}?{args.db_options}" if args.db_options else bench_url
        server = start_gunicorn(server_url, port, args.workers, args.worker_class)
        worker = None if args.no_worker else start_worker(bench_url)
        print(f"gunicorn: {args.workers} {args.worker_class} workers on 127.0.0.1:{port}"
              f"{' (' + args.db_options + ')' if args.db_options else ''}; {args.clients} clients; "
              f"{sum(len(w.scans) for w in works)} scans queued; load average before: {os.getloadavg()[0]:.1f}")
        warm = asyncio.run(run_phase(port, works, "warm-up", seconds=60, count=max(1, WARM_UP_SCANS // len(works))))
        warm.report()
        if worker is not None:
            worker_warmed(project)
        cpu_before, db_before = workers_cpu_s(server.pid), database_cpu_s(bench_url)
        client_before, worker_before = time.process_time(), (process_cpu_s(worker.pid) or 0.0) if worker else 0.0
        computed_before = GateRecompute.objects.filter(project=project).values_list("computed_at", flat=True).first()
        paced = asyncio.run(run_phase(port, works, f"paced at {args.rate:.0f}/s", seconds=args.seconds,
                                      rate=args.rate))
        paced.report()
        if paced.latencies:
            client_ms = 1000 * (time.process_time() - client_before) / len(paced.latencies)
            per_scan = 1000 * (workers_cpu_s(server.pid) - cpu_before) / len(paced.latencies)
            db_after = database_cpu_s(bench_url)
            db = (f", PostgreSQL backends' {1000 * (db_after - db_before) / len(paced.latencies):.1f} ms"
                  if db_before is not None and db_after is not None else "")
            print(f"  CPU a scan: gunicorn workers' {per_scan:.1f} ms{db}, this load generator's {client_ms:.1f} ms "
                  f"(same machine; load average now "
                  f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
            computed = GateRecompute.objects.filter(project=project).values_list("computed_at", flat=True).first()
            if worker is None:
                print("  no Celery worker (--no-worker): the gates' recomputes stay queued")
            elif computed:
                again = "yes" if computed != computed_before else "no"
                used = (process_cpu_s(worker.pid) or 0.0) - worker_before
                print(f"  gates recomputed by the Celery worker meanwhile: {again}, last at {computed:%H:%M:%S}, "
                      f"{used:.1f} s of its CPU (its PostgreSQL work is in the backends' figure)")
        saturated = asyncio.run(run_phase(port, works, "saturated", seconds=args.seconds / 3))
        saturated.report()
        if not all(work.scans for work in works):
            print("  some clients ran out of cables to scan (a database used up by --reuse runs): the figures are "
                  "not a measurement; run without --reuse")
        # The paced phase's rate is the offered one, within the noise of random arrivals (4,000 scans in 20 s
        # vary by about 60): answered at 97 % of it, nothing was left waiting.
        ok = paced.latencies and not paced.errors
        p99 = sorted(paced.latencies)[int(0.99 * len(paced.latencies))] * 1000 if ok else float("inf")
        rate = len(paced.latencies) / paced.seconds if ok else 0
        at_most = len(saturated.latencies) / saturated.seconds if saturated.seconds else 0
        print(f"goal p99 < 100 ms at {args.clients} clients and >= 200 scans/s: p99 {p99:.1f} ms at {rate:.0f} "
              f"scans/s, {at_most:.0f} scans/s at most: "
              + ("met" if p99 < 100 and rate >= 0.97 * max(args.rate, 200) and at_most >= 200 else "NOT met"))
    finally:
        if worker is not None:
            stop(worker)
        if server is not None:
            stop(server)
            broker_empty()
        from django.db import connections

        connections.close_all()
        if not args.keep:
            _admin(url, f'DROP DATABASE IF EXISTS "{BENCH_DB}"')
            print(f"{BENCH_DB}: dropped")


if __name__ == "__main__":
    main(sys.argv[1:])
