"""Time and peak memory of the acceptance report's Excel workbook (delivery.reports.excel.render_xlsx)
for a 1,024-server cluster: 24,576 cable rows, 49,152 link-health rows and 16,384 bandwidth rows, in a
synthetic snapshot written with the real SnapshotWriter (tests/delivery/report_samples.py), next to the
floor: openpyxl's write-only mode writing the same rows alone, read from the same snapshot, as plain values
(no cover, no contents, no styles, no dates). Goals: at most 1.5 times the floor, under 500 MiB peak.

    .venv/bin/python bench/bench_report_excel.py [SERVERS] [ROUNDS]

No database and no Django: the snapshot is made up, so the figures are the renderer's. Every measurement
runs in a child process of its own, so its peak RSS (ru_maxrss) is its own; rounds alternate the floor
and the renderer, and the best of each is compared (the machine is shared: the CPU time is the figure to
compare, the wall time is printed beside it). Reading the snapshot alone is measured too, to show what
both pay before writing a cell.
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

from report_bench_common import openpyxl_floor, write_snapshot  # noqa: E402  (bench/ is on sys.path: the script's own folder)

GOAL_RATIO = 1.5
GOAL_MIB = 500.0


# --- what a child process measures ---------------------------------------------------------------------


def read_only(snapshot: Path, output: Path) -> int:
    """Every row of the snapshot read, nothing written: the part of the work both others share."""
    from projects.reports import TableRecord, read_snapshot

    rows = 0
    with snapshot.open("rb") as source:
        for section in read_snapshot(source).sections:
            for block in section.blocks:
                if isinstance(block, TableRecord):
                    rows += sum(1 for _ in block.rows)
    output.write_bytes(b"")
    return rows


def render(snapshot: Path, output: Path, edition: str = "full") -> int:
    from delivery.reports.excel import render_xlsx

    done = [0]
    with snapshot.open("rb") as source, output.open("wb") as target:
        render_xlsx(source, target, edition=edition, on_progress=lambda rows: done.__setitem__(0, rows))
    return done[0]


MEASURES = {"read": read_only, "floor": openpyxl_floor, "render": render,
            "summary": lambda snapshot, output: render(snapshot, output, "summary")}


def child(name: str, snapshot: str, output: str) -> None:
    started, cpu = time.perf_counter(), time.process_time()
    rows = MEASURES[name](Path(snapshot), Path(output))
    print(json.dumps({"rows": rows, "seconds": time.perf_counter() - started, "cpu": time.process_time() - cpu,
                      "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


# --- the parent ---------------------------------------------------------------------------------------


def measure(name: str, snapshot: Path, output: Path) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", name, str(snapshot), str(output)],
                          capture_output=True, text=True, check=True, cwd=ROOT)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["bytes"] = output.stat().st_size
    figures["sha256"] = hashlib.sha256(output.read_bytes()).hexdigest()
    return figures


def line(name: str, figures: dict) -> str:
    return (f"  {name:<8} {figures['rows']:>7,} rows  cpu {figures['cpu']:6.1f} s  wall {figures['seconds']:6.1f} s  "
            f"peak RSS {figures['rss_mib']:5.0f} MiB  file {figures['bytes'] / 2**20:5.1f} MiB")


def main(argv: list[str]) -> None:
    servers = int(argv[0]) if argv else 1024
    rounds = int(argv[1]) if len(argv) > 1 else 3
    with tempfile.TemporaryDirectory(prefix="bench-report-xlsx-") as folder:
        snapshot = Path(folder) / "snapshot.jsonl.gz"
        sizes = write_snapshot(snapshot, servers)
        print(f"{servers:,} servers: {', '.join(f'{n:,} {k} rows' for k, n in sizes.items())}; snapshot "
              f"{snapshot.stat().st_size / 2**20:.1f} MiB")
        best: dict[str, dict] = {}
        hashes: set[str] = set()
        for round_ in range(rounds):
            for name in ("read", "floor", "render"):
                figures = measure(name, snapshot, Path(folder) / f"{name}.xlsx")
                print(line(f"{name}#{round_ + 1}", figures))
                if name == "render":
                    hashes.add(figures["sha256"])
                if name not in best or figures["cpu"] < best[name]["cpu"]:
                    best[name] = figures
        summary = measure("summary", snapshot, Path(folder) / "summary.xlsx")
        print(line("summary", summary))
        ratio = best["render"]["cpu"] / best["floor"]["cpu"]
        wall_ratio = best["render"]["seconds"] / best["floor"]["seconds"]
        print(f"best render / best floor: {ratio:.2f}x CPU ({wall_ratio:.2f}x wall), goal <= {GOAL_RATIO}x; "
              f"peak RSS {best['render']['rss_mib']:.0f} MiB, goal < {GOAL_MIB:.0f} MiB; "
              f"{'the same bytes' if len(hashes) == 1 else 'DIFFERENT bytes'} in {rounds} renders")
        if ratio > GOAL_RATIO or best["render"]["rss_mib"] >= GOAL_MIB or len(hashes) != 1:
            print("GOAL MISSED")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
    else:
        main(sys.argv[1:])
