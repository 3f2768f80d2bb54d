"""The check engine (issue 11, "a check engine that scales"): a link-health run with the simulated runner
on the reference project at 72 and 1,024 servers, measured three ways:

- eager, in this process (no broker): targets/s, queries per target, peak Python memory;
- through Celery on Redis with two workers: one `celery worker --concurrency=2` process; results/s from
  the run's start to its last result, as a page polling the run sees it;
- through Celery with four workers in two processes (two `celery worker --concurrency=2`): the same run
  must finish faster than with two.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup \\
        .venv/bin/python bench/bench_check_engine.py [--sizes 72,1024] [--repeat 1] \\
        [--broker redis://127.0.0.1:6379/5] [--no-celery] [--chunk N]

A link-health run moves the project's cables and ports (a passing link is installed and up, the dirty fiber
faulty) and the stage gates recompute from it: so the runs happen in a copy of the kept database
(`CREATE DATABASE ... TEMPLATE bringup_bench_<size>`, or pg_dump | pg_restore while another bench holds it
open), dropped at the end, and the kept base project is left exactly as it was. Without Redis at --broker
the Celery measurements are skipped, saying so. The workers consume a queue named for this bench alone on the
broker's database.

Goal (1,024 servers): at least 500 results/s with two workers, and four workers in two processes faster
than two. Timing figures on a shared, loaded machine are upper bounds on the time (lower bounds on the rate).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import harness  # noqa: E402
from harness import bench_project  # noqa: E402

GOAL_RESULTS_PER_S = 500
DEFAULT_BROKER = "redis://127.0.0.1:6379/5"


def _arguments():
    def extra(parser):
        parser.add_argument("--broker", default=os.environ.get("BENCH_BROKER_URL", DEFAULT_BROKER),
                            help="Redis for the Celery measurements (its database is used for a queue of our own)")
        parser.add_argument("--no-celery", action="store_true", help="measure in process only")
        parser.add_argument("--chunk", type=int, default=0, help="VALIDATION_CHUNK_SIZE (default: the setting's)")

    args = harness.arguments(__doc__.splitlines()[0], extra=extra)
    if "--repeat" not in sys.argv:
        args.repeat = 1  # a 1,024-server run is thousands of targets: one timed run is the figure
    return args


# -- a scratch copy of the kept database ------------------------------------------------------------------------


def _copy_name(servers: int) -> str:
    return f"bringup_bench_engine_{servers}"


def _copy_database(servers: int) -> str:
    """Copy the kept database: as a template when no other session is on it (a file copy, seconds), else,
    after a minute of waiting for one, through pg_dump and pg_restore (minutes at 1,024 servers, but other
    benches may keep the kept database open that long)."""
    url = harness._server_url()
    source, copy = harness.database_name(servers), _copy_name(servers)
    harness._admin(url, f'DROP DATABASE IF EXISTS "{copy}"')
    for _ in range(12):
        try:
            harness._admin(url, f'CREATE DATABASE "{copy}" TEMPLATE "{source}"')
            return copy
        except Exception as exc:  # noqa: BLE001 (psycopg's ObjectInUse: another bench is reading it)
            if "being accessed" not in str(exc):
                raise
            time.sleep(5)
    print(f"  {source} is in use by another session: copying it with pg_dump (takes a while)")
    harness._admin(url, f'CREATE DATABASE "{copy}"')
    dump = subprocess.Popen(["pg_dump", "--format=custom", harness._with_database(url, source)],
                            stdout=subprocess.PIPE)
    restore = subprocess.run(["pg_restore", "--no-owner", "--dbname", harness._with_database(url, copy)],
                             stdin=dump.stdout, check=False)
    dump.stdout.close()
    if dump.wait() or restore.returncode:
        sys.exit(f"could not copy {source} with pg_dump | pg_restore")
    import psycopg

    with psycopg.connect(harness._with_database(url, copy), autocommit=True) as conn:
        conn.execute("ANALYZE")  # a restore brings no planner statistics; the kept database has them
    return copy


def _use_database(name: str) -> None:
    from django.db import connections

    connections.close_all()
    connections["default"].settings_dict["NAME"] = name
    os.environ["DATABASE_URL"] = harness._with_database(harness._server_url(), name)


def _drop_database(name: str) -> None:
    from django.db import connections

    connections.close_all()
    harness._admin(harness._server_url(), f'DROP DATABASE IF EXISTS "{name}"')


# -- the run ------------------------------------------------------------------------------------------------------


def _start_run(project):
    from validation import services
    from validation.choices import CheckKind

    return services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH, options={"seed": 0})


def _wait_done(run_id: int, *, seconds: float = 3600):
    from core.choices import FINISHED_JOB_STATUSES
    from validation.models import CheckRun

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run = CheckRun.objects.only("status", "progress_done", "progress_total", "finished_at").get(pk=run_id)
        if run.status in FINISHED_JOB_STATUSES:
            return run
        time.sleep(0.05)
    sys.exit(f"run #{run_id} did not finish within {seconds:g} s")


def _last_result_at(run_id: int):
    from django.db.models import Max

    from validation.models import CheckResult

    return CheckResult.objects.filter(run_id=run_id).aggregate(last=Max("finished_at"))["last"]


def _check_run(run) -> None:
    from core.choices import JobStatus
    from validation import services

    if run.status != JobStatus.DONE or run.progress_done != run.progress_total:
        sys.exit(f"run #{run.pk} ended {run.status} at {run.progress_done}/{run.progress_total}")
    if services.finished_count(run) != run.progress_done:
        sys.exit(f"run #{run.pk}: its counter says {run.progress_done}, a recount {services.finished_count(run)}")


def _eager(project, repeat: int) -> harness.Figures:
    """Targets/s in process: the run starts, the eager dispatch runs every chunk before the start returns."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from bringup.celery import app

    app.conf.task_always_eager = True
    try:
        times, total, queries = [], 0, 0
        for _ in range(max(1, repeat)):
            started = time.perf_counter()
            with CaptureQueriesContext(connection) as captured:
                run = _start_run(project)
            times.append((time.perf_counter() - started) * 1000)
            run.refresh_from_db()
            _check_run(run)
            total, queries = run.progress_total, len(captured.captured_queries)
        tracemalloc.start()
        _start_run(project)
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
    finally:
        app.conf.task_always_eager = False
    times.sort()
    median = times[len(times) // 2]
    return harness.Figures(
        median_ms=median, p90_ms=times[-1], queries=queries, peak_mib=peak,
        extra=f"{total} targets, {total / (median / 1000):7.1f} targets/s, {queries / total:.2f} queries/target",
    )


# -- Celery workers --------------------------------------------------------------------------------------------------


class Workers:
    """`celery worker` processes started by this bench, each in its own process group, stopped by their ids."""

    def __init__(self, *, broker: str, queue: str, chunk: int):
        self.broker, self.queue, self.chunk = broker, queue, chunk
        self.processes: list[subprocess.Popen] = []
        self.log = Path(tempfile.gettempdir()) / f"{queue}.log"  # the workers' stderr, kept if a run fails

    def start(self, processes: int, concurrency: int) -> None:
        env = {**os.environ, "CELERY_BROKER_URL": self.broker, "CELERY_TASK_DEFAULT_QUEUE": self.queue}
        if self.chunk:
            env["VALIDATION_CHUNK_SIZE"] = str(self.chunk)
        for n in range(processes):
            self.processes.append(subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "bringup", "worker", "-Q", self.queue,
                 "-n", f"bench-engine-{n}-{self.queue}@%h", f"--concurrency={concurrency}",
                 "--without-gossip", "--without-mingle", "-l", "warning"],
                cwd=ROOT, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
                stderr=open(self.log, "ab"),  # noqa: SIM115 (the worker writes it until it ends)
            ))
        self._wait_ready(processes)

    def _wait_ready(self, expected: int) -> None:
        from bringup.celery import app

        names = {f"bench-engine-{n}-{self.queue}" for n in range(expected)}
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            replies = app.control.ping(timeout=1.0) or []
            answered = {name.split("@")[0] for reply in replies for name in reply}
            if names <= answered:
                return
        sys.exit(f"the Celery workers did not answer within 120 s (their output: {self.log})")

    def peak_rss_mib(self) -> float:
        """The workers' peak resident memory (main processes and their pool children), summed."""
        total = 0
        for process in self.processes:
            pids = [process.pid] + _children(process.pid)
            for pid in pids:
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except OSError:
                    continue
                total += next((int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM")), 0)
        return total / 1024

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        self.processes = []


def _children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _through_celery(project, workers: Workers, *, processes: int, concurrency: int) -> harness.Figures:
    workers.start(processes, concurrency)
    try:
        run = _start_run(project)
        started = run.created_at
        run = _wait_done(run.pk)
        _check_run(run)
        seconds = (_last_result_at(run.pk) - started).total_seconds()
        closed = (run.finished_at - started).total_seconds()
        peak = workers.peak_rss_mib()
    finally:
        workers.stop()
    rate = run.progress_total / seconds
    return harness.Figures(
        median_ms=seconds * 1000, p90_ms=closed * 1000, queries=0, peak_mib=peak,
        extra=f"{run.progress_total} results, {rate:7.1f} results/s (workers' peak RSS)",
    )


def _broker_answers(broker: str) -> bool:
    """Whether the Redis for the Celery measurements is there; without it they are skipped, saying so."""
    from bringup.celery import app

    try:
        with app.connection_for_write(broker) as connection:
            connection.ensure_connection(max_retries=1)
        return True
    except Exception as exc:  # noqa: BLE001 (kombu raises the transport's own errors)
        print(f"  Celery measurements skipped: no broker at {broker} ({type(exc).__name__})")
        return False


def _delete_queue(broker: str, queue: str) -> None:
    from bringup.celery import app

    with app.connection_for_write(broker) as connection:
        channel = connection.default_channel
        channel.queue_delete(queue)
        channel.client.delete(f"_kombu.binding.{queue}", f"_kombu.binding_permanent.{queue}")


def main() -> None:
    args = _arguments()
    if not args.no_celery:
        os.environ["CELERY_BROKER_URL"] = args.broker  # this process sends to the workers' broker
    queue = f"bench-engine-{uuid.uuid4().hex[:8]}"
    os.environ["CELERY_TASK_DEFAULT_QUEUE"] = queue
    if args.chunk:
        os.environ["VALIDATION_CHUNK_SIZE"] = str(args.chunk)
    print("link-health run, simulated runner: eager in process, then through Celery on Redis "
          f"(goal at 1,024 servers: >= {GOAL_RESULTS_PER_S} results/s with 2 workers; 4 in 2 processes faster)")
    print("timings on this shared, loaded machine are upper bounds; for Celery, 'median' is the run's start to its "
          "last result, 'p90' to the run closed")
    for servers in args.sizes:
        with bench_project(servers, fresh=args.fresh) as built:
            code = built.project.code
        copy = _copy_database(servers)
        try:
            _use_database(copy)
            from projects.models import Project

            project = Project.objects.get(code=code)
            try:
                figures = _eager(project, args.repeat)
            except Exception as exc:  # noqa: BLE001 (a project the engine refuses: say so, measure the next)
                print(f"{'link health, eager':38} {servers:5} servers  refused: {exc}")
                continue
            harness.report("link health, eager", servers, figures)
            if args.no_celery or not _broker_answers(args.broker):
                continue
            workers = Workers(broker=args.broker, queue=queue, chunk=args.chunk)
            try:
                two = _through_celery(project, workers, processes=1, concurrency=2)
                rate_two = two.extra.split(", ")[1]
                verdict = ""
                if servers == 1024:
                    ok = float(rate_two.split()[0]) >= GOAL_RESULTS_PER_S
                    verdict = f"goal >= {GOAL_RESULTS_PER_S} results/s {'OK' if ok else 'OVER THE GOAL'}"
                harness.report("link health, Celery 2 workers", servers, two, goal=verdict)
                four = _through_celery(project, workers, processes=2, concurrency=2)
                faster = "faster than 2: OK" if four.median_ms < two.median_ms else "NOT faster than 2"
                harness.report("link health, Celery 4 workers/2 procs", servers, four, goal=faster)
            finally:
                workers.stop()
                _delete_queue(args.broker, queue)
        finally:
            _drop_database(copy)


if __name__ == "__main__":
    main()
