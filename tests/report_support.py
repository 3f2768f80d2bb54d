"""Report sections as the acceptance report's snapshot holds them: each registered provider's section
written with the real SnapshotWriter and read back with read_snapshot, for the tests of every app's sections."""

from __future__ import annotations

import io
from collections.abc import Iterable

from projects.reports import SnapshotWriter, TableRecord, read_snapshot, report_registry


def sections_snapshot(project, keys: Iterable[str]) -> bytes:
    """The snapshot (gzip bytes) of the registered sections named in `keys`; each must have something to say."""
    keys = set(keys)
    buffer = io.BytesIO()
    writer = SnapshotWriter(buffer)
    writer.meta({})
    for registered in report_registry.sections():
        if registered.key in keys:
            section = registered.provider(project)
            assert section is not None, registered.key
            writer.section(registered.key, registered.title, registered.order, section)
    writer.close()
    return buffer.getvalue()


def sections_written(project, keys: Iterable[str]) -> dict[str, list]:
    """Section key -> its blocks read back, in order; a table is (its record, its rows as dicts by column key),
    its announced row count checked against the rows read."""
    sections = {}
    for section in read_snapshot(io.BytesIO(sections_snapshot(project, keys))).sections:
        blocks = []
        for block in section.blocks:
            if isinstance(block, TableRecord):
                keys_ = [column.key for column in block.columns]
                rows = [dict(zip(keys_, row, strict=True)) for row in block.rows]
                assert block.row_count == len(rows), block.key
                blocks.append((block, rows))
            else:
                blocks.append(block)
        sections[section.key] = blocks
    return sections


def section_titles(project, keys: Iterable[str]) -> list[tuple[str, str, int]]:
    """(key, title, order) of each section written, in the snapshot's order."""
    return [(s.key, s.title, s.order) for s in read_snapshot(io.BytesIO(sections_snapshot(project, keys))).sections]
