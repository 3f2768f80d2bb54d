"""Time and peak memory of the acceptance report's PDF (delivery.reports.pdf.render_pdf) for a
1,024-server cluster: 24,576 cable rows, 49,152 link-health rows and 16,384 bandwidth rows, in a synthetic
snapshot written with the real SnapshotWriter (tests/delivery/report_samples.py). Goal on a 2-core
machine: the full edition in under 2 minutes and 500 MiB peak RSS.

    .venv/bin/python bench/bench_report_pdf.py [SERVERS]

No database and no Django: the snapshot is made up, so the figures are the renderer's. Each edition is
rendered in a child process of its own, so each peak RSS (ru_maxrss) is that edition's alone; it
includes the interpreter, reportlab and the fonts (about 28 MiB of TrueType files). CPU time is reported
beside the wall time: on a machine shared with other work the CPU time is the one to compare.
"""

from __future__ import annotations

import hashlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from report_bench_common import write_snapshot  # noqa: E402  (bench/ is on sys.path: the script's own folder)

GOAL_S = 120.0
GOAL_MIB = 500.0


def render_child(snapshot: str, edition: str, output: str) -> None:
    """In the child: render one edition and print its figures as JSON."""
    from delivery.reports.pdf import render_pdf

    reports = []
    started, cpu_started = time.perf_counter(), time.process_time()
    with open(snapshot, "rb") as source, open(output, "wb") as target:
        render_pdf(source, target, edition=edition, on_progress=reports.append)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    data = Path(output).read_bytes()
    pages = data.count(b"/Type /Page") - data.count(b"/Type /Pages")  # page objects, not the page tree
    print(json.dumps({
        "seconds": elapsed, "cpu_seconds": cpu, "maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "bytes": len(data), "pages": pages, "rows": reports[-1] if reports else 0,
        "progress_reports": len(reports), "sha256": hashlib.sha256(data).hexdigest()[:16],
    }))


def main() -> None:
    servers = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    with tempfile.TemporaryDirectory() as folder:
        snapshot = Path(folder) / "snapshot.jsonl.gz"
        started = time.perf_counter()
        sizes = write_snapshot(snapshot, servers)
        print(f"{servers:,} servers: {sizes['cables']:,} cables, {sizes['links']:,} link-health rows, "
              f"{sizes['bandwidth']:,} bandwidth rows; snapshot {snapshot.stat().st_size / 2**20:.1f} MiB "
              f"written in {time.perf_counter() - started:.1f} s")
        for edition in ("full", "summary"):
            output = Path(folder) / f"{edition}.pdf"
            child = subprocess.run([sys.executable, __file__, "--child", str(snapshot), edition, str(output)],
                                   capture_output=True, text=True, check=True, cwd=ROOT)
            figures = json.loads(child.stdout.strip().splitlines()[-1])
            verdict = ""
            if edition == "full":
                met = figures["seconds"] < GOAL_S and figures["maxrss_mib"] < GOAL_MIB
                verdict = f"  goal {GOAL_S:.0f} s / {GOAL_MIB:.0f} MiB: {'met' if met else 'MISSED'}"
            print(f"{edition:>7}: {figures['seconds']:6.1f} s wall, {figures['cpu_seconds']:6.1f} s CPU, "
                  f"peak RSS {figures['maxrss_mib']:5.0f} MiB, {figures['pages']:,} pages, "
                  f"{figures['bytes'] / 2**20:.1f} MiB PDF, {figures['rows']:,} rows drawn "
                  f"({figures['progress_reports']} progress reports), sha256 {figures['sha256']}{verdict}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        render_child(*sys.argv[2:])
    else:
        main()
