"""Time and peak memory of planning and applying reference fabric 3 (1,024 servers, 384 switches,
24,576 cables) to a project on PostgreSQL, step by step.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_plan_apply.py [SPEC]

DATABASE_URL must point at a PostgreSQL server: the bench creates a scratch database `bringup_bench` on
it (dropped first if a previous run left it), migrates it, and drops it at the end. Not part of the
test run.

Two applies into two fresh projects of the same database: the first timed without tracing, the second
under tracemalloc for the peak Python memory of each step: the most traced memory alive at any moment of
the step, the plan held for the whole run included (tracing slows Python down, so its times are not
reported). Steps: plan (build), checks, diff (reads the project), then the apply's own steps as
plan_apply reports them: racks + devices (with NICs and rack units), ports (with lanes and planes),
cables + ends; then applying the same spec again (nothing to change). maxrss is the process's peak
resident memory so far (getrusage), for scale.
"""

from __future__ import annotations

import os
import resource
import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

BENCH_DB = "bringup_bench"
STEP_NAMES = {"racks": "racks + devices", "devices": "racks + devices", "ports": "ports", "cables": "cables + ends"}


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


def _admin(url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as conn:  # the maintenance database
        conn.execute(statement)


def maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


class Steps:
    """Progress callback of plan_apply: notes when each step starts (its first report has done = 0) and,
    when tracing, the peak traced memory of the step just finished."""

    def __init__(self, tracing: bool):
        self.tracing = tracing
        self.order: list[str] = []
        self.started: dict[str, float] = {}
        self.peak: dict[str, float] = {}

    def begin(self, name: str) -> None:
        now = time.perf_counter()
        if self.order and self.tracing:
            self.peak[self.order[-1]] = max(self.peak.get(self.order[-1], 0.0), tracemalloc.get_traced_memory()[1])
            tracemalloc.reset_peak()
        if name not in self.started:
            self.order.append(name)
            self.started[name] = now

    def __call__(self, step: str, done: int, total: int) -> None:
        name = STEP_NAMES.get(step, step)
        if not self.order or self.order[-1] != name:
            self.begin(name)

    def durations(self, end: float) -> dict[str, float]:
        marks = [self.started[n] for n in self.order] + [end]
        return {name: marks[i + 1] - marks[i] for i, name in enumerate(self.order)}


def run(spec_path: Path, *, code: str, tracing: bool) -> dict[str, tuple[float, float]]:
    """{step: (seconds, peak MiB traced or 0)} of planning and applying the spec to a new project."""
    from cabling.planner import load_spec, plan
    from cabling.planner.checks import check_plan
    from cabling.services import plan_apply, plan_diff
    from projects.models import Project

    results: dict[str, tuple[float, float]] = {}

    def timed(name: str, step):
        if tracing:
            tracemalloc.reset_peak()
        start = time.perf_counter()
        value = step()
        peak = tracemalloc.get_traced_memory()[1] / 2**20 if tracing else 0.0
        results[name] = (time.perf_counter() - start, peak)
        return value

    spec = load_spec(spec_path)
    planned = timed("plan (build)", lambda: plan(spec, check=False))
    problems = timed("checks", lambda: check_plan(planned))
    assert problems == [], problems[:5]
    project = Project.objects.create(code=code, name=f"Bench {code}", customer_name="Bench")
    timed("diff (reads the project)", lambda: plan_diff(project=project, plan=planned))
    steps = Steps(tracing)
    if tracing:
        tracemalloc.reset_peak()
    start = time.perf_counter()
    result = plan_apply(project=project, planned=planned, progress=steps)  # one transaction, committed here
    end = time.perf_counter()
    steps.begin("end")
    setup = steps.started[steps.order[0]] - start  # re-diff inside the transaction, before the first step
    results["apply: diff again, inside the transaction"] = (setup, 0.0)
    for name, seconds in steps.durations(end).items():
        if name != "end":
            results[f"apply: {name}"] = (seconds, steps.peak.get(name, 0.0) / 2**20)
    results["apply (all)"] = (end - start, 0.0)
    counts = result.diff.counts()
    assert counts["cables_added"] == len(planned.cables), counts
    again = timed("apply the same spec again (no change)", lambda: plan_apply(project=project, planned=planned))
    assert again.diff.is_empty
    return results


@contextmanager
def scratch_database(name: str = BENCH_DB) -> Iterator[None]:
    """A new database `name` on the PostgreSQL server of DATABASE_URL (dropped first if a previous run left
    it), migrated, with Django set up on it; dropped at the end."""
    url = os.environ.get("DATABASE_URL", "")
    if urlsplit(url).scheme not in ("postgres", "postgresql"):
        sys.exit("DATABASE_URL must point at PostgreSQL, e.g. postgres://postgres@127.0.0.1:5432/bringup")
    _admin(url, f'DROP DATABASE IF EXISTS "{name}"')
    _admin(url, f'CREATE DATABASE "{name}"')
    os.environ["DATABASE_URL"] = _with_database(url, name)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
    try:
        import django

        django.setup()
        from django.core.management import call_command

        started = time.perf_counter()
        call_command("migrate", verbosity=0)
        print(f"{name}: migrated in {time.perf_counter() - started:.1f} s")
        yield
    finally:
        from django.db import connections

        connections.close_all()
        _admin(url, f'DROP DATABASE IF EXISTS "{name}"')
        print(f"{name}: dropped")


def main(argv: list[str]) -> None:
    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "fabric-1024.yaml"
    with scratch_database():
        catalogue_for_fabric_3()
        timed = run(spec_path, code="BENCH-T", tracing=False)
        print(f"  after the timed run: maxrss {maxrss_mib():.0f} MiB")
        tracemalloc.start()
        traced = run(spec_path, code="BENCH-M", tracing=True)
        tracemalloc.stop()
        report(spec_path, timed, traced)
        print(f"process maxrss {maxrss_mib():.0f} MiB")


def report(spec_path: Path, timed: dict, traced: dict) -> None:
    from cabling.models import Cable, CableEnd
    from inventory.models import Device, Port

    print(f"{spec_path.name} on PostgreSQL: {Device.objects.filter(project__code='BENCH-T').count()} devices, "
          f"{Port.objects.filter(device__project__code='BENCH-T').count()} ports and lanes, "
          f"{Cable.objects.filter(project__code='BENCH-T').count()} cables, "
          f"{CableEnd.objects.filter(cable__project__code='BENCH-T').count()} cable ends")
    print(f"  {'step':46} {'time':>9}   {'peak (tracemalloc)':>18}")
    for name, (seconds, _) in timed.items():
        peak = traced.get(name, (0.0, 0.0))[1]
        shown = f"{peak:12.1f} MiB" if peak else ""
        print(f"  {name:46} {seconds:8.2f} s   {shown:>18}")


def catalogue_for_fabric_3() -> None:
    """The hardware models examples/fabric-1024.yaml names: B300 servers with 8 NICs of one 800G port run
    as 2 x 400G (lane k in plane k), and 64-port 800G switches with every port split 2 x 400G."""
    from inventory.choices import HardwareKind, Network, PortKind
    from inventory.models import HardwareModel, NicTemplate, PortTemplate

    server = HardwareModel.objects.create(vendor="NVIDIA", model="B300 8-GPU", part_number="B300-8GPU",
                                          kind=HardwareKind.GPU_SERVER, height_u=10, max_power_w=14_500)
    nics = NicTemplate.objects.bulk_create(
        NicTemplate(hardware_model=server, slot=f"nic{i}", model="ConnectX-8 SuperNIC") for i in range(8)
    )
    ports = [
        PortTemplate(hardware_model=server, nic_template=nic, name=f"eth{i}", kind=PortKind.ETHERNET, speed_gbps=800,
                     network=Network.COMPUTE, breakout_lanes=2, lane_speed_gbps=400, planes_per_lane=True)
        for i, nic in enumerate(nics)
    ]
    ports.append(PortTemplate(hardware_model=server, name="bmc0", kind=PortKind.BMC, speed_gbps=1,
                              network=Network.OOB))
    PortTemplate.objects.bulk_create(ports)
    switch = HardwareModel.objects.create(vendor="Example", model="51.2T 64 x 800G", part_number="N9570-64OC",
                                          kind=HardwareKind.ETH_SWITCH, height_u=4, max_power_w=2_500)
    ports = [
        PortTemplate(hardware_model=switch, name=f"p{i}", kind=PortKind.ETHERNET, speed_gbps=800,
                     network=Network.COMPUTE, breakout_lanes=2, lane_speed_gbps=400)
        for i in range(1, 65)
    ]
    ports.append(PortTemplate(hardware_model=switch, name="mgmt0", kind=PortKind.BMC, speed_gbps=1,
                              network=Network.OOB))
    PortTemplate.objects.bulk_create(ports)


if __name__ == "__main__":
    main(sys.argv[1:])
