"""The acceptance report's snapshot format (projects.reports): what is written is read back in order, in one
pass, and a damaged or dishonest snapshot is refused with the line or table at fault."""

from __future__ import annotations

import gzip
import io

import pytest

from projects.reports import (
    Chart,
    Column,
    Facts,
    Paragraph,
    ReportRegistry,
    Section,
    SnapshotError,
    SnapshotWriter,
    Table,
    TableRecord,
    read_snapshot,
)

from .report_samples import CUSTOMER_NAME_ZH, FORMULA_LABEL, sample_snapshot


def _written(*sections, meta=None) -> bytes:
    buffer = io.BytesIO()
    writer = SnapshotWriter(buffer)
    writer.meta(meta or {"project": {"code": "X"}})
    for index, section in enumerate(sections):
        writer.section(f"s{index}", section.title, index, section)
    writer.close()
    return buffer.getvalue()


def _table(rows, *, row_count=None) -> Table:
    return Table(key="t", title="T", columns=[Column("a", "A"), Column("n", "N", unit="m", kind="float")],
                 rows=iter(rows), row_count=len(rows) if row_count is None else row_count)


def test_blocks_come_back_in_order_with_their_values():
    records = read_snapshot(io.BytesIO(sample_snapshot(cables=30, links=12)))
    assert records.meta["project"]["customer_name_zh"] == CUSTOMER_NAME_ZH
    seen = []
    for section in records.sections:
        for block in section.blocks:
            seen.append((section.key, type(block).__name__))
            if isinstance(block, TableRecord) and block.key == "cables":
                rows = list(block.rows)
                assert len(rows) == block.row_count == 30
                assert rows[0][0] == FORMULA_LABEL  # data, stored as it is
                assert block.columns[4].header == "Length (m)"
    assert seen == [
        ("summary", "Paragraph"), ("summary", "Facts"),
        ("topology", "Chart"), ("topology", "Chart"), ("topology", "TableRecord"),
        ("link_health", "TableRecord"), ("signoff", "Paragraph"),
    ]


def test_unread_rows_and_blocks_are_skipped():
    records = read_snapshot(io.BytesIO(sample_snapshot(cables=50, links=20)))
    titles = [section.title for section in records.sections]  # no block read at all
    assert titles == ["Summary", "Topology and cable plan", "Physical link health", "Sign-off"]


def test_same_records_give_the_same_bytes():
    assert sample_snapshot(cables=40) == sample_snapshot(cables=40)
    assert sample_snapshot(cables=40) != sample_snapshot(cables=41)


def test_values_are_json_scalars():
    import datetime

    data = _written(Section(title="S", blocks=[
        _table([["x", float("nan")], ["y", float("inf")], [datetime.date(2026, 12, 1), 2.5]]),
        Facts(items=[("when", datetime.datetime(2026, 12, 1, 9, 30))]),
    ]))
    blocks = list(next(read_snapshot(io.BytesIO(data)).sections).blocks)
    # Blocks are one-pass: the table's rows were skipped when the next block was read.
    assert blocks[1].items == [("when", "2026-12-01T09:30:00")]
    table = next(next(read_snapshot(io.BytesIO(data)).sections).blocks)
    assert list(table.rows) == [["x", None], ["y", None], ["2026-12-01", 2.5]]


def test_a_table_that_lies_about_its_rows_is_refused():
    with pytest.raises(ValueError, match="announced 3 rows, wrote 2"):
        _written(Section(title="S", blocks=[_table([["a", 1], ["b", 2]], row_count=3)]))
    with pytest.raises(ValueError, match="row 2: 1 values for 2 columns"):
        _written(Section(title="S", blocks=[_table([["a", 1], ["b"]])]))


def test_unknown_column_kind_is_refused():
    table = Table(key="t", title="T", columns=[Column("a", "A", kind="colour")], rows=iter([]), row_count=0)
    with pytest.raises(ValueError, match="unknown kind 'colour'"):
        _written(Section(title="S", blocks=[table]))


def test_truncated_snapshot_is_refused():
    data = gzip.decompress(sample_snapshot(cables=10))
    cut = gzip.compress(data[: data.rindex(b'{"t":"end"}')])
    records = read_snapshot(io.BytesIO(cut))
    with pytest.raises(SnapshotError, match="truncated"):
        for _ in records.sections:
            pass


def test_damaged_and_foreign_snapshots_are_refused():
    with pytest.raises(SnapshotError, match="line 1"):
        read_snapshot(io.BytesIO(gzip.compress(b"not json\n")))
    with pytest.raises(SnapshotError, match="meta record"):
        read_snapshot(io.BytesIO(gzip.compress(b'{"t":"section"}\n')))
    with pytest.raises(SnapshotError, match="schema 99"):
        read_snapshot(io.BytesIO(gzip.compress(b'{"t":"meta","schema":99}\n')))


def test_registry_orders_sections_and_replaces_on_reregistration():
    registry = ReportRegistry()
    registry.register_section("b", lambda project: None, order=20, title="B")
    registry.register_section("a", lambda project: Section(title="A", blocks=[Paragraph("x")]), order=10, title="A")
    registry.register_section("b", lambda project: None, order=5, title="B again")
    assert [(s.key, s.title) for s in registry.sections()] == [("b", "B again"), ("a", "A")]
    registry.register_chart("k", lambda data, *, width, height: None)
    assert registry.chart_drawer("k") is not None and registry.chart_drawer("missing") is None


def test_chart_data_round_trips():
    data = _written(Section(title="S", blocks=[Chart(kind="k", title="T", data={"bins": [1, 2]}, caption="c")]))
    chart = next(next(read_snapshot(io.BytesIO(data)).sections).blocks)
    assert (chart.kind, chart.data, chart.caption) == ("k", {"bins": [1, 2]}, "c")


def test_a_gzip_cut_short_or_not_gzip_is_refused():
    data = sample_snapshot(cables=200)
    with pytest.raises(SnapshotError, match="damaged"):
        for section in read_snapshot(io.BytesIO(data[: len(data) // 2])).sections:
            for _ in section.blocks:
                pass
    with pytest.raises(SnapshotError, match="damaged"):
        read_snapshot(io.BytesIO(b"plain text, not gzip"))
