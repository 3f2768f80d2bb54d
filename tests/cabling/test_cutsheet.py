"""The cut sheet, read back with openpyxl: header, frozen pane, auto filter, a known cable's row (a
breakout with two legs), the BOM counts, the filters, and that it is built in a constant number of
queries."""

import io

import pytest
from openpyxl import load_workbook

from cabling.exports.cutsheet import CABLE_COLUMNS, END_COLUMNS, cable_header, cutsheet_xlsx
from cabling.filters import CableFilterSet
from cabling.models import Cable
from cabling.selectors import cable_list
from tests.support import count_queries

from .conftest import NODE_OPTIC, SWITCH_OPTIC

pytestmark = pytest.mark.django_db


def workbook_for(user, project, **filters):
    cables = CableFilterSet(filters or None, queryset=cable_list(user=user, project=project)).qs
    return load_workbook(io.BytesIO(cutsheet_xlsx(cables)))


def rows_by_label(sheet) -> dict[str, dict]:
    header, *rows = sheet.iter_rows(values_only=True)
    return {row[0]: dict(zip(header, row, strict=True)) for row in rows}


def bom_section(sheet, title: str) -> list[tuple]:
    """The rows under a section title of the BOM sheet (after its header row), up to the blank line."""
    rows = list(sheet.iter_rows(values_only=True))
    start = next(i for i, row in enumerate(rows) if row and row[0] == title) + 2
    section = []
    for row in rows[start:]:
        if not row or all(v is None for v in row):
            break
        section.append(tuple(v for v in row if v is not None))
    return section


def test_cables_sheet_header_frozen_pane_filter_and_widths(fabric, manager):
    book = workbook_for(manager, fabric.project)
    assert book.sheetnames == ["Cables", "BOM"]
    sheet = book["Cables"]
    header = [c.value for c in sheet[1]]
    # The widest breakout has two legs: A, B1 and B2, each with the same seven columns.
    assert header == [*CABLE_COLUMNS, *(f"{leg} {col}" for leg in ("A", "B1", "B2") for col in END_COLUMNS)]
    assert header[:6] == ["Label", "Network", "Plane", "Type", "Length (m)", "Speed (Gb/s)"]
    assert "B2 optic part" in header and "B3 rack" not in header
    assert sheet.freeze_panes == "A2"
    assert sheet.auto_filter.ref == f"A1:AC{1 + 8}"  # 29 columns, 8 cables of the project
    assert sheet.column_dimensions["A"].width >= 10 and sheet.column_dimensions["K"].width >= 15  # A device


def test_a_breakout_row_has_every_leg_and_a_plain_row_leaves_b2_empty(fabric, customer):
    rows = rows_by_label(workbook_for(customer, fabric.project)["Cables"])
    assert list(rows) == ["C00001", "C00002", "C00003", "C00004", "C00005", "C00006", "C00007", "O00001"]
    breakout = rows["C00005"]
    assert (breakout["Network"], breakout["Plane"], breakout["Type"], breakout["Length (m)"],
            breakout["Speed (Gb/s)"], breakout["Status"]) == ("compute", None, "fiber", 7.0, 400, "planned")
    assert [breakout[f"A {c}"] for c in END_COLUMNS] == ["A01", 30, "gpu-003", "ib0", None, None, NODE_OPTIC]
    assert [breakout[f"B1 {c}"] for c in END_COLUMNS] == ["N01", 1, "leaf-01", "p3", None, 0, SWITCH_OPTIC]
    assert [breakout[f"B2 {c}"] for c in END_COLUMNS] == ["N01", 2, "leaf-02", "p3", None, 1, SWITCH_OPTIC]
    lane = rows["C00002"]  # a node lane: lane and plane of the A end come from the port
    assert [lane[f"A {c}"] for c in END_COLUMNS] == ["A01", 10, "gpu-001", "ib0/1", 1, 1, NODE_OPTIC]
    assert [lane[f"B1 {c}"] for c in ("rack", "U (top)", "device", "port")] == ["N01", 2, "leaf-02", "p1"]
    assert all(lane[f"B2 {c}"] is None for c in END_COLUMNS)
    assert rows["O00001"]["A port"] == "bmc" and rows["O00001"]["A optic part"] is None
    assert "C00001-FOREIGN" not in rows


def test_bom_counts_cables_optics_and_switches(fabric, manager):
    sheet = workbook_for(manager, fabric.project)["BOM"]
    assert bom_section(sheet, "Cables") == [
        ("compute", "fiber", 7.0, 2, 1),  # the breakout: no plane of its own, two legs
        ("compute", 0, "aoc", 3.0, 1, 1),
        ("compute", 0, "fiber", 5.0, 1, 2),
        ("compute", 1, "aoc", 3.0, 1, 1),
        ("compute", 1, "fiber", 5.0, 1, 2),
        ("oob", "cat6", 3.0, 1, 1),
    ]
    # One optic per end that names a part: 5 A ends; 4 single B ends + 2 breakout legs.
    assert bom_section(sheet, "Optics") == [(NODE_OPTIC, 5), (SWITCH_OPTIC, 6)]
    assert bom_section(sheet, "Switches") == [
        ("Example Switch 8x800G", "TEST-SW-8", "leaf", 2),
        ("Example Switch 8x800G", "TEST-SW-8", "spine", 1),
    ]


def test_filters_by_network_and_rack(fabric, manager):
    rows = rows_by_label(workbook_for(manager, fabric.project, network="oob")["Cables"])
    assert list(rows) == ["O00001"]
    # Without a breakout in the selection the sheet has A and B1 only.
    header = [c.value for c in workbook_for(manager, fabric.project, network="oob")["Cables"][1]]
    assert header == cable_header(1) and "B2 rack" not in header
    # A rack selects cables with either end in it: N01 holds every switch, so every cable but none else.
    book = workbook_for(manager, fabric.project, rack="N01", plane="1")
    assert list(rows_by_label(book["Cables"])) == ["C00002", "C00004", "C00007"]
    assert bom_section(book["BOM"], "Optics") == [(NODE_OPTIC, 2), (SWITCH_OPTIC, 2)]


def test_text_that_looks_like_a_formula_stays_text(fabric, manager):
    Cable.objects.filter(pk=fabric.c1.pk).update(part_number="=HYPERLINK(1)")
    rows = rows_by_label(workbook_for(manager, fabric.project)["Cables"])
    assert rows["C00001"]["Part number"] == "=HYPERLINK(1)"


def test_cutsheet_query_count_does_not_grow_with_cables(project, manager, add_cables):
    def queries() -> int:
        return count_queries(lambda: cutsheet_xlsx(cable_list(user=manager, project=project)))

    add_cables(project, 5, 0)
    few = queries()
    add_cables(project, 45, 5)
    assert queries() == few == 2  # the widest breakout, then every cable with its ends in one query
    rows = rows_by_label(workbook_for(manager, project)["Cables"])
    assert len(rows) == 50 and rows["Q00049"]["B1 device"] == "qb-005"
