"""Issue 11's row "plan_fabric --confirm": the reference fabric applied by the command into a scratch project
of the kept database, at 72 and 1,024 servers (time, queries, peak memory), beside the goal (<= 15 s).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_plan_fabric.py \
        [--sizes 72,1024] [--repeat N] [--no-memory]

Each run: a new scratch project (BENCH-PLANFAB, made outside the timing), then `manage.py plan_fabric SPEC
--project BENCH-PLANFAB --confirm` timed with its queries counted; then the project is deleted with its
history rows, so the kept base project and the history tables are left as they were. The peak memory is
Python's (tracemalloc) of one more run, not timed (tracing slows Python down). The spec is the harness's
(the example with the shipped catalogue's part numbers at 1,024). On a machine shared with other work
the times are upper bounds.
"""

from __future__ import annotations

import io
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import MODEL_SWAPS, SPECS, Figures, arguments, bench_project, report, scratch_code  # noqa: E402

GOAL_MS = 15_000
SCRATCH = "planfab"


def spec_file(servers: int, folder: Path) -> Path:
    """The spec the kept project was built from, written where the command can read it."""
    text = SPECS[servers].read_text(encoding="utf-8")
    for placeholder, part_number in MODEL_SWAPS.get(servers, ()):
        text = text.replace(placeholder, part_number)
    path = folder / f"fabric-{servers}.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def new_scratch_project(name: str = SCRATCH):
    from projects.models import Project

    drop_scratch(name)
    return Project.objects.create(code=scratch_code(name), name=f"Bench {name}", customer_name="Bench")


def drop_scratch(name: str = SCRATCH) -> None:
    """The scratch project with its rows and every history row of them, deleted in a few statements (the
    ORM's delete would load each of the 200,000 rows to send its signals), so the next run and the other
    benches see the same tables. The database checks the foreign keys at commit: a row of another table still
    pointing at one of these refuses the whole delete."""
    from django.db import transaction

    from cabling.models import Cable, CableEnd
    from inventory.models import Device, DeviceUnit, Nic, Optic, Port, Rack, Site
    from projects.models import Project

    project = Project.objects.filter(code=f"BENCH-{name.upper()}").first()
    if project is None:
        return
    devices = Device.objects.filter(project=project).values("pk")
    cables = Cable.objects.filter(project=project).values("pk")
    with transaction.atomic():
        for model in (Port, Nic):
            model.history.filter(device_id__in=devices)._raw_delete(model.history.db)
        CableEnd.history.filter(cable_id__in=cables)._raw_delete(CableEnd.history.db)
        for model in (Cable, Optic, Device, Rack, Site):
            model.history.filter(project_id=project.pk)._raw_delete(model.history.db)
        Project.history.filter(id=project.pk)._raw_delete(Project.history.db)
        Optic.objects.filter(project=project)._raw_delete(Optic.objects.db)  # before the ports they sit in
        CableEnd.objects.filter(cable__project=project)._raw_delete(CableEnd.objects.db)
        Cable.objects.filter(project=project)._raw_delete(Cable.objects.db)
        for model in (DeviceUnit, Port, Nic):
            model.objects.filter(device__project=project)._raw_delete(model.objects.db)
        for model in (Device, Rack, Site):
            model.objects.filter(project=project)._raw_delete(model.objects.db)
        scratch_code(name)  # the project and what else hangs on it (its FabricPlan rows)
    Project.history.filter(id=project.pk)._raw_delete(Project.history.db)  # the delete's own history row


def apply_once(spec: Path) -> tuple[float, int]:
    """Seconds and queries of one `plan_fabric --confirm` into a new scratch project."""
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    new_scratch_project()
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        call_command("plan_fabric", str(spec), project=f"BENCH-{SCRATCH.upper()}", confirm=True, stdout=io.StringIO())
        seconds = time.perf_counter() - started
    return seconds, len(captured.captured_queries)


def peak_mib(spec: Path) -> float:
    new_scratch_project()
    from django.core.management import call_command

    tracemalloc.start()
    call_command("plan_fabric", str(spec), project=f"BENCH-{SCRATCH.upper()}", confirm=True, stdout=io.StringIO())
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return peak


def main() -> None:
    args = arguments(__doc__.splitlines()[0], extra=lambda p: p.add_argument(
        "--no-memory", action="store_true", help="skip the traced run (its peak memory)"))
    with tempfile.TemporaryDirectory() as folder:
        for servers in args.sizes:
            with bench_project(servers, fresh=args.fresh) as built:
                assert built.project.cables.exists()
                spec = spec_file(servers, Path(folder))
                try:
                    runs = [apply_once(spec) for _ in range(max(1, args.repeat))]
                    peak = 0.0 if args.no_memory else peak_mib(spec)
                finally:
                    drop_scratch()
                times = sorted(seconds * 1000 for seconds, _ in runs)
                figures = Figures(
                    median_ms=statistics.median(times),
                    p90_ms=times[min(len(times) - 1, round(0.9 * (len(times) - 1)))],
                    queries=runs[-1][1], peak_mib=peak,
                    extra=f"(queries {min(q for _, q in runs)}-{max(q for _, q in runs)})",
                )
                report("plan_fabric --confirm", servers, figures, goal_ms=GOAL_MS, goal="goal <= 15 s")


if __name__ == "__main__":
    main()
