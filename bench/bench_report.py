"""Time and peak memory of the acceptance report of the 1,024-server project, step by step, on PostgreSQL:
the snapshot (every registered section reading the database), the full PDF, the summary PDF and the Excel
workbook (each rendered from that snapshot), beside openpyxl's write-only mode writing the same table rows
and nothing else (the floor an Excel renderer can reach), and the render service end to end (the four
steps with storing and hashing each file, as the worker runs it).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_report.py [SPEC]

Like bench_plan_apply.py it creates a scratch database `bringup_bench_report` on that server (dropped first
if a previous run left it), migrates it, applies the spec (examples/fabric-1024.yaml) and drops it at the
end. Not part of the test run.

The project is one whose checks have all run, with simulated results created in bulk: a link-health result
for every planned link, CPU-path and GPU RDMA bandwidth for every rail of every node (pairs of nodes, as
the kinds measure them), and NCCL over groups of 8 nodes covering every node, a few of each failing; their
metrics are what the real parsers make of the tool outputs in tests/fixtures. Its stages are computed,
some punch items are open. Each step runs in a child process of its own, so its peak RSS (VmHWM) is
that step's alone (interpreter, Django and the libraries included); CPU time is printed beside the wall
time, the one to compare on a machine shared with other work.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from report_bench_common import openpyxl_floor  # noqa: E402  (bench/ is on sys.path: the script's own folder)

BENCH_DB = "bringup_bench_report"
FIXTURES = ROOT / "tests" / "fixtures" / "tool-outputs"
NCCL_GROUP = 8
BATCH = 2000


# --- the project ---------------------------------------------------------------------------------------------


def build_project(spec_path: Path):
    from bench_plan_apply import catalogue_for_fabric_3

    from cabling.planner import load_spec, plan
    from cabling.services import plan_apply
    from projects.choices import Role
    from projects.models import Project
    from projects.services import membership_set, user_ensure

    catalogue_for_fabric_3()
    project = Project.objects.create(code="BENCH-REPORT", name="Bench 1,024-server cluster", customer_name="Bench AI",
                                     name_zh="基准集群", customer_name_zh="基准人工智能", site="DC1 Hall 1")
    started = time.perf_counter()
    plan_apply(project=project, planned=plan(load_spec(spec_path)))
    print(f"  plan applied in {time.perf_counter() - started:.1f} s")
    manager = user_ensure(username="bench-manager", password="bench-pw-1")
    manager.first_name, manager.last_name = "Bench", "Manager"
    manager.save()
    membership_set(project=project, user=manager, role=Role.MANAGER)
    return project, manager


def _fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def metric_templates() -> dict:
    """What the kinds store as metrics, made by the real parsers from real tool outputs."""
    from validation import criteria
    from validation.kinds.perftest import bandwidth_metrics
    from validation.parsers import mlxlink, nccl, perftest

    link = mlxlink.parse(_fixture("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt"))[0].to_dict()
    link.pop("sections", None)
    runs = perftest.parse(_fixture("ib_write_bw_02_use_cuda_roce_16qp_duration.txt"))
    parsed = ([r for r in runs if r.role == "client"] or runs)[-1]
    collective = nccl.parse(_fixture("nccl_allreduce_01.txt"))[0]
    nccl_metrics = collective.to_dict()
    nccl_metrics["curve"] = criteria.nccl_curve(collective)
    return {
        "link": link,
        "cpu": bandwidth_metrics(parsed, {"rail": 0, "line_rate_gbps": 400, "use_cuda": False}),
        "gpu": bandwidth_metrics(parsed, {"rail": 0, "line_rate_gbps": 400, "use_cuda": True}),
        "nccl": nccl_metrics,
    }


def _varied_link(template: dict, n: int, failing: bool) -> dict:
    metrics = json.loads(json.dumps(template))
    counters = metrics.setdefault("counters", {})
    counters["effective_ber"] = 3.2e-9 if failing else 1.5e-254
    counters["raw_ber"] = (1 + n % 9) * 1e-12
    counters["symbol_errors"] = 1234 if failing else 0
    module = metrics.get("module")
    if isinstance(module, dict):
        module["temperature_c"] = 38 + n % 17
        module["serial"] = f"MT{n:08d}"
    return metrics


def simulated_results(project) -> dict[str, int]:
    """Finished runs of every kind with one result per target, in bulk (about 25,000 rows)."""
    from django.utils import timezone

    from cabling.models import Cable, CableEnd
    from core.choices import JobStatus
    from delivery.dashboard.selectors import planned_links_of
    from inventory.choices import HardwareKind, Network
    from inventory.models import Device, Port
    from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
    from validation.models import CheckResult, CheckRun

    templates = metric_templates()
    now = timezone.now()

    def run_of(kind: str) -> CheckRun:
        return CheckRun.objects.create(project=project, kind=kind, runner=RunnerKind.SIMULATED, status=JobStatus.DONE,
                                       created_at=now, started_at=now, finished_at=now)

    counts = {}
    # Link health: one result per planned link, at the node's end.
    links = planned_links_of(Cable.objects.filter(project=project, removed_from_plan=False), project_ids=[project.pk])
    node_ends = (CableEnd.objects.filter(cable__in=links, port__device__hardware_model__kind=HardwareKind.GPU_SERVER)
                 .order_by("cable_id", "position").values_list("cable_id", "port_id", "port__device_id",
                                                               "port__device__name", "port__name"))
    run, rows, seen = run_of(CheckKind.LINK_HEALTH), [], set()
    for n, (cable_id, port_id, device_id, device, port) in enumerate(node_ends):
        if cable_id in seen:
            continue
        seen.add(cable_id)
        failing = n % 997 == 0
        rows.append(CheckResult(run=run, target_key=f"{device}:{port}", status=ResultStatus.DONE, device_id=device_id,
                                port_id=port_id, cable_id=cable_id, host=device, finished_at=now,
                                verdict=Verdict.FAIL if failing else Verdict.PASS,
                                metrics=_varied_link(templates["link"], n, failing),
                                reasons=[{"level": "fail", "text": "Effective BER 3.2e-09 above 1e-12."}] if failing
                                else []))
    CheckResult.objects.bulk_create(rows, batch_size=BATCH)
    counts["link_health"] = len(rows)

    # Bandwidth: nodes paired (0-1, 2-3, ...), each rail of each pair, CPU path and GPU RDMA.
    nodes = list(Device.objects.filter(project=project, hardware_model__kind=HardwareKind.GPU_SERVER)
                 .order_by("name").values_list("pk", "name"))
    rails: dict[int, list[tuple[int, str]]] = {}
    for device_id, port_id, name in (Port.objects.filter(device__project=project, parent__isnull=True,
                                                         network=Network.COMPUTE,
                                                         device__hardware_model__kind=HardwareKind.GPU_SERVER)
                                     .order_by("device_id", "pk").values_list("device_id", "pk", "name")):
        rails.setdefault(device_id, []).append((port_id, name))
    for kind, template in ((CheckKind.CPU_BANDWIDTH, templates["cpu"]), (CheckKind.GPU_RDMA, templates["gpu"])):
        run, rows = run_of(kind), []
        for (a, a_name), (b, b_name) in zip(nodes[0::2], nodes[1::2], strict=False):
            for rail, ((a_port, a_port_name), (b_port, b_port_name)) in enumerate(zip(rails[a], rails[b],
                                                                                       strict=False)):
                slow = (a + rail) % 509 == 0
                metrics = dict(template, rail=rail, bw_avg_gbps=(301.2 if slow else 391.0 + (a + rail) % 7 / 10))
                rows.append(CheckResult(run=run, target_key=f"{a_name}:{a_port_name}~{b_name}:{b_port_name}",
                                        status=ResultStatus.DONE, device_id=a, peer_device_id=b, port_id=a_port,
                                        peer_port_id=b_port, host=a_name, finished_at=now, metrics=metrics,
                                        verdict=Verdict.FAIL if slow else Verdict.PASS))
        CheckResult.objects.bulk_create(rows, batch_size=BATCH)
        counts[kind] = len(rows)

    # NCCL: groups of 8 nodes covering every node.
    run, rows = run_of(CheckKind.NCCL), []
    for start in range(0, len(nodes), NCCL_GROUP):
        group = nodes[start : start + NCCL_GROUP]
        hosts = [name for _, name in group]
        metrics = dict(templates["nccl"], hosts=hosts)
        rows.append(CheckResult(run=run, target_key=f"nccl:{hosts[0]}..{hosts[-1]}", status=ResultStatus.DONE,
                                device_id=group[0][0], host=hosts[0], finished_at=now, metrics=metrics,
                                params={"hosts": hosts}, verdict=Verdict.PASS))
    CheckResult.objects.bulk_create(rows, batch_size=BATCH)
    counts["nccl"] = len(rows)
    for run in CheckRun.objects.filter(project=project):
        total = run.results.count()
        CheckRun.objects.filter(pk=run.pk).update(progress_total=total, progress_done=total)
    return counts


def analyze() -> None:
    """The statistics autovacuum would gather on a live database: without them, after a bulk load, PostgreSQL
    plans the gates' and the sections' joins as if the tables were empty (minutes instead of seconds)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")


def stages_and_punch_list(project, manager) -> None:
    from django.utils import timezone

    from delivery.choices import PunchSeverity
    from delivery.models import PunchItem
    from delivery.stages.services import gates_recompute, stages_create_from_template

    stages_create_from_template(project=project)
    started = time.perf_counter()
    gates_recompute(project=project)
    print(f"  gates computed in {time.perf_counter() - started:.1f} s")
    PunchItem.objects.bulk_create(
        PunchItem(project=project, title=f"Re-seat the optic of link {n}", customer_visible=n % 3 != 0,
                  severity=(PunchSeverity.CRITICAL, PunchSeverity.MAJOR, PunchSeverity.MINOR)[n % 3],
                  opened_by=manager, opened_at=timezone.now(), object_label=f"C{n:05d}")
        for n in range(300)
    )


# --- the steps, each in a child process -------------------------------------------------------------------------


def _peak_rss_mib() -> float:
    """This process's peak resident memory: VmHWM, the high-water mark of its own address space. Not
    ru_maxrss: Linux keeps that across fork and exec, so a child started by this (large) bench process would
    report the parent's size at the fork whenever its own is smaller."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(step: str, version_id: int, snapshot: str, output: str) -> None:
    """In the child: run one step and print its figures as JSON."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
    django.setup()
    started, cpu_started = time.perf_counter(), time.process_time()
    rows = 0
    if step == "snapshot":
        from delivery.models import ReportVersion
        from delivery.reports.snapshot import snapshot_write

        version = ReportVersion.objects.select_related("project", "requested_by").get(pk=version_id)
        with open(snapshot, "wb") as target:
            rows = snapshot_write(project=version.project, version=version, target=target).rows
        output = snapshot
    elif step in ("full pdf", "summary pdf"):
        from delivery.reports.pdf import render_pdf

        with open(snapshot, "rb") as source, open(output, "wb") as target:
            render_pdf(source, target, edition=step.split()[0])
    elif step == "excel":
        from delivery.reports.excel import render_xlsx

        with open(snapshot, "rb") as source, open(output, "wb") as target:
            render_xlsx(source, target, edition="full")
    elif step == "openpyxl write-only, rows alone":
        rows = openpyxl_floor(snapshot, output)
    elif step == "render service, end to end":
        from delivery.models import ReportVersion
        from delivery.reports.services import report_version_render

        version = report_version_render(version_id=version_id)
        assert version.status == "done", version.errors
        output = version.pdf_file.path
        rows = version.figures.get("rows", 0)
    print(json.dumps({"seconds": time.perf_counter() - started, "cpu_seconds": time.process_time() - cpu_started,
                      "maxrss_mib": _peak_rss_mib(), "bytes": os.path.getsize(output), "rows": rows}))


def run_step(step: str, version_id: int, snapshot: Path, folder: Path) -> dict:
    output = folder / f"{step.replace(' ', '-').replace(',', '')}.out"
    done = subprocess.run([sys.executable, __file__, "--child", step, str(version_id), str(snapshot), str(output)],
                          capture_output=True, text=True, env=os.environ.copy())
    if done.returncode != 0:
        raise SystemExit(f"{step} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


STEPS = ("snapshot", "full pdf", "summary pdf", "excel", "openpyxl write-only, rows alone",
         "render service, end to end")


def main(argv: list[str]) -> None:
    from bench_plan_apply import scratch_database

    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "fabric-1024.yaml"
    with scratch_database(BENCH_DB), tempfile.TemporaryDirectory() as folder:
        from django.conf import settings

        from delivery.reports.services import report_version_request

        media = Path(folder) / "media"
        os.environ["MEDIA_ROOT"] = str(media)  # the children's (settings read it at start)
        settings.MEDIA_ROOT = media
        project, manager = build_project(spec_path)
        analyze()
        # The gates before the results, as bench_dashboard.py does: with them, validation's link checks gate
        # takes minutes on PostgreSQL; the summary reads the stored outcome either way.
        stages_and_punch_list(project, manager)
        started = time.perf_counter()
        counts = simulated_results(project)
        print(f"  results created in {time.perf_counter() - started:.1f} s: "
              + ", ".join(f"{n:,} {kind}" for kind, n in counts.items()))
        analyze()
        snapshot = Path(folder) / "snapshot.jsonl.gz"
        # One version: the snapshot step reads it (and leaves it queued), the service then renders it.
        version = report_version_request(project=project, user=manager, enqueue=False)
        figures = {}
        for step in STEPS:
            figures[step] = run_step(step, version.pk, snapshot, Path(folder))
            print(f"  {step}: {figures[step]['seconds']:.1f} s")
        report(project, figures)


def report(project, figures: dict) -> None:
    from cabling.models import Cable
    from inventory.models import Device

    print(f"{project.code}: {Device.objects.filter(project=project).count():,} devices, "
          f"{Cable.objects.filter(project=project).count():,} cables; the snapshot holds "
          f"{figures['snapshot']['rows']:,} table rows")
    print(f"  {'step':34} {'wall':>8} {'cpu':>8} {'peak RSS':>10} {'output':>11}")
    for step, row in figures.items():
        print(f"  {step:34} {row['seconds']:7.1f}s {row['cpu_seconds']:7.1f}s {row['maxrss_mib']:7.0f} MiB "
              f"{row['bytes'] / 2**20:7.1f} MiB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5])
    else:
        main(sys.argv[1:])
