"""Time and peak memory of planning reference fabric 3 (1,024 servers, 32,768 links) in memory.

    .venv/bin/python bench/bench_planner.py [SPEC.yaml ...]

Times are the best of a few runs without tracing; peak memory is measured in a separate run under
tracemalloc (which slows Python down, so its time is not reported). Not part of the test run.
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cabling.planner import load_spec, plan  # noqa: E402
from cabling.planner.checks import check_plan  # noqa: E402

RUNS = 3


def best_of(step, runs: int = RUNS) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        start = time.perf_counter()
        result = step()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_mib(step) -> float:
    tracemalloc.start()
    try:
        step()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def bench(path: Path) -> None:
    spec = load_spec(path)
    load_s, _ = best_of(lambda: load_spec(path))
    build_s, result = best_of(lambda: plan(spec, check=False))
    check_s, problems = best_of(lambda: check_plan(result))
    assert problems == [], problems
    total_s, _ = best_of(lambda: plan(spec))
    peak = peak_mib(lambda: plan(spec))
    summary = result.summary()
    print(
        f"{path.name}: {summary['servers']} servers, {len(result.switches)} switches, "
        f"{len(result.links)} links, {len(result.cables)} cables"
    )
    print(f"  load spec      {load_s * 1000:8.1f} ms")
    print(f"  plan (build)   {build_s * 1000:8.1f} ms")
    print(f"  checks         {check_s * 1000:8.1f} ms")
    print(f"  plan + checks  {total_s * 1000:8.1f} ms   peak memory {peak:.1f} MiB (tracemalloc)")


def main(argv: list[str]) -> None:
    paths = [Path(a) for a in argv] or [ROOT / "examples" / "fabric-1024.yaml"]
    for path in paths:
        bench(path)


if __name__ == "__main__":
    main(sys.argv[1:])
