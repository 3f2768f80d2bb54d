"""Issue 11's row "import_inventory": the kept project's inventory exported as a workbook (racks, devices, NICs,
optics: what `manage.py export_inventory --format xlsx` writes) and imported into a fresh scratch project, at 72
and 1,024 servers (time, queries, peak memory), beside the goal (<= 10 s, queries per sheet, not per row).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_import_inventory.py \
        [--sizes 72,1024] [--repeat N] [--no-memory]

Each run: a new scratch project (BENCH-IMPORT, made outside the timing), then the import of the workbook
(`inventory_import`, what `manage.py import_inventory` calls) timed with its queries counted; then the project is
deleted with its history rows, so the kept base project and the history tables are left as they were. The peak
memory is Python's (tracemalloc) of one more run, not timed. On a machine shared with other work the times are
upper bounds.
"""

from __future__ import annotations

import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_plan_fabric import drop_scratch, new_scratch_project  # noqa: E402
from harness import Figures, arguments, bench_project, report  # noqa: E402

GOAL_MS = 10_000
SCRATCH = "import"


def import_once(workbook: bytes, *, traced: bool = False) -> tuple[float, int, int, float]:
    """Seconds, queries, rows created and peak MiB (when traced) of one import into a new scratch project."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from inventory.imports.services import inventory_import

    project = new_scratch_project(SCRATCH)
    if traced:
        tracemalloc.start()
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        result = inventory_import(project=project, filename="inventory.xlsx", data=workbook)
        seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if traced else 0.0
    if traced:
        tracemalloc.stop()
    assert result.applied, [str(issue) for issue in result.issues[:5]]
    created = sum(counts["created"] for counts in result.counts().values())
    return seconds, len(captured.captured_queries), created, peak


def main() -> None:
    args = arguments(__doc__.splitlines()[0], extra=lambda p: p.add_argument(
        "--no-memory", action="store_true", help="skip the traced run (its peak memory)"))
    for servers in args.sizes:
        with bench_project(servers, fresh=args.fresh) as built:
            from inventory.imports.export import export_xlsx

            workbook = export_xlsx(built.project)
            try:
                runs = [import_once(workbook) for _ in range(max(1, args.repeat))]
                peak = 0.0 if args.no_memory else import_once(workbook, traced=True)[3]
            finally:
                drop_scratch(SCRATCH)
            times = sorted(seconds * 1000 for seconds, *_ in runs)
            figures = Figures(
                median_ms=statistics.median(times),
                p90_ms=times[min(len(times) - 1, round(0.9 * (len(times) - 1)))],
                queries=runs[-1][1], peak_mib=peak, extra=f"({runs[-1][2]:,} rows created)",
            )
            report("import_inventory (exported workbook)", servers, figures, goal_ms=GOAL_MS,
                   goal="goal <= 10 s, queries per sheet")


if __name__ == "__main__":
    main()
