"""The acceptance report's Excel workbook (delivery.reports.excel), read back with openpyxl: the cover
in English and Chinese, the contents, a sheet per section and per table with its header (units included)
frozen and filtered, values equal to the snapshot's with their kind's number format, verdict fills, text
that stays text, chart data as tables (with an Excel chart), the summary edition's cut, the signed copy,
the same bytes for the same input, and a damaged snapshot that still gives a workbook.

Also the parts of the one Excel writer (core.spreadsheets) the report added: sheet names Excel accepts,
the reproducible save, the guard on every kind of cell.

No database: the snapshots are made up (tests/delivery/report_samples.py) or written by hand here."""

from __future__ import annotations

import gzip
import hashlib
import io
import zipfile
from datetime import date, datetime

import pytest
from openpyxl import load_workbook

from core.spreadsheets import Column as SheetColumn
from core.spreadsheets import XlsxWriter, sheet_title
from delivery.reports.excel import chart_tables, render_xlsx, table_sheet_name
from projects.reports import Chart, Column, Facts, Paragraph, Section, SnapshotWriter, Table, TableRecord, read_snapshot

from .report_samples import (
    CUSTOMER_NAME_ZH,
    FORMULA_LABEL,
    INTEGRATOR_NAME_ZH,
    PROJECT_NAME_ZH,
    SIGNATURE,
    sample_meta,
    sample_snapshot,
)

CABLES_SHEET = "Topology and cable… - Cable map"
LINKS_SHEET = "Physical link health - Ports"
PASS, WARN, FAIL = "C8E6C9", "FFE0B2", "FFCDD2"


def rendered(snapshot: bytes, **options) -> bytes:
    target = io.BytesIO()
    render_xlsx(io.BytesIO(snapshot), target, **options)
    return target.getvalue()


def book(snapshot: bytes | None = None, **options):
    return load_workbook(io.BytesIO(rendered(snapshot or sample_snapshot(), **options)))


def values(sheet, *, min_row: int = 1) -> list[tuple]:
    return list(sheet.iter_rows(min_row=min_row, values_only=True))


def fill_of(cell) -> str:
    return cell.fill.fgColor.rgb[-6:] if cell.fill.fill_type == "solid" else ""


def snapshot_rows(snapshot: bytes, key: str) -> list[list]:
    """The rows of the table `key` as the snapshot holds them."""
    for section in read_snapshot(io.BytesIO(snapshot)).sections:
        for block in section.blocks:
            if isinstance(block, TableRecord) and block.key == key:
                return list(block.rows)
    raise KeyError(key)


def snapshot_of(*sections: tuple[str, Section], meta: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    writer = SnapshotWriter(buffer)
    writer.meta(meta or sample_meta())
    for order, (key, section) in enumerate(sections, start=1):
        writer.section(key, section.title, order, section)
    writer.close()
    return buffer.getvalue()


# --- the layout ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def full():
    return book()


def test_sheets_follow_the_snapshot_with_a_sheet_per_table(full):
    assert full.sheetnames == ["Cover", "Contents", "Summary", "Topology and cable plan", CABLES_SHEET,
                               LINKS_SHEET, "Sign-off"]
    assert full.active.title == "Cover"


def test_contents_lists_every_sheet_with_its_rows_and_links_to_it(full):
    contents = full["Contents"]
    rows = values(contents, min_row=2)
    assert [row[1] for row in rows] == full.sheetnames[2:]
    cables = next(row for row in rows if row[1] == CABLES_SHEET)
    assert cables[:5] == ("Topology and cable plan", CABLES_SHEET, "Cable map", 120, 120)
    assert cables[5] == f"{CUSTOMER_NAME_ZH} cable plan"  # the table's note
    assert contents["B4"].hyperlink.location == f"'{CABLES_SHEET}'!A1"
    assert contents.freeze_panes == "A2" and contents.auto_filter.ref == "A1:F6"


def test_table_sheet_has_its_header_with_units_in_row_one_frozen_and_filtered(full):
    cables, links = full[CABLES_SHEET], full[LINKS_SHEET]
    assert values(cables)[0] == ("Label", "A end", "B end", "Type", "Length (m)", "Verified (UTC)", "By", "How")
    assert values(links)[0] == (
        "Port", "Verdict", "Temperature (°C)", "Voltage (V)", "Rx min (dBm)", "Speed (Gb/s)", "BER",
        "Symbol errors", "Up", "Checked", "Load (%)", "Size (bytes)", "Took (s)", "Note")
    assert all(cell.font.bold for cell in cables[1])
    assert cables.freeze_panes == "A2" and cables.auto_filter.ref == "A1:H121"
    assert links.freeze_panes == "A2" and links.auto_filter.ref == "A1:N61"
    assert cables.column_dimensions["B"].width == 16  # the column's own width
    assert cables.column_dimensions["F"].width == 17  # widened for "Verified (UTC)" and the filter button
    assert "1e-20" in links["G1"].comment.text  # what a BER below the floor means


def test_values_are_the_snapshots_with_dates_as_excel_dates_in_utc(full):
    snapshot = sample_snapshot()
    expected = []
    for row in snapshot_rows(snapshot, "cables"):
        row = [None if value == "" else value for value in row]  # an empty text is an empty cell
        if row[5]:
            assert row[5] == "2026-11-20T10:00:00+00:00"
            row[5] = datetime(2026, 11, 20, 10, 0)
        expected.append(tuple(row))
    assert len(expected) == 120 and values(full[CABLES_SHEET], min_row=2) == expected
    links = values(full[LINKS_SHEET], min_row=2)
    for written, original in zip(links, snapshot_rows(snapshot, "links"), strict=True):
        original = [None if value == "" else value for value in original]
        assert original[9] == "2026-11-21"
        original[9] = datetime(2026, 11, 21)  # openpyxl reads a date cell back as a datetime
        # openpyxl writes 16 significant digits: -2.1 - 0.2 comes back as -2.3
        assert list(written) == [pytest.approx(v, rel=1e-15) if isinstance(v, float) else v for v in original]
    assert links[10][6] == 1.5e-254  # a BER below the floor keeps its figure, for filters


def test_each_kind_has_its_number_format(full):
    cables, links = full[CABLES_SHEET], full[LINKS_SHEET]
    assert cables["E2"].number_format == "0.00" and cables["F3"].number_format == "yyyy-mm-dd hh:mm"
    assert cables["F3"].is_date
    formats = {header: cell.number_format for header, cell in zip(values(links)[0], links[3], strict=True)}
    assert formats == {
        "Port": "General", "Verdict": "General", "Temperature (°C)": "0.0", "Voltage (V)": "0.00",
        "Rx min (dBm)": "0.00", "Speed (Gb/s)": "0.0", "BER": "0.00E+00", "Symbol errors": "#,##0", "Up": "General",
        "Checked": "yyyy-mm-dd", "Load (%)": "0.0", "Size (bytes)": "#,##0", "Took (s)": "0.00", "Note": "General"}


def test_failed_and_warned_rows_are_filled_whole_and_passed_ones_in_their_verdict(full):
    links = full[LINKS_SHEET]
    assert {fill_of(cell) for cell in links[2]} == {FAIL}  # failures first: the whole row, empty cells too
    assert {fill_of(cell) for cell in links[4]} == {WARN}
    assert fill_of(links["B7"]) == PASS
    assert {fill_of(cell) for cell in links[7] if cell.column != 2} == {""}
    assert links["C2"].number_format == "0.0"  # a fill keeps the column's format


def test_formula_like_text_is_a_string_cell(full):
    cell = full[CABLES_SHEET]["A2"]
    assert cell.value == FORMULA_LABEL and cell.data_type == "s"


def test_cover_has_the_project_customer_and_integrator_in_english_and_chinese(full):
    cover = {row[0]: row[1:] for row in values(full["Cover"]) if row[0]}
    assert cover["Project"] == ("ACME 72-node cluster", PROJECT_NAME_ZH)
    assert cover["Customer"] == ("Galaxy AI Ltd", CUSTOMER_NAME_ZH)
    assert cover["Integrator"] == ("Beichen Systems", INTEGRATOR_NAME_ZH)
    assert cover["Site"][0] == "SH-DC2 hall 3" and cover["Project code"][0] == "ACME-72"
    assert cover["Start date"][0] == datetime(2026, 10, 1) and cover["Target date"][0] == datetime(2026, 12, 15)
    assert cover["GPUs"][0] == 576 and cover["Optics"][0] == 2304
    assert cover["Version"][0] == 1 and cover["Report id"][0] == sample_meta()["report"]["id"]
    assert cover["Generated (UTC)"][0] == datetime(2026, 11, 30, 9, 15)
    assert cover["Not signed"][0].startswith("This is the copy to sign")
    assert full.properties.created == datetime(2026, 11, 30, 9, 15) == full.properties.modified
    assert full.properties.creator == "Pat Manager"


def test_section_sheet_holds_paragraphs_facts_and_chart_data_with_links_to_its_tables(full):
    summary = values(full["Summary"])
    assert summary[0][0] == "Summary"
    assert ("All stages passed except soak, waived by the customer; 2 punch items open. <b>not bold</b> & co.",
            None) in summary
    assert ("Results", None) in summary and ("Average bus bandwidth (GB/s)", 382.14) in summary
    topology = full["Topology and cable plan"]
    texts = [row[0] for row in values(topology)]
    assert "Links per plane" in texts and "This chart holds no data." in texts
    assert [row[0] for row in values(topology) if isinstance(row[0], int)] == [576, 576]
    assert len(topology._charts) == 1  # openpyxl reads charts back: the bars of "Links per plane"
    link = next(cell for row in topology.iter_rows() for cell in row if cell.value == "Table: Cable map")
    assert link.hyperlink.location == f"'{CABLES_SHEET}'!A1"


# --- editions and the signed copy -----------------------------------------------------------------------


def test_summary_edition_keeps_each_tables_first_rows_and_says_how_many_more():
    summary = book(edition="summary")
    cables = values(summary[CABLES_SHEET], min_row=2)
    assert len(cables) == 22 and cables[0][0] == FORMULA_LABEL and cables[19][0] == "C00020"
    assert cables[20] == (None,) * 8
    assert cables[21][0] == "100 more rows in the full edition (120 in all)."
    assert summary[CABLES_SHEET].auto_filter.ref == "A1:H21"  # the note is outside the filter
    assert len(values(summary[LINKS_SHEET], min_row=2)) == 12
    contents = {row[1]: row for row in values(summary["Contents"], min_row=2)}
    assert contents[CABLES_SHEET][3:5] == (120, 20) and contents[LINKS_SHEET][3:5] == (60, 10)
    assert any(str(row[1]).startswith("Summary") for row in values(summary["Cover"]))


def test_signed_copy_shows_the_signature_on_the_cover_and_every_printed_page():
    signed = book(signature=SIGNATURE)
    cover = values(signed["Cover"])
    assert cover[1][0] == "Signed 2026-12-02 02:30 UTC by 李伟 Li Wei"
    fields = {row[0]: row[1] for row in cover if row[0]}
    assert fields["Signed by"] == "李伟 Li Wei" and fields["Title"] == "CTO, Galaxy AI"
    assert fields["Statement"] == "We accept the cluster as delivered."
    assert fields["Signed (UTC)"] == datetime(2026, 12, 2, 2, 30) and fields["Signed version"] == 1
    assert fields["Original PDF (SHA-256)"] == "a" * 64 and fields["Original Excel (SHA-256)"] == "b" * 64
    assert "Not signed" not in fields
    assert {sheet.oddHeader.center.text for sheet in signed} == {"Signed 2026-12-02 02:30 UTC by 李伟 Li Wei"}
    assert ("Signed by", "李伟 Li Wei") in values(signed["Sign-off"])
    assert signed.properties.modified == datetime(2026, 12, 2, 2, 30)


def test_the_same_snapshot_and_arguments_give_the_same_bytes():
    snapshot = sample_snapshot()
    first = rendered(snapshot)
    assert hashlib.sha256(rendered(snapshot)).hexdigest() == hashlib.sha256(first).hexdigest()
    assert rendered(snapshot, signature=SIGNATURE) == rendered(snapshot, signature=SIGNATURE)
    assert rendered(snapshot, signature=SIGNATURE) != first
    assert rendered(snapshot, edition="summary") != first
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        assert {info.date_time for info in archive.infolist()} == {(2026, 11, 30, 9, 15, 0)}


def test_progress_counts_the_rows_written():
    calls = []
    rendered(sample_snapshot(cables=2500, links=30), on_progress=calls.append)
    assert calls == [1000, 2000, 2530]
    calls.clear()
    rendered(sample_snapshot(cables=2500, links=30), edition="summary", on_progress=calls.append)
    assert calls == [30]


def test_an_unknown_edition_or_a_signature_of_the_wrong_type_is_refused():
    with pytest.raises(ValueError, match="edition"):
        rendered(sample_snapshot(), edition="draft")
    with pytest.raises(TypeError, match="signature"):
        rendered(sample_snapshot(), signature="Li Wei")


# --- chart data -------------------------------------------------------------------------------------------


HISTOGRAM = {"bins": [[380, 385, 2], [385, 390, 10], [390, 395, 40]], "thresholds": [[360, "fail", "fail 360"]],
             "x_title": "Gb/s", "y_title": "links"}
BER_DECADES = {"decades": [-20, -19, -18], "thresholds": [[1e-12, "warn", "warn 1e-12"]],
               "series": [{"name": "effective BER", "below_floor": 90, "counts": [0, 3, 1]},
                          {"name": "raw BER", "below_floor": 80, "counts": [5, 6, 7]}]}
NCCL = {"series": [{"name": "lowest group", "points": [[1024, 1.5], [2048, 3.0]]},
                   {"name": "highest group", "points": [[1024, 1.7], [2048, 3.3]]}]}
HEATMAP = {"labels": ["gpu-001", "gpu-002", "gpu-003"], "values": [[None], [391.5, None], [390.0, 52.5, None]],
           "unit": "Gb/s"}


def tables_of(data) -> dict[str, tuple]:
    return {table.title: (table.header, table.rows) for table in chart_tables(data)}


def test_chart_data_becomes_tables_a_reader_can_check_the_drawing_against():
    histogram = chart_tables(HISTOGRAM)
    assert [(t.title, t.header) for t in histogram] == [
        ("", []), ("bins", ["From", "To", "Count"]), ("thresholds", ["Value", "Level", "Label"])]
    assert histogram[0].rows == [["x_title", "Gb/s"], ["y_title", "links"]]
    assert histogram[1].rows == HISTOGRAM["bins"] and histogram[1].series == [2]
    decades = tables_of(BER_DECADES)
    assert decades[""] == (["decades", "effective BER", "raw BER"], [[-20, 0, 5], [-19, 3, 6], [-18, 1, 7]])
    assert decades["series"] == (["name", "below_floor"], [["effective BER", 90], ["raw BER", 80]])
    assert tables_of(NCCL)["series › points"] == (["x", "lowest group", "highest group"],
                                                   [[1024, 1.5, 1.7], [2048, 3.0, 3.3]])
    heatmap = tables_of(HEATMAP)["values"]
    assert heatmap[0] == ["", "gpu-001", "gpu-002", "gpu-003"]
    assert heatmap[1][2] == ["gpu-003", 390.0, 52.5, None]


def test_chart_data_is_bounded_and_never_fails():
    big = chart_tables({"values": [[1] * 1000 for _ in range(1000)]})
    assert sum(len(t.rows) * len(t.rows[0]) for t in big) <= 100_000 and big[0].left_out == 900
    assert chart_tables({}) == [] and chart_tables(None) == []
    assert chart_tables(7)[0].rows == [[7]]
    deep: dict = {}
    node = deep
    for _ in range(50):
        node["next"] = {"x": 1}
        node = node["next"]
    assert len(chart_tables(deep)) <= 6
    mixed = chart_tables({"a": [1, "two", [3], {"four": 4}], "b": [[{"x": 1}]]})
    assert mixed[0].rows == [[1], ["two"], ["3"], ['{"four":4}']]


def test_charts_write_their_data_and_an_excel_chart_beside_it():
    snapshot = snapshot_of(("bandwidth", Section(title="Bandwidth", blocks=[
        Chart(kind="validation.histogram", title="GPU RDMA per link", data=HISTOGRAM, caption="Against 400 Gb/s."),
        Chart(kind="validation.nccl_curve", title="NCCL", data=NCCL),
        Chart(kind="validation.heatmap", title="Matrix", data=HEATMAP),
    ])))
    sheet = book(snapshot)["Bandwidth"]
    rows = values(sheet)
    assert ("Against 400 Gb/s.", None, None, None) in rows
    assert ("From", "To", "Count", None) in rows and (385, 390, 10, None) in rows
    assert ("x", "lowest group", "highest group", None) in rows
    assert ("gpu-003", 390, 52.5, None) in rows
    kinds = sorted(type(chart).__name__ for chart in sheet._charts)
    assert kinds == ["BarChart", "LineChart"]  # the heat map is a table only


# --- hostile or damaged snapshots ---------------------------------------------------------------------------


def test_hostile_text_and_values_still_give_a_workbook():
    columns = [Column("label", "Label"), Column("when", "When", kind="datetime"), Column("day", "Day", kind="date"),
               Column("n", "N", kind="int"), Column("verdict", "Verdict", kind="verdict")]
    rows = [
        ["bell\x07 and nul\x00", "not a time", "31/12/2026", "many", "PASS?"],
        ["#N/A", "1066-10-14T09:00:00", "0999-01-01", 3, "fail"],
        ["@SUM(1)", "2026-11-20T18:00:00+08:00", "2026-11-20T23:00:00", 2**70, None],
    ]
    snapshot = snapshot_of(("odd", Section(title="Odd: [a]/b*?", blocks=[
        Table(key="t", title="Rows", columns=columns, rows=iter(rows), row_count=3, verdict_column="verdict"),
        Table(key="t2", title="Rows", columns=columns, rows=iter([]), row_count=0),
        Facts(items=[("Nested", {"a": [1]})]),
        Paragraph("=1+1\nsecond line"),
    ])), meta={"report": {"generated_at": "not a date"}, "project": "not a dict"})
    workbook = book(snapshot)
    assert workbook.sheetnames[2:] == ["Odd- -a--b--", "Odd- -a--b-- - Rows", "Odd- -a--b-- - Rows (2)"]
    sheet = workbook["Odd- -a--b-- - Rows"]
    written = values(sheet, min_row=2)
    assert written[0] == ("bell\ufffd and nul\ufffd", "not a time", "31/12/2026", "many", "PASS?")
    assert written[1][:3] == ("#N/A", "1066-10-14T09:00:00", "0999-01-01") and sheet["A3"].data_type == "s"
    assert written[2][1:3] == (datetime(2026, 11, 20, 10, 0), datetime(2026, 11, 20))
    assert {fill_of(cell) for cell in sheet[3]} == {FAIL}
    own = [row[:2] for row in values(workbook["Odd- -a--b--"])]
    assert ("=1+1", None) in own and ("second line", None) in own and ("Nested", "{'a': [1]}") in own
    assert workbook["Odd- -a--b--"]["A" + str(own.index(("=1+1", None)) + 1)].data_type == "s"


def test_a_damaged_row_is_written_as_far_as_it_goes():
    lines = [b'{"t":"meta","schema":1}', b'{"t":"section","key":"s","title":"S","order":1}',
             b'{"t":"table","key":"t","title":"T","row_count":3,"summary_rows":1,'
             b'"columns":[{"key":"a","label":"A","unit":"","kind":"float","width":5},'
             b'{"key":"b","label":"B","unit":"","kind":"text","width":5}]}',
             b'{"t":"row","v":[1.5,"x","extra"]}', b'{"t":"row","v":"lonely"}', b'{"t":"row","v":[{"k":[1]}]}',
             b'{"t":"facts","title":"F","items":[["Only a label"],"not a pair",["Nested",{"a":1}]]}',
             b'{"t":"end"}']
    snapshot = gzip.compress(b"\n".join(lines) + b"\n", mtime=0)
    workbook = book(snapshot)
    assert values(workbook["S - T"], min_row=2) == [(1.5, "x"), ("lonely", None), ('{"k": [1]}', None)]
    facts = [row[:2] for row in values(workbook["S"])]
    assert ("Only a label", None) in facts and ("Nested", '{"a": 1}') in facts


# --- the Excel writer's additions (core.spreadsheets) -----------------------------------------------------


def test_sheet_names_are_what_excel_accepts_and_unique():
    assert sheet_title("a/b\\c?d*e:f[g]h") == "a-b-c-d-e-f-g-h"
    assert sheet_title("'quoted'") == "quoted" and sheet_title("   ") == "Sheet"
    assert sheet_title("History") == "History (2)"  # a name Excel keeps for itself
    assert sheet_title("Cables", ["cables"]) == "Cables (2)"
    assert sheet_title("x" * 40) == "x" * 30 + "…"
    assert sheet_title("x" * 40, ["x" * 30 + "…"]) == "x" * 26 + "… (2)"
    assert table_sheet_name("Physical link health", "Ports, failures first") == "Physical link health - Ports"
    assert table_sheet_name("Topology and cable plan", "Cable map") == "Topology and cable… - Cable map"


def test_a_writer_with_a_creation_time_saves_the_same_bytes_every_time():
    def workbook() -> bytes:
        writer = XlsxWriter(created=datetime(2026, 1, 2, 3, 4, 5))
        sheet = writer.sheet("Links", [SheetColumn("Port", 20), SheetColumn("When", 16, "yyyy-mm-dd")])
        sheet.append(["gpu-001:ib0", date(2026, 1, 1)], verdict="fail")
        return writer.save()

    first = workbook()
    assert workbook() == first
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        assert {info.date_time for info in archive.infolist()} == {(2026, 1, 2, 3, 4, 4)}  # zip: 2-second steps


def test_shared_cells_keep_each_columns_style_and_the_guard():
    writer = XlsxWriter()
    sheet = writer.sheet("S", [SheetColumn("A"), SheetColumn("B", 10, "0.00"), SheetColumn("C", 10, "yyyy-mm-dd")])
    sheet.append(["=1+1", "=2+2", datetime(2026, 1, 1)], fills={0: "pass"})
    sheet.append(["#REF!", 1.5, date(2026, 1, 2)])
    sheet.append(["plain", datetime(2026, 1, 3), "text"], verdict="warn")  # a date where numbers go
    sheet.append([None, 2.25, None], fills={1: "fail"})
    read = load_workbook(io.BytesIO(writer.save()))["S"]
    assert [(c.value, c.data_type) for c in read[2]][:2] == [("=1+1", "s"), ("=2+2", "s")]
    assert read["A3"].data_type == "s" and read["A3"].value == "#REF!"
    assert fill_of(read["A2"]) == PASS and fill_of(read["B2"]) == "" and read["B3"].number_format == "0.00"
    assert read["B4"].is_date and read["B4"].value == datetime(2026, 1, 3) and fill_of(read["B4"]) == WARN
    assert read["C4"].value == "text" and fill_of(read["C4"]) == WARN
    assert fill_of(read["B5"]) == FAIL and read["B5"].number_format == "0.00" and fill_of(read["B3"]) == ""


def test_a_plain_date_keeps_its_format_to_itself():
    writer = XlsxWriter()
    sheet = writer.sheet("S", ["When", "Count"])
    sheet.append([datetime(2026, 1, 1, 12), 5])
    sheet.append([7, 8])
    read = load_workbook(io.BytesIO(writer.save()))["S"]
    assert read["A2"].value == datetime(2026, 1, 1, 12) and read["A2"].is_date
    assert [read[c].number_format for c in ("B2", "A3", "B3")] == ["General"] * 3
