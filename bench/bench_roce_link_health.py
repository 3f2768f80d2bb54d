"""Issue 11, row "link-health run" (RoCE): the 1,024-server project (dual-plane 400G RoCE, B300-8GPU-ETH servers)
used to be refused ("no GPU nodes with compute-fabric ports"); now its Ethernet compute ports are rails.

Measures, at 72 (InfiniBand) and 1,024 (RoCE) servers:
  - reading the GPU nodes and their rails (compute and storage) from the inventory;
  - building the link-health targets (compute, then compute + storage);
  - starting a run (its pending result rows), inside a transaction rolled back afterwards, so nothing is
    queued and the kept project stays as it was;
  - executing a sample of targets through the kind with one simulated runner (mlxlink + ethtool -S on a RoCE
    port), and what they were judged: the planted dirty fiber and hot optic fail, the rest pass.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_roce_link_health.py
"""

from __future__ import annotations

import time
from collections import Counter

from harness import arguments, bench_project, measure, report

SAMPLE = 120  # targets executed per size (the whole run is the check engine's bench)


class _RolledBack(Exception):
    pass


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    for servers in args.sizes:
        with bench_project(servers, fresh=args.fresh) as bench:
            measure_size(bench, args.repeat)


def measure_size(bench, repeat: int) -> None:
    from validation import criteria
    from validation.cluster import gpu_nodes, sim_cluster_for
    from validation.kinds import TargetInputs, link_health
    from validation.models import CheckResult
    from validation.runners import SimulatedRunner

    project, servers = bench.project, bench.servers
    nodes = gpu_nodes(project)
    compute = sum(len(n.rails) for n in nodes)
    storage = sum(len(n.storage_rails) for n in nodes)
    layer = "RoCE" if nodes and nodes[0].rails[0].ethernet else "InfiniBand"
    figures = measure(lambda: gpu_nodes(project), repeat=repeat)
    figures.extra = f"{len(nodes)} nodes, {compute} compute + {storage} storage ports ({layer})"
    report("gpu_nodes (compute + storage rails)", servers, figures)

    for network in ("compute", "all"):
        figures = measure(lambda network=network: link_health.build_targets(gpu_nodes(project), {"network": network},
                                                                            project), repeat=repeat)
        count = len(link_health.build_targets(nodes, {"network": network}, project))
        figures.extra = f"{count} targets"
        report(f"link-health targets ({network})", servers, figures)

    measure_run_start(project, servers, repeat)

    cluster_started = time.perf_counter()
    runner = SimulatedRunner(sim_cluster_for(project), seed=1)
    cluster_ms = 1000 * (time.perf_counter() - cluster_started)
    targets = link_health.build_targets(nodes, {}, project)
    faulty = {runner.faults.dirty_fiber, runner.faults.hot_optic}
    sample = [t for t in targets if (t.host, t.params["rdma_device"]) in faulty] + targets[:SAMPLE]
    inputs = TargetInputs(runner=runner, profile=criteria.Profile(), timeout=60)
    verdicts: Counter = Counter()
    started = time.perf_counter()
    for target in sample:
        result = CheckResult(params=target.params, host=target.host, command=target.command)
        verdicts[str(link_health.execute(result, inputs).verdict.outcome)] += 1
    per_target = 1000 * (time.perf_counter() - started) / len(sample)
    print(f"{'link-health execute (simulated)':38} {servers:5} servers  {per_target:9.2f} ms/target over "
          f"{len(sample)} targets (runner built in {cluster_ms:.0f} ms)  verdicts {dict(verdicts)}  "
          f"(2 planted faults: expect 2 fail)")


RUN_START_GOAL_MS = 3000


def measure_run_start(project, servers: int, repeat: int) -> None:
    """The whole start (services.check_run_start, rolled back), then its parts: the targets (gpu_nodes and the
    kind's build_targets), the simulated cluster for the fault plan (sim_cluster_for: a second gpu_nodes unless
    given the nodes), and the pending rows written by bulk_create (what runs.py does) beside COPY (what it
    could do)."""
    from django.db import transaction

    from validation import services
    from validation.choices import CheckKind
    from validation.cluster import gpu_nodes, sim_cluster_for
    from validation.kinds import link_health
    from validation.models import CheckResult, CheckRun
    from validation.runners import SimulatedRunner
    from validation.services.targets import result_row

    def rolled_back(step):
        def run():
            try:
                with transaction.atomic():
                    step()
                    raise _RolledBack
            except _RolledBack:
                pass
        return run

    start = rolled_back(lambda: services.check_run_start(project=project, kind=CheckKind.LINK_HEALTH,
                                                         options={"seed": 1}))
    figures = measure(start, repeat=repeat, memory=False)
    figures.extra = "nothing kept (rolled back)"
    report("link-health run start (rolled back)", servers, figures, goal_ms=RUN_START_GOAL_MS)

    nodes = gpu_nodes(project)
    figures = measure(lambda: link_health.build_targets(gpu_nodes(project), {}, project), repeat=repeat,
                      memory=False)
    report("  start: targets (gpu_nodes + build)", servers, figures)
    figures = measure(lambda: sim_cluster_for(project, nodes=nodes), repeat=repeat, memory=False)
    report("  start: sim cluster from the nodes", servers, figures)
    figures = measure(lambda: sim_cluster_for(project), repeat=repeat, memory=False)
    report("  start: sim cluster reading them again", servers, figures)

    targets = link_health.build_targets(nodes, {}, project)

    def new_run():
        run = CheckRun(project=project, kind=CheckKind.LINK_HEALTH, progress_total=len(targets))
        run.save()
        return run

    def bulk():
        run = new_run()
        CheckResult.objects.bulk_create([result_row(run, t) for t in targets], batch_size=500)

    figures = measure(rolled_back(bulk), repeat=repeat, memory=False)
    figures.extra = f"{len(targets)} rows, batch_size=500 (runs.py today)"
    report("  start: pending rows by bulk_create", servers, figures)

    def copy():
        run = new_run()
        _copy_pending_rows(run, targets)
        assert CheckResult.objects.filter(run=run).count() == len(targets)

    figures = measure(rolled_back(copy), repeat=repeat, memory=False)
    figures.extra = f"{len(targets)} rows (+1 count query to check them)"
    report("  start: pending rows by COPY", servers, figures)

    def start_as_it_could_be():
        """runs.py's steps with the nodes read once and the rows copied: what the start would cost."""
        read = gpu_nodes(project)
        planned = link_health.build_targets(read, {}, project)
        SimulatedRunner(sim_cluster_for(project, nodes=read), seed=1).faults.describe()
        _copy_pending_rows(new_run(), planned)

    figures = measure(rolled_back(start_as_it_could_be), repeat=repeat, memory=False)
    figures.extra = "nodes read once, rows by COPY (a sketch of runs.py's steps)"
    report("  start as it could be (rolled back)", servers, figures, goal_ms=RUN_START_GOAL_MS)


def _copy_pending_rows(run, targets) -> None:
    """What runs.py could do instead of bulk_create: one COPY of the pending rows (JSON dumped once per row,
    no per-element array quoting, which is most of bulk_create's cost on PostgreSQL)."""
    import json

    from django.db import connection

    columns = ("run_id", "target_key", "round", "params", "status", "host", "command", "raw_output", "stderr",
               "metrics", "verdict", "reasons", "attempt", "device_id", "peer_device_id", "port_id", "peer_port_id",
               "cable_id", "optic_id")
    statement = f"COPY validation_checkresult ({', '.join(columns)}) FROM STDIN"
    with connection.cursor() as cursor, cursor.cursor.copy(statement) as copy:
        for t in targets:
            copy.write_row((
                run.pk, t.key[:255], t.round, json.dumps(t.params), "pending", t.host, t.command, "", "", "{}", "",
                "[]", 0, t.device.pk if t.device else None, t.peer_device.pk if t.peer_device else None,
                t.port.pk if t.port else None, t.peer_port.pk if t.peer_port else None, t.cable_id,
                t.optic.pk if t.optic else None,
            ))


if __name__ == "__main__":
    main()
