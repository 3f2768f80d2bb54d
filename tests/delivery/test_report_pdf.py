"""The acceptance report's PDF (delivery.reports.pdf), read back with poppler's pdftotext: the cover
in English and Chinese, the contents with the pages the titles really are on, the sections and tables in
snapshot order with their header on every page, values shown by their column's kind, text that is data
and never markup, the summary edition's cut, the signed copy, the same bytes for the same input, and a
damaged snapshot that still gives a report (or a clear error) rather than a crash.

No database: the snapshots are made up (tests/delivery/report_samples.py) or written by hand here."""

from __future__ import annotations

import gzip
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import subprocess

import pytest

from delivery.reports import pdf_text
from delivery.reports.pdf import render_pdf
from delivery.reports.pdf_tables import RowCounter, RowSource, RowTable, table_layout
from projects.reports import Column, SnapshotError, report_registry

from .report_samples import (
    CUSTOMER_NAME_ZH,
    FORMULA_LABEL,
    INTEGRATOR_NAME_ZH,
    PROJECT_NAME_ZH,
    SIGNATURE,
    sample_meta,
    sample_snapshot,
)

PDFTOTEXT = shutil.which("pdftotext")  # poppler-utils, with pdfinfo
PDFINFO = shutil.which("pdfinfo")
REPORT_ID = sample_meta()["report"]["id"]


def rendered(snapshot: bytes, **options) -> bytes:
    target = io.BytesIO()
    render_pdf(io.BytesIO(snapshot), target, **options)
    return target.getvalue()


def page_texts(pdf: bytes, *, layout: bool = True) -> list[str]:
    """The text of each page, as pdftotext reads it (in reading layout, or in drawing order)."""
    if not PDFTOTEXT:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail("pdftotext (poppler-utils) is required when REQUIRE_SERVICES=1")
        pytest.skip("pdftotext (poppler-utils) is not installed")
    mode = ["-layout"] if layout else ["-raw"]
    text = subprocess.run([PDFTOTEXT, *mode, "-", "-"], input=pdf, capture_output=True, check=True).stdout
    return text.decode().split("\f")[:-1]


def page_sizes(pdf: bytes) -> list[tuple[float, float]]:
    if not PDFINFO:
        pytest.skip("pdfinfo (poppler-utils) is not installed")
    info = subprocess.run([PDFINFO, "-f", "1", "-l", "100000", "-"], input=pdf, capture_output=True, check=True)
    return [(float(w), float(h)) for w, h in re.findall(r"Page +\d+ size: +([\d.]+) x ([\d.]+)", info.stdout.decode())]


def squeezed(text: str) -> str:
    return "".join(text.split())


@pytest.fixture(scope="module")
def snapshot() -> bytes:
    return sample_snapshot()


@pytest.fixture(scope="module")
def full(snapshot) -> bytes:
    return rendered(snapshot)


@pytest.fixture(scope="module")
def summary(snapshot) -> bytes:
    return rendered(snapshot, edition="summary")


@pytest.fixture(scope="module")
def signed(snapshot) -> bytes:
    return rendered(snapshot, signature=SIGNATURE)


# ---------------------------------------------------------------------------------------------------
# Cover, contents, running heads


def test_the_cover_names_the_project_customer_and_integrator_in_both_languages_with_the_figures(full):
    cover = page_texts(full)[0]
    for text in ("ACME 72-node cluster", PROJECT_NAME_ZH, "ACME-72", "Galaxy AI Ltd", CUSTOMER_NAME_ZH,
                 "Beichen Systems", INTEGRATOR_NAME_ZH, "SH-DC2 hall 3", "2026-10-01", "2026-12-15", REPORT_ID,
                 "2026-11-30 09:15 UTC by Pat Manager", "验收报告"):
        assert text in cover, text
    figures = re.search(r"Racks\s+Servers\s+GPUs\s+Switches\s+Cables\s+Optics\s*\n\s*(.+)", cover).group(1).split()
    assert figures == ["12", "72", "576", "40", "1,152", "2,304"]
    assert re.search(r"Report version\s+1\b", cover)


def test_the_contents_list_every_section_and_table_at_the_page_it_is_on(full):
    pages = page_texts(full)
    contents = dict(re.findall(r"^ *(\S.*?\S) {2,}(\d+) *$", pages[1], flags=re.M))
    assert list(contents) == ["Summary", "Topology and cable plan", "Cable map", "Physical link health",
                              "Ports, failures first", "Sign-off"]
    for title, page in contents.items():
        body = pages[int(page) - 1]
        assert re.search(rf"^ *{re.escape(title)} *$", body, flags=re.M), (title, page)
    # In snapshot order, each section on a page of its own.
    numbers = [int(page) for page in contents.values()]
    assert numbers == sorted(numbers)
    sections = [int(contents[title]) for title in ("Summary", "Topology and cable plan", "Physical link health",
                                                   "Sign-off")]
    assert len(set(sections)) == 4


def test_every_page_has_the_project_in_its_header_and_the_report_and_page_in_its_footer(full):
    pages = page_texts(full)
    assert len(pages) >= 8
    for number, text in enumerate(pages, start=1):
        lines = [line for line in text.splitlines() if line.strip()]
        assert "ACME 72-node cluster" in lines[0] and PROJECT_NAME_ZH in lines[0] and "ACME-72" in lines[0]
        assert f"Report {REPORT_ID} · version 1 · full edition" in lines[-1]
        assert f"Page {number} of {len(pages)}" in lines[-1]
        assert "Signed" not in text


def test_sections_and_tables_are_bookmarked_in_the_outline(full):
    titles = re.findall(rb"/Title \(([^)]*)\)", full)
    assert titles[0] == b"Acceptance report: ACME 72-node cluster \\(ACME-72\\"  # the document's own
    assert titles[1:] == [b"Cover", b"Contents", b"Summary", b"Topology and cable plan", b"Cable map",
                      b"Physical link health", b"Ports, failures first", b"Sign-off"]


# ---------------------------------------------------------------------------------------------------
# Blocks and values


def test_text_is_data_never_markup(full):
    pages = page_texts(full, layout=False)
    summary_page = next(page for page in pages if "All stages passed" in page)
    assert "<b>not bold</b> & co." in summary_page
    # The formula-like label wraps in its narrow column; its two lines read as the label itself.
    cable_pages = "".join(page for page in pages if "Cable map" in page)
    assert squeezed(FORMULA_LABEL) in squeezed(cable_pages)


def test_facts_charts_and_a_chart_nobody_draws(full):
    text = "\n".join(page_texts(full))
    assert re.search(r"Average bus bandwidth \(GB/s\)\s+382\.14", text)
    assert re.search(r"Pass\s+55\n", text)
    assert "Links per plane" in text and "planes" in text  # the registered drawer's own label
    assert "A chart no app draws" in text
    assert "This chart (nobody.draws-this) cannot be drawn by this version of Bringup." in text


def test_a_drawer_that_fails_leaves_a_note_and_the_rest_of_the_report(monkeypatch):
    def broken(data, *, width, height):
        raise KeyError("values")

    monkeypatch.setitem(report_registry._charts, "test.bars", broken)
    text = "\n".join(page_texts(rendered(sample_snapshot(cables=3, links=3))))
    assert "This chart could not be drawn from its data." in text
    assert "Ports, failures first" in text


def test_values_are_shown_by_their_columns_kind(full):
    pages = page_texts(full)[2:]  # after the cover and the contents
    links = next(page for page in pages if "Ports, failures first" in page)
    header = re.sub(r"\s+", " ", links)
    for label in ("Temperature (°C)", "Voltage (V)", "Rx min (dBm)", "Speed (Gb/s)", "BER", "Symbol errors"):
        assert all(word in header for word in label.split()), label
    fail_row = next(line for line in links.splitlines() if "gpu-001:p1 " in line)
    assert fail_row.split()[:12] == ["gpu-001:p1", "FAIL", "41.5", "3.29", "-2.10", "400.0", "3.2e-09", "1,234",
                                     "no", "2026-11-21", "12.5", "1.0"]
    assert "Rx power low on lane 3" in fail_row
    pass_row = next(line for line in links.splitlines() if "gpu-001:p6 " in line)
    assert "PASS" in pass_row and "< 1e-20" in pass_row and " yes " in pass_row
    cables = next(page for page in pages if "Cable map" in page)
    assert re.search(r"C00002\s+gpu-001:p2\s+leaf-02:p2\s+AOC 400G\s+4\.00\s+2026-11-20 10:00\s+Tess Tech\s+fabric",
                     cables)
    assert re.search(r"C00004\s+gpu-001:p4\s+leaf-04:p4\s+AOC 400G\s+6\.00\s+—\s+—", cables)  # None as a dash
    assert "Verified (UTC)" in re.sub(r"\s+", " ", cables)


def test_a_long_table_goes_on_over_pages_with_its_header_on_each():
    pdf = rendered(sample_snapshot(cables=400, links=3))
    pages = [page for page in page_texts(pdf) if re.search(r"\bC00\d{3}\b", page)]
    assert len(pages) >= 5
    for page in pages:
        assert re.search(r"^ *Label +A end +B end +Type +Length", page, flags=re.M)
    labels = re.findall(r"^ *(C\d{5}) ", "\n".join(pages), flags=re.M)
    assert labels == [f"C{n:05d}" for n in range(2, 401)]  # C00001 is the formula-like label


def test_a_section_with_a_wide_table_is_on_landscape_pages(full):
    pages, sizes = page_texts(full), page_sizes(full)
    assert len(pages) == len(sizes)
    for text, (width, height) in list(zip(pages, sizes, strict=True))[2:]:  # after the cover and contents
        wide = "Symbol" in text  # the link-health table's header, on each of its pages
        assert (width > height) == wide, text[:200]


def test_progress_counts_the_rows_drawn_so_far():
    reports = []
    rendered(sample_snapshot(cables=2500, links=60), on_progress=reports.append)
    assert reports == sorted(reports) and len(reports) >= 3
    assert reports[-1] == 2560


# ---------------------------------------------------------------------------------------------------
# Editions, signature, identical bytes


def test_the_summary_edition_is_shorter_and_says_how_many_rows_are_left_out(full, summary):
    full_pages, summary_pages = page_texts(full), page_texts(summary)
    assert len(summary_pages) < len(full_pages)
    text = "\n".join(summary_pages)
    assert "Showing the first 20 of 120 rows: 100 more rows in the full edition." in text
    assert "Showing the first 10 of 60 rows: 50 more rows in the full edition." in text
    assert "C00020" in text and "C00021" not in text
    assert "summary edition" in summary_pages[-1] and "Summary: the first rows of each table" in summary_pages[0]
    assert "more rows in the full edition" not in "\n".join(full_pages)


def test_the_signed_copy_says_who_signed_on_every_page_and_quotes_the_original_hashes(signed, full):
    pages = page_texts(signed)
    mark = "Signed 2026-12-02 02:30 UTC by 李伟 Li Wei"
    assert all(mark in page.splitlines()[0] for page in pages)
    signoff = pages[-1]
    assert "We accept the cluster as delivered." in signoff
    assert re.search(r"Signed by\s+李伟 Li Wei", signoff) and re.search(r"Title\s+CTO, Galaxy AI", signoff)
    assert re.search(r"Original PDF, SHA-256\s+" + "a" * 64, signoff)
    assert re.search(r"Original Excel workbook, SHA-256\s+" + "b" * 64, signoff)
    unsigned = page_texts(full)[-1]
    assert "To be signed by the customer's representative." in unsigned and "Signed by" not in unsigned


def test_the_same_snapshot_and_arguments_give_the_same_bytes(snapshot, full, summary, signed):
    assert rendered(snapshot) == full
    assert rendered(snapshot, signature=SIGNATURE) == signed
    assert rendered(snapshot, edition="summary") == summary
    assert len({hashlib.sha256(pdf).digest() for pdf in (full, summary, signed)}) == 3
    assert b"/CreationDate (D:20261130091500+00'00')" in full


def test_an_unknown_edition_is_refused(snapshot):
    with pytest.raises(ValueError, match="edition"):
        rendered(snapshot, edition="draft")


# ---------------------------------------------------------------------------------------------------
# Damaged or hostile snapshots


def _hand_written(*records: dict, meta: dict | None = None) -> bytes:
    lines = [{"t": "meta", "schema": 1, **(meta if meta is not None else sample_meta())}, *records, {"t": "end"}]
    return gzip.compress(b"".join(json.dumps(record).encode() + b"\n" for record in lines), mtime=0)


def test_a_damaged_snapshot_still_renders_what_it_can():
    columns = [{"key": "a", "label": "A <i>", "unit": "", "kind": "int", "width": -3},
               {"key": "b", "label": "B", "unit": "m", "kind": "ber", "width": "wide"},
               {"key": "c", "label": "C", "unit": "", "kind": "no-such-kind", "width": 5}]
    pdf = rendered(_hand_written(
        {"t": "section", "key": "s", "title": "<b>Section</b> &amp; " + "x" * 500, "order": 1},
        {"t": "paragraph", "text": "bell\x07 and NUL\x00 <script>"},
        {"t": "facts", "title": "", "items": [["only a label"], ["n", 12345678], ["tiny", 1.5e-9]]},
        {"t": "chart", "kind": "test.bars", "title": "Bad data", "data": {"values": "nope"}},
        {"t": "table", "key": "t", "title": "T", "row_count": 5, "summary_rows": 2, "verdict_column": "zz",
         "note": "", "columns": columns},
        {"t": "row", "v": ["12", "not a number", {"a": 1}]},
        {"t": "row", "v": [1]},
        {"t": "row", "v": [1, 2, 3, 4, 5]},
        {"t": "row", "v": [None, 0, "long " * 400]},
        meta={"report": "not a dict", "project": {"name": "Bare"}},
    ))
    text = "\n".join(page_texts(pdf))
    assert "<b>Section</b> &amp; xxx" in text and "bell and NUL <script>" in text
    assert re.search(r"n\s+12,345,678", text) and "1.5e-09" in text and "only a label" in text
    assert "This chart could not be drawn from its data." in text
    assert "not a number" in text and "{'a': 1}" in text and "< 1e-20" in text
    assert "long long" in text and "…" in text  # three lines, then cut
    assert "Report — · version — · full edition" in text


def test_a_snapshot_without_its_end_is_refused_with_a_clear_error():
    truncated = gzip.compress(json.dumps({"t": "meta", "schema": 1, **sample_meta()}).encode() + b"\n")
    with pytest.raises(SnapshotError, match="truncated"):
        rendered(truncated)


# ---------------------------------------------------------------------------------------------------
# The pieces


def test_a_table_reads_from_the_snapshot_only_the_rows_of_the_page_it_fills():
    from core.fonts import register_fonts

    read = itertools.count()
    rows = ([f"row {next(read)}", n] for n in range(10**9))
    columns = [Column("name", "Name", "", "text", 10), Column("n", "N", "", "int", 4)]
    table = RowTable(table_layout(columns, width=500, fonts=register_fonts()), RowSource(rows),
                     counter=RowCounter(None))
    width, height = table.wrap(500, 700)
    assert height > 700  # more rows to come: platypus will split it
    page, rest = table.split(500, 700)
    taken = next(read)
    assert 40 < taken < 70
    assert page.wrap(500, 700)[1] <= 700
    rest.wrap(500, 700)
    assert next(read) - taken < 70  # the next page reads the next page's rows


@pytest.mark.parametrize(("value", "kind", "shown"), [
    (None, "ber", "—"), (1.5e-254, "ber", "< 1e-20"), (0.0, "ber", "< 1e-20"), (2.3e-9, "ber", "2.3e-09"),
    (397.25, "gbps", "397.2"), (400, "gbps", "400.0"), (24576, "int", "24,576"), (3.0, "float", "3.00"),
    (41.55, "celsius", "41.5"), (3.291, "volts", "3.29"), (-2.113, "dbm", "-2.11"), (12.5, "percent", "12.5"),
    (1 << 30, "bytes", "1.0 GiB"), (512, "bytes", "512 B"), (4.25, "seconds", "4.25"), (True, "bool", "yes"),
    ("2026-11-21", "date", "2026-11-21"), ("2026-11-20T18:00:00+08:00", "datetime", "2026-11-20 10:00"),
    ("fail", "verdict", "FAIL"), ("odd", "verdict", "odd"), ("=1+1", "text", "=1+1"), ("a\x00b", "text", "a b"),
    ("n/a", "gbps", "n/a"), ("yesterday", "datetime", "yesterday"), (7, "text", "7"),
])
def test_format_value(value, kind, shown):
    assert pdf_text.format_value(value, kind) == shown


def test_markup_escapes_and_switches_faces_for_what_helvetica_lacks():
    from core.fonts import register_fonts

    regular = register_fonts().regular
    assert pdf_text.markup("<b>x</b> & y", regular) == "&lt;b&gt;x&lt;/b&gt; &amp; y"
    assert pdf_text.markup("a\nb", regular) == "a<br/>b"
    assert pdf_text.markup(PROJECT_NAME_ZH, regular) == f'<font face="NotoSansSC">{PROJECT_NAME_ZH}</font>'


def test_fit_lines_wraps_at_spaces_or_between_characters_and_cuts_with_an_ellipsis():
    from core.fonts import register_fonts

    regular = register_fonts().regular
    assert pdf_text.fit_lines("short", regular, 7, 100, 3) == ["short"]
    lines = pdf_text.fit_lines("one two three four five six seven eight nine ten", regular, 7, 40, 3)
    assert lines[:2] == ["one two", "three four"] and lines[2].endswith("…")
    chinese = pdf_text.fit_lines(CUSTOMER_NAME_ZH * 3, regular, 7, 40, 2)
    assert len(chinese) == 2 and chinese[1].endswith("…")
    assert all(regular.width(line, 7) <= 40 for line in lines + chinese)
