"""Time and peak memory of the label sheet export of reference fabric 3 (1,024 servers, 24,576 cables):
the whole fabric on L7651 sheets, rendered by the export job's service as its task runs it.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_label_export.py [SPEC]

Like bench_plan_apply.py, it creates a scratch database `bringup_bench_labels` on that server (dropped first if a
previous run left it), migrates it, builds the fabric through the planner's apply (plan_apply) and
drops the database at the end. MEDIA_ROOT is a temporary folder. Not part of the test run.

Two exports of the whole fabric: the first timed without tracing, the second under tracemalloc for the
peak Python memory (tracing slows Python down, so its time is not reported). maxrss is the process's
peak resident memory so far (getrusage), read before and after the timed export.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench_plan_apply import catalogue_for_fabric_3, maxrss_mib, scratch_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DB = "bringup_bench_labels"  # not bench_plan_apply's, so the two may run at once


def export_whole_fabric(project, *, tracing: bool) -> tuple[float, float, object]:
    """(seconds, peak MiB traced or 0, the export row) of one whole-fabric export, run as the task runs it."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from cabling.models import LabelSheetExport
    from cabling.services import label_sheet_export_run

    # The row as label_sheet_export_start leaves it, without sending the task (eager here: it would run
    # inside the start, untimed); then the task's body.
    export = LabelSheetExport.objects.create(project=project)
    if tracing:
        tracemalloc.reset_peak()
    start = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        export = label_sheet_export_run(export_id=export.pk)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20 if tracing else 0.0
    export.query_count = len(queries.captured_queries)
    return seconds, peak, export


def main(argv: list[str]) -> None:
    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "fabric-1024.yaml"
    with tempfile.TemporaryDirectory(prefix="bench-media-") as media:
        os.environ["MEDIA_ROOT"] = media  # read when Django sets up, inside scratch_database
        with scratch_database(BENCH_DB):
            project = fabric_3_applied(spec_path)
            before = maxrss_mib()
            seconds, _, export = export_whole_fabric(project, tracing=False)
            after = maxrss_mib()
            print(f"  export (timed): {export.status}, {export.progress_done} labels in {seconds:.1f} s "
                  f"({1000 * seconds / max(export.progress_done, 1):.2f} ms a label), PDF "
                  f"{export.output.size / 2**20:.1f} MiB, {export.query_count} queries (progress reports included)")
            print(f"  maxrss {before:.0f} MiB before the export, {after:.0f} MiB after")
            tracemalloc.start()
            _, peak, traced = export_whole_fabric(project, tracing=True)
            tracemalloc.stop()
            print(f"  export (traced): {traced.progress_done} labels, peak Python memory {peak:.1f} MiB (tracemalloc)")


def fabric_3_applied(spec_path: Path):
    """A project holding the fabric of the spec, written by the planner's apply."""
    from cabling.models import Cable, CableEnd
    from cabling.services import plan_apply
    from projects.models import Project

    catalogue_for_fabric_3()
    project = Project.objects.create(code="BENCH-L", name="Bench labels", customer_name="Bench")
    started = time.perf_counter()
    plan_apply(project=project, spec_text=spec_path.read_text(encoding="utf-8"))
    print(f"{spec_path.name}: applied in {time.perf_counter() - started:.1f} s: "
          f"{Cable.objects.filter(project=project).count()} cables, "
          f"{CableEnd.objects.filter(cable__project=project).count()} cable ends (labels)")
    return project


if __name__ == "__main__":
    main(sys.argv[1:])
