"""`make run` on a fresh clone, to the first page: what a newcomer waits for (issue 11: at most 90 s, with
progress printed).

    .venv/bin/python bench/bench_make_run.py [--worktree] [--reuse-venv] [--keep]

Clones the current HEAD into a temporary folder (`--worktree`: copies the working tree's files instead, git's
tracked and untracked-but-not-ignored ones, to measure changes not committed yet), then runs `make run` there
on a free port with the embedded defaults (SQLite under var/, no broker: nothing in the environment names a
database or a broker) and asks for the first page (`/`, following nothing: a redirect to the login page is the
page) until it answers. Each line make and seed_demo print is stamped as it arrives, so the output shows
where the time goes: pip install (when the clone has no virtualenv), migrate, the catalogue, each of
seed_demo's steps ("[n/6] ..."), the server's start. The server is stopped and the folder removed at the end
(`--keep` keeps the folder).

`--reuse-venv` points the clone's make at this checkout's .venv instead of installing one (VENV=...; the
clone's pyproject.toml gets the original's modification time so that make does not reinstall into it):
pip install is then left out, as it is on any second `make run`. Without it, the install is timed and
reported apart: the goal counts it, but how long pip takes depends on the network and its cache, not on us.

Not part of the test run; `make bench` runs it with the other benches. On this shared 2-core machine the
times are upper bounds: the load average while measuring is printed.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GOAL_S = 90.0
PAGE_TIMEOUT_S = 900.0
# Lines that start a step: make's echo of a recipe command, seed_demo's "[n/N] ..." headlines, the server.
STEP_LINE = re.compile(r"(-m venv|pip install|manage\.py (migrate|load_catalogue|seed_demo|runserver))|"
                       r"^\[\d+/\d+\] |^Bringup on http")
INSTALL_LINE = re.compile(r"-m venv|pip install")  # the virtualenv and pip: timed apart
# What the environment must not carry into the clone's make: the embedded defaults are what is measured.
CLEARED_ENV = ("DATABASE_URL", "CELERY_BROKER_URL", "DJANGO_SETTINGS_MODULE", "MEDIA_ROOT", "VIRTUAL_ENV")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def checkout(target: Path, *, worktree: bool) -> None:
    """A clone of HEAD, or a copy of the working tree's files (tracked, and untracked but not ignored)."""
    if not worktree:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
        return
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            check=True, capture_output=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def reuse_venv(target: Path) -> list[str]:
    """make arguments that use this checkout's virtualenv; the clone's pyproject.toml dated as ours, so the
    stamp make compares it with stays newer and nothing is reinstalled into it."""
    stat = (ROOT / "pyproject.toml").stat()
    os.utime(target / "pyproject.toml", (stat.st_atime, stat.st_mtime))
    return [f"VENV={ROOT / '.venv'}"]


def first_page(port: int, started: float, stop: threading.Event, answered: list[float]) -> None:
    """Ask for / until it answers (any status below 500; a redirect is not followed)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    while not stop.is_set():
        try:
            with opener.open(f"http://127.0.0.1:{port}/", timeout=5) as response:
                status = response.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        except OSError:
            status = None
        if status is not None and status < 500:
            answered.append(time.perf_counter() - started)
            stop.set()
            return
        stop.wait(0.25)


def run_make(folder: Path, extra: list[str], port: int) -> tuple[list[tuple[float, str]], float | None, int]:
    """`make run` in `folder`: the stamped lines it printed, the seconds to the first page (None when it
    never answered) and make's exit code (None while the server runs: it is stopped here)."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    env["PYTHONUNBUFFERED"] = "1"
    started = time.perf_counter()
    process = subprocess.Popen(["make", "run", f"PORT={port}", *extra], cwd=folder, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    stop, answered = threading.Event(), []
    poller = threading.Thread(target=first_page, args=(port, started, stop, answered), daemon=True)
    poller.start()
    lines: list[tuple[float, str]] = []

    def read() -> None:
        for line in process.stdout:
            stamp = time.perf_counter() - started
            lines.append((stamp, line.rstrip()))
            print(f"  {stamp:6.1f} s | {line.rstrip()}", flush=True)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while not stop.wait(0.5):
        if process.poll() is not None or time.perf_counter() - started > PAGE_TIMEOUT_S:
            stop.set()
    try:
        os.killpg(process.pid, signal.SIGTERM)  # the session this bench started: make and its server
    except ProcessLookupError:
        pass
    code = process.wait(timeout=30)
    reader.join(timeout=5)
    return lines, (answered[0] if answered else None), code


def steps_of(lines: list[tuple[float, str]], end: float) -> list[tuple[str, float]]:
    """(step, seconds) from one step line to the next (the last to `end`)."""
    marks = [(stamp, text) for stamp, text in lines if STEP_LINE.search(text)]
    steps = []
    for index, (stamp, text) in enumerate(marks):
        until = marks[index + 1][0] if index + 1 < len(marks) else end
        steps.append((text.strip()[:90], until - stamp))
    first = marks[0][0] if marks else end
    return [("(make starting, before the first step)", first), *steps]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worktree", action="store_true", help="copy the working tree instead of cloning HEAD")
    parser.add_argument("--reuse-venv", action="store_true", help="use this checkout's .venv (no pip install)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="bench-make-run-"))
    try:
        started = time.perf_counter()
        checkout(folder, worktree=args.worktree)
        print(f"{'copied the working tree' if args.worktree else 'cloned HEAD'} into {folder} in "
              f"{time.perf_counter() - started:.1f} s (not counted)")
        extra = reuse_venv(folder) if args.reuse_venv else []
        port = free_port()
        lines, page_s, code = run_make(folder, extra, port)
        if page_s is None:
            print(f"make run never served the first page (make exit code {code}); see the lines above")
            return 1
        steps = steps_of(lines, page_s)
        install = sum(seconds for step, seconds in steps if INSTALL_LINE.search(step))
        print(f"\n  {'step':92} {'seconds':>8}")
        for step, seconds in steps:
            print(f"  {step:92} {seconds:8.1f}")
        ours = page_s - install
        print(f"make run to the first page: {page_s:.1f} s"
              + (f" (virtualenv and pip install {install:.1f} s of it; without them {ours:.1f} s)" if install else
                 " (no pip install: --reuse-venv)")
              + f"   goal <= {GOAL_S:.0f} s: " + ("met" if page_s <= GOAL_S else "MISSED"))
        print(f"  progress lines printed before the first page: {sum(1 for stamp, _ in lines if stamp <= page_s)}; "
              f"longest silence {max_silence(lines, page_s):.1f} s")
        print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPU(s): times are upper bounds")
        return 0
    finally:
        if args.keep:
            print(f"kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def max_silence(lines: list[tuple[float, str]], end: float) -> float:
    """The longest time between two printed lines before the first page: what a newcomer stares at."""
    stamps = [0.0, *(stamp for stamp, _ in lines if stamp <= end), end]
    return max(b - a for a, b in zip(stamps, stamps[1:], strict=False))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
