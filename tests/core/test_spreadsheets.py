"""The one Excel writer and the formula guard, read back with openpyxl."""

import io

from hypothesis import given
from hypothesis import strategies as st
from openpyxl import load_workbook

from core.spreadsheets import Column, XlsxWriter, csv_safe, csv_unsafe

FORMULAS = ['=HYPERLINK("http://x","y")', "=1+1", "+cmd|' /C calc'!A0", "-2+3", "@SUM(1)"]


def read(data: bytes):
    return load_workbook(io.BytesIO(data))


def test_text_that_starts_a_formula_is_stored_as_text():
    writer = XlsxWriter()
    sheet = writer.sheet("Cables", ["Label", "Length (m)"])
    for text in FORMULAS:
        sheet.append([text, 1.5])
    book = read(writer.save())
    cells = [row[0] for row in book["Cables"].iter_rows(min_row=2)]
    assert [c.value for c in cells] == FORMULAS
    assert {c.data_type for c in cells} == {"s"}


def test_header_frozen_filtered_widths_and_formats():
    writer = XlsxWriter()
    sheet = writer.sheet("Links", [Column("Port", 20), Column("BER", 14, "0.00E+00")])
    sheet.append(["gpu-001:ib0", 1.5e-12], verdict="fail")
    sheet.append(["gpu-002:ib0", None])
    links = read(writer.save())["Links"]
    assert [c.value for c in links[1]] == ["Port", "BER"] and links["A1"].font.bold
    assert links.freeze_panes == "A2"
    assert links.auto_filter.ref == "A1:B3"
    assert links.column_dimensions["A"].width == 20
    assert links["B2"].number_format == "0.00E+00"
    assert links["A2"].fill.fgColor.rgb.endswith("FFCDD2")


@given(st.text(max_size=40))
def test_csv_escape_round_trips_any_text(text):
    assert csv_unsafe(csv_safe(text)) == text


def test_csv_escape_leaves_no_formula_lead():
    for text in FORMULAS:
        assert csv_safe(text).startswith("'")
    assert csv_safe("gpu-001") == "gpu-001" and csv_safe(3) == 3
