"""Time and peak memory of comparing the live fabric of reference fabric 3 (1,024 servers, 384 switches,
24,576 cables, 32,768 links) with its plan, on PostgreSQL.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_compare_topology.py [SPEC]

Like bench_plan_apply.py it creates a scratch database `bringup_bench_topology` on that server (dropped first
if a previous run left it), migrates it, applies the spec (the switches' OS names ports swp{n}, lanes
swp{n}s{k}) and drops it at the end. MEDIA_ROOT is a temporary folder. Not part of the test run.

The observed fabric is made from the plan with a few faults (validation.runners.simfabric: a swapped pair,
a link at half speed, a missing link; an Ethernet fabric with every port used has no free port for a cable
on the wrong leaf): each switch's `lldpcli -f json show neighbors`, 384 outputs holding 49,152 neighbour
entries (a leaf-spine link is seen from both ends) for 32,768 distinct links.

Steps, each timed alone:
  pure      read (detect + parse the 384 outputs), map (to our ports), compare (link by link)
  database  read the inventory and the plan; the whole service (files stored, read, mapped, compared, its
            rows written, identities learned, cables moved) the first time (learning 16,384 MACs) and the
            second time (nothing new to learn)
Peak memory: tracemalloc over the pure steps (run again under tracing: tracing slows Python, so its time is
not reported) and the process's maxrss.
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
BENCH_DB = "bringup_bench_topology"
SEED = 1
GOAL_S = 3.0


def fabric_applied(spec_path: Path):
    from cabling.planner import load_spec, plan
    from cabling.services import plan_apply
    from delivery.models import Project
    from inventory.models import HardwareModel

    catalogue_for_fabric_3()
    HardwareModel.objects.filter(part_number="N9570-64OC").update(os_port_format="swp{n}")
    project = Project.objects.create(code="BENCH-TOPO", name="Bench topology", customer_name="Bench")
    started = time.perf_counter()
    plan_apply(project=project, planned=plan(load_spec(spec_path)))
    print(f"  plan applied in {time.perf_counter() - started:.1f} s (not part of the comparison)")
    return project


def observed_outputs(project):
    """{switch: lldpcli -f json text} of the fabric made from the plan, and the faults planted in it."""
    from validation.cluster import sim_fabric_from
    from validation.runners.simfabric import lldp_tables, lldpcli_json, plan_fabric_faults
    from validation.topology.store import inventory_of, planned_links

    inventory = inventory_of(project)
    fabric = sim_fabric_from(inventory, planned_links(project, inventory))
    faults = plan_fabric_faults(fabric, SEED)
    tables = lldp_tables(fabric, faults)
    switches = sorted(d.name for d in inventory.devices.values() if d.is_switch)
    outputs = {name: lldpcli_json(fabric, faults, name, tables) for name in switches}
    return outputs, faults, {link.key: link for link in fabric.links}


def pure_steps(outputs: dict[str, str], inventory, planned) -> tuple[dict[str, float], object, object]:
    from validation.topology.compare import compare
    from validation.topology.mapping import map_sources
    from validation.topology.reading import read_output

    times = {}

    def timed(name, step):
        wall, cpu = time.perf_counter(), time.process_time()
        value = step()
        times[name] = (time.perf_counter() - wall, time.process_time() - cpu)
        return value

    sources = timed("read (detect + parse)",
                    lambda: [read_output(f"{name}.json", text, host=name).source for name, text in outputs.items()])
    observation = timed("map to our ports", lambda: map_sources(inventory, sources))
    result = timed("compare link by link", lambda: compare(inventory, planned, observation))
    return times, observation, result


def main(argv: list[str]) -> None:
    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "fabric-1024.yaml"
    with tempfile.TemporaryDirectory(prefix="bench-media-") as media:
        os.environ["MEDIA_ROOT"] = media
        with scratch_database(BENCH_DB):
            run(spec_path)


def run(spec_path: Path) -> None:
    from inventory.models import Port
    from validation.choices import TopologySource
    from validation.topology.services import TopologyInput, topology_compare_now
    from validation.topology.store import inventory_of, planned_links

    project = fabric_applied(spec_path)
    outputs, faults, links = observed_outputs(project)
    entries = sum(text.count('"via"') for text in outputs.values())
    size = sum(len(text) for text in outputs.values())
    print(f"  observed fabric: {len(outputs)} lldpcli outputs, {entries:,} neighbour entries, {size / 2**20:.1f} MiB; "
          f"planted: {'; '.join(faults.describe(links))}")

    start = time.perf_counter()
    inventory = inventory_of(project)
    read_inventory = time.perf_counter() - start
    start = time.perf_counter()
    planned = planned_links(project, inventory)
    read_plan = time.perf_counter() - start

    times, observation, result = pure_steps(outputs, inventory, planned)
    found = {r.key: r.state.value for r in result.faults()}
    assert found == faults.expected(), (found, faults.expected())
    assert result.counts["observed"] == 32_768 - 1, result.counts  # the planted missing link is not seen
    pure = sum(wall for wall, _ in times.values())
    pure_cpu = sum(cpu for _, cpu in times.values())

    tracemalloc.start()
    tracemalloc.reset_peak()
    pure_steps(outputs, inventory, planned)
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    inputs = [TopologyInput(name=f"{name}.json", data=text.encode(), host=name) for name, text in outputs.items()]
    start = time.perf_counter()
    first = topology_compare_now(project=project, user=None, inputs=inputs, source=TopologySource.COMMAND)
    first_s = time.perf_counter() - start
    learned = Port.objects.filter(device__project=project).exclude(guid_mac="").count()
    start = time.perf_counter()
    second = topology_compare_now(project=project, user=None, inputs=inputs, source=TopologySource.COMMAND)
    second_s = time.perf_counter() - start
    kept = {link.key: link.state for link in second.links.all()}
    assert first.status == second.status == "done" and kept == found, (first.status, first.errors, kept, found)

    counts = result.counts
    print(f"{spec_path.name} on PostgreSQL: {counts['in_scope']:,} planned links in scope, {counts['observed']:,} "
          f"seen; found {', '.join(f'{counts[s]} {s}' for s in ('ok', 'missing', 'miswired', 'unplanned', 'degraded'))}"
          f" ({counts['swaps']} swapped pair): exactly the planted faults")
    print(f"  {'step':52} {'wall':>8} {'cpu':>8}")
    for name, (wall, cpu) in times.items():
        print(f"  pure: {name:46} {wall:7.2f} s {cpu:7.2f} s")
    verdict = "met" if pure < GOAL_S else ("met in CPU time (the machine is busy)" if pure_cpu < GOAL_S else "MISSED")
    print(f"  pure: {'mapping and comparison (read + map + compare)':46} {pure:7.2f} s {pure_cpu:7.2f} s   "
          f"goal < {GOAL_S:.0f} s: {verdict}")
    print(f"  db:   {'read the inventory (devices, ports, cable ends)':46} {read_inventory:7.2f} s")
    print(f"  db:   {'read the planned links':46} {read_plan:7.2f} s")
    print(f"  {'mapping + comparison with its database reads':52} {pure + read_inventory + read_plan:7.2f} s")
    print(f"  service, first comparison: files kept and read, compared, {learned:,} MACs learned, "
          f"{first.cables_changed:,} cables moved: {first_s:.1f} s")
    print(f"  service, second comparison: nothing new to learn, {second.cables_changed} cables moved: {second_s:.1f} s")
    load = os.getloadavg()[0]
    print(f"  load average {load:.1f} on {os.cpu_count()} CPU(s) while measuring")
    print(f"  peak traced memory of the pure steps {peak:.0f} MiB; process maxrss {maxrss_mib():.0f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
