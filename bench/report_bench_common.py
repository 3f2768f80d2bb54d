"""What the report benchmarks share: a synthetic snapshot the size of a cluster, and the floor an Excel
renderer is measured against (openpyxl's write-only mode writing the same table rows and nothing else)."""

from __future__ import annotations

from pathlib import Path

CABLES_PER_SERVER = 24  # 24,576 for 1,024 servers
LINKS_PER_SERVER = 48  # both ends of the server links and the fabric's: about 49,000
BANDWIDTH_PER_SERVER = 16  # 16,384: CPU path and GPU RDMA per server port


def write_snapshot(path: Path, servers: int) -> dict:
    """A synthetic snapshot (tests/delivery/report_samples.py) with the table rows of `servers` servers."""
    from tests.delivery.report_samples import write_sample_snapshot

    sizes = {"cables": servers * CABLES_PER_SERVER, "links": servers * LINKS_PER_SERVER,
             "bandwidth": servers * BANDWIDTH_PER_SERVER}
    with path.open("wb") as target:
        write_sample_snapshot(target, **sizes)
    return sizes


def openpyxl_floor(snapshot, output) -> int:
    """Every table row of the snapshot written to a write-only workbook, a sheet per table, header and values
    only: no styles, no formats, no formula guard, no cover. Returns the rows written."""
    from openpyxl import Workbook

    from projects.reports import TableRecord, read_snapshot

    workbook, rows = Workbook(write_only=True), 0
    with open(snapshot, "rb") as source:
        for section in read_snapshot(source).sections:
            for block in section.blocks:
                if isinstance(block, TableRecord):
                    sheet = workbook.create_sheet(f"{len(workbook.worksheets) + 1}")
                    sheet.append([column.header for column in block.columns])
                    for row in block.rows:
                        sheet.append(row)
                        rows += 1
    workbook.save(output)
    return rows
