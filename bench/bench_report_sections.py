"""Time, queries and peak memory of each registered section of the acceptance report (projects.reports) on
reference fabric 3 (1,024 servers, 384 switches, 24,576 cables, 32,768 optics): each provider called and its
section written through SnapshotWriter into memory, every row of every table read, as delivery writes the
snapshot.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_report_sections.py [SPEC]

Like bench_plan_apply.py, it creates a scratch database `bringup_bench_ada` on that server (dropped first if a
previous run left it), migrates it, builds the fabric through the planner's apply (plan_apply), and drops
the database at the end. Not part of the test run.

What the floor would have left by acceptance is added in bulk: an optic in every compute cage (one per NIC,
one per switch cage) with a DOM temperature, NIC firmware and serials, every device confirmed in its rack
but a few, and the cables' evidence: most verified by a scan and seen ok by the fabric, some by one of the
two only, a few installed or faulty. A section whose app has no data here (the validation sections without
check runs) says so.

Each section is written twice: timed without tracing, then under tracemalloc for the peak Python memory
(tracing slows Python down, so its time is not reported). maxrss is the process's peak resident memory so
far (getrusage), for scale.
"""

from __future__ import annotations

import io
import sys
import time
import tracemalloc
from pathlib import Path

from bench_plan_apply import catalogue_for_fabric_3, maxrss_mib, scratch_database

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DB = "bringup_bench_ada"  # not the other benches', so they may run at once
BATCH = 2000


def fabric_3_at_acceptance(spec_path: Path):
    """A project holding the fabric of the spec, applied by the planner, with what the floor adds."""
    from django.db import connection

    from cabling.models import Cable
    from cabling.services import plan_apply
    from projects.models import Project

    catalogue_for_fabric_3()
    project = Project.objects.create(code="BENCH-R", name="Bench report", customer_name="Bench")
    started = time.perf_counter()
    plan_apply(project=project, spec_text=spec_path.read_text(encoding="utf-8"))
    print(f"{spec_path.name}: applied in {time.perf_counter() - started:.1f} s: "
          f"{Cable.objects.filter(project=project).count()} cables")
    started = time.perf_counter()
    _floor_evidence(project)
    print(f"  floor evidence added in {time.perf_counter() - started:.1f} s")
    # What autovacuum does soon after a bulk load: without fresh statistics PostgreSQL plans the fabric's
    # joins as nested loops over "23 cables", and the figures take three times as long.
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return project


def _floor_evidence(project) -> None:
    from datetime import UTC, datetime

    from django.contrib.auth import get_user_model
    from django.db.models import F

    from cabling.choices import CableStatus, FabricState
    from cabling.models import Cable
    from inventory.choices import FormFactor, Network, OpticStatus
    from inventory.models import Device, Nic, Optic, Port

    scanned, compared = datetime(2026, 11, 20, 10, 0, tzinfo=UTC), datetime(2026, 11, 21, 8, 0, tzinfo=UTC)
    tech = get_user_model().objects.create(username="bench-tech", first_name="Tess", last_name="Tech")
    Device.objects.filter(project=project).update(racked_at=scanned, racked_by=tech)
    Device.objects.filter(project=project, name__endswith="7").update(racked_at=None)  # a few not confirmed yet
    Nic.objects.filter(device__project=project).update(firmware="40.44.1036", serial=F("slot"))
    cages = Port.objects.filter(device__project=project, parent__isnull=True, network=Network.COMPUTE).values_list(
        "pk", flat=True).order_by("pk")
    optics = (Optic(project=project, vendor="Example", part_number="OSFP-800G-2xDR4", serial=f"OPT{pk:08d}",
                    form_factor=FormFactor.OSFP, speed_gbps=800, port_id=pk, status=OpticStatus.INSTALLED,
                    dom_temperature_c=40 + pk % 20, dom_read_at=compared)
              for pk in list(cages))
    batch: list = []
    for optic in optics:
        batch.append(optic)
        if len(batch) == BATCH:
            Optic.objects.bulk_create(batch)
            batch = []
    Optic.objects.bulk_create(batch)
    cables = Cable.objects.filter(project=project)
    cables.update(status=CableStatus.VERIFIED, verified_at=scanned, verified_by=tech, fabric_state=FabricState.OK,
                  fabric_checked_at=compared)
    ids = list(cables.order_by("pk").values_list("pk", flat=True))
    Cable.objects.filter(pk__in=ids[::50]).update(fabric_state="", fabric_checked_at=None)  # scan only
    Cable.objects.filter(pk__in=ids[1::50]).update(verified_at=None, verified_by=None)  # the fabric's word only
    Cable.objects.filter(pk__in=ids[2::500]).update(status=CableStatus.INSTALLED, verified_at=None, verified_by=None,
                                                   fabric_state=FabricState.MISSING, status_cause="Link down")
    Cable.objects.filter(pk__in=ids[3::1000]).update(status=CableStatus.FAULTY, fabric_state=FabricState.MISWIRED,
                                                    status_cause="Miswired")
    print(f"  {Optic.objects.filter(project=project).count()} optics seated, "
          f"{cables.exclude(status=CableStatus.VERIFIED).count()} cables not verified")


class Rows:
    """SnapshotWriter's on_rows callback: counts the rows written."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, rows: int) -> None:
        self.count += rows


def write_section(registered, project, *, tracing: bool) -> dict:
    """One section built by its provider and written, every row read: time, queries, rows, bytes, peak."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from projects.reports import SnapshotWriter

    buffer, rows = io.BytesIO(), Rows()
    if tracing:
        tracemalloc.reset_peak()
    start = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        writer = SnapshotWriter(buffer, on_rows=rows)
        writer.meta({})
        section = registered.provider(project)
        if section is not None:
            writer.section(registered.key, registered.title, registered.order, section)
        writer.close()
    return {"seconds": time.perf_counter() - start, "queries": len(queries.captured_queries), "rows": rows.count,
            "bytes": len(buffer.getvalue()), "written": section is not None,
            "peak": tracemalloc.get_traced_memory()[1] / 2**20 if tracing else 0.0}


def main(argv: list[str]) -> None:
    spec_path = Path(argv[0]) if argv else ROOT / "examples" / "fabric-1024.yaml"
    with scratch_database(BENCH_DB):
        from projects.reports import report_registry

        project = fabric_3_at_acceptance(spec_path)
        print(f"  maxrss {maxrss_mib():.0f} MiB before the sections")
        timed = {s.key: write_section(s, project, tracing=False) for s in report_registry.sections()}
        tracemalloc.start()
        traced = {s.key: write_section(s, project, tracing=True) for s in report_registry.sections()}
        tracemalloc.stop()
        print(f"  {'section':22} {'time':>8} {'queries':>8} {'rows':>8} {'snapshot':>10} {'peak (tracemalloc)':>19}")
        for key, figures in timed.items():
            if not figures["written"]:
                print(f"  {key:22} {figures['seconds']:7.2f}s {figures['queries']:8}   (no section for this project)")
                continue
            print(f"  {key:22} {figures['seconds']:7.2f}s {figures['queries']:8} {figures['rows']:8} "
                  f"{figures['bytes'] / 2**20:6.1f} MiB {traced[key]['peak']:15.1f} MiB")
        total = sum(figures["seconds"] for figures in timed.values())
        print(f"  all sections: {total:.1f} s; process maxrss {maxrss_mib():.0f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])
