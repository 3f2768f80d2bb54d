"""Synthetic acceptance-report snapshots for the renderers' tests and benchmarks: every block type, every
column kind, Chinese names, a formula-like cable label, and as many cable rows as asked for. They are
written with the real SnapshotWriter, so they follow the format delivery writes."""

from __future__ import annotations

import io

from reportlab.graphics.shapes import Drawing, Rect, String

from projects.reports import (
    Chart,
    Column,
    Facts,
    Paragraph,
    Section,
    SnapshotWriter,
    Table,
    register_report_chart,
)

SAMPLE_CHART = "test.bars"
FORMULA_LABEL = "=HYPERLINK(\"http://evil\")"
PROJECT_NAME_ZH = "上海智算中心一期"
CUSTOMER_NAME_ZH = "星河人工智能有限公司"
INTEGRATOR_NAME_ZH = "北辰系统集成"
# What delivery hands a renderer for a signed copy (the contract in delivery.reports.services).
SIGNATURE = {
    "name": "李伟 Li Wei", "title": "CTO, Galaxy AI", "statement": "We accept the cluster as delivered.",
    "signed_at": "2026-12-02T10:30:00+08:00", "version": 1,
    "original_sha256": {"pdf": "a" * 64, "xlsx": "b" * 64},
}


def _bars(data: dict, *, width: float, height: float) -> Drawing:
    drawing = Drawing(width, height)
    values = data["values"]
    top = max(values) or 1
    bar = width / max(len(values), 1)
    for index, value in enumerate(values):
        drawing.add(Rect(index * bar, 0, bar * 0.8, height * 0.9 * value / top))
    drawing.add(String(0, height - 10, data.get("label", "")))
    return drawing


register_report_chart(SAMPLE_CHART, _bars)


def sample_meta(*, version: int = 1) -> dict:
    return {
        "report": {"id": "5b0c7f7e-8d7e-4c36-9a51-0f7d3c1f2a10", "version": version,
                   "generated_at": "2026-11-30T09:15:00+00:00", "generated_by": "Pat Manager"},
        "project": {"code": "ACME-72", "name": "ACME 72-node cluster", "name_zh": PROJECT_NAME_ZH,
                    "customer_name": "Galaxy AI Ltd", "customer_name_zh": CUSTOMER_NAME_ZH,
                    "site": "SH-DC2 hall 3", "status": "active", "start_date": "2026-10-01",
                    "target_date": "2026-12-15"},
        "integrator": {"name": "Beichen Systems", "name_zh": INTEGRATOR_NAME_ZH},
        "cluster": {"racks": 12, "servers": 72, "gpus": 576, "switches": 40, "cables": 1152, "optics": 2304},
    }


CABLE_COLUMNS = [
    Column("label", "Label", width=10), Column("a_end", "A end", width=16), Column("b_end", "B end", width=16),
    Column("type", "Type", width=10), Column("length", "Length", unit="m", kind="float", width=6),
    Column("verified_at", "Verified", kind="datetime", width=14), Column("verified_by", "By", width=10),
    Column("how", "How", width=8),
]
LINK_COLUMNS = [
    Column("port", "Port", width=16), Column("verdict", "Verdict", kind="verdict", width=7),
    Column("temperature", "Temperature", unit="°C", kind="celsius", width=7),
    Column("voltage", "Voltage", unit="V", kind="volts", width=6),
    Column("rx_min", "Rx min", unit="dBm", kind="dbm", width=6),
    Column("speed", "Speed", unit="Gb/s", kind="gbps", width=6), Column("ber", "BER", kind="ber", width=8),
    Column("errors", "Symbol errors", kind="int", width=7), Column("up", "Up", kind="bool", width=4),
    Column("checked", "Checked", kind="date", width=9), Column("load", "Load", unit="%", kind="percent", width=5),
    Column("size", "Size", kind="bytes", width=6), Column("took", "Took", unit="s", kind="seconds", width=5),
    Column("note", "Note", width=20),
]


def _cable_rows(count: int):
    for index in range(count):
        label = FORMULA_LABEL if index == 0 else f"C{index + 1:05d}"
        verified = "2026-11-20T10:00:00+00:00" if index % 3 else None
        yield [label, f"gpu-{index // 8 + 1:03d}:p{index % 8 + 1}", f"leaf-{index % 32 + 1:02d}:p{index % 64 + 1}",
               "AOC 400G", 3.0 + index % 7, verified, "Tess Tech" if verified else None,
               ("scan", "fabric", "both")[index % 3] if verified else ""]


def _link_rows(count: int):
    for index in range(count):
        verdict = "fail" if index < 2 else ("warn" if index < 5 else "pass")
        ber = 1.5e-254 if verdict == "pass" else 3.2e-9
        yield [f"gpu-{index // 8 + 1:03d}:p{index % 8 + 1}", verdict, 41.5 + index % 9, 3.29, -2.1 - index % 3 / 10,
               400.0, ber, 0 if verdict == "pass" else 1234, verdict != "fail", "2026-11-21", 12.5,
               1 << 30, 4.25, "Rx power low on lane 3" if verdict == "fail" else ""]


BANDWIDTH_COLUMNS = [
    Column("link", "Link", width=22), Column("path", "Path", width=10),
    Column("measured", "Measured", unit="Gb/s", kind="gbps", width=8),
    Column("line_rate", "Line rate", unit="Gb/s", kind="gbps", width=8),
    Column("share", "Of line rate", unit="%", kind="percent", width=7),
    Column("verdict", "Verdict", kind="verdict", width=7),
]


def _bandwidth_rows(count: int):
    for index in range(count):
        measured = 180.0 if index == 0 else 392.5 - index % 5
        yield [f"gpu-{index // 8 + 1:03d}:p{index % 8 + 1} - leaf-{index % 32 + 1:02d}",
               ("CPU path", "GPU RDMA")[index % 2], measured, 400.0, measured / 4, "fail" if index == 0 else "pass"]


def write_sample_snapshot(target, *, cables: int = 120, links: int = 60, version: int = 1,
                          bandwidth: int = 0) -> None:
    """`bandwidth`: rows of a bandwidth section (left out when 0, the default)."""
    writer = SnapshotWriter(target)
    writer.meta(sample_meta(version=version))
    writer.section("summary", "Summary", 20, Section(title="Summary", blocks=[
        Paragraph("All stages passed except soak, waived by the customer; 2 punch items open. <b>not bold</b> & co."),
        Facts(title="Results", items=[("Pass", links - 5), ("Warn", 3), ("Fail", 2),
                                      ("Average bus bandwidth (GB/s)", 382.14)]),
    ]))
    writer.section("topology", "Topology and cable plan", 40, Section(title="Topology and cable plan", blocks=[
        Chart(kind=SAMPLE_CHART, title="Links per plane", data={"values": [576, 576], "label": "planes"}),
        Chart(kind="nobody.draws-this", title="A chart no app draws", data={}),
        Table(key="cables", title="Cable map", columns=CABLE_COLUMNS, rows=_cable_rows(cables), row_count=cables,
              summary_rows=20, note=f"{CUSTOMER_NAME_ZH} cable plan"),
    ]))
    writer.section("link_health", "Physical link health", 50, Section(title="Physical link health", blocks=[
        Table(key="links", title="Ports, failures first", columns=LINK_COLUMNS, rows=_link_rows(links),
              row_count=links, summary_rows=10, verdict_column="verdict"),
    ]))
    if bandwidth:
        writer.section("bandwidth", "Bandwidth", 60, Section(title="Bandwidth", blocks=[
            Table(key="bandwidth", title="Bandwidth per link", columns=BANDWIDTH_COLUMNS,
                  rows=_bandwidth_rows(bandwidth), row_count=bandwidth, summary_rows=25, verdict_column="verdict"),
        ]))
    writer.section("signoff", "Sign-off", 100, Section(title="Sign-off", blocks=[
        Paragraph(f"Accepted for {CUSTOMER_NAME_ZH} (Galaxy AI Ltd)."),
    ]))
    writer.close()


def sample_snapshot(**kwargs) -> bytes:
    buffer = io.BytesIO()
    write_sample_snapshot(buffer, **kwargs)
    return buffer.getvalue()
