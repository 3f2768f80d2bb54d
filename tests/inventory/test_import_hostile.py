"""Hostile import files (issue 12, "Files that hurt"): an XLSX decompression bomb, zips of too many parts or
packed too well, archives inside archives, sheets claiming a million rows or columns, CSV files with
endless fields or rows, and files with thousands of bad rows. Each is refused (or its errors bounded)
within bounded time and memory, with one error naming the file, the sheet and the limit, and the raw
file kept on the job.

The files are built here, by hand with zipfile where a spreadsheet program would never write them: a
sheet of a few megabytes of repeated row XML packs into kilobytes, so the tests stay fast."""

import io
import os
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.urls import reverse

from core.choices import JobStatus
from inventory.imports import reader
from inventory.imports.limits import IMPORT_MAX_ERRORS, IMPORT_MAX_ROWS, ImportLimits, MiB, ReadBudget
from inventory.imports.reader import ImportFileError, read_inventory_file
from inventory.imports.services import import_job_preview, inventory_import
from inventory.models import Device, ImportJob

from . import test_import
from .test_import import DEVICE_HEADER, csv_bytes, upload, xlsx_bytes

catalogue = test_import.catalogue

SPREADSHEETML = "application/vnd.openxmlformats-officedocument.spreadsheetml"
ROOT_RELS = b"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" \
Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" \
Target="xl/workbook.xml"/></Relationships>"""
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
SHARED_STRINGS = ["name", "hardware_model", "rack", "position_u", "face", "x", "?"]
BOMB_HEADER = b"<row>" + b"".join(b'<c t="s"><v>%d</v></c>' % n for n in range(5)) + b"</row>"
# name "x", hardware_model "?", no rack, position_u "x", face "?": four errors a row (the first row three).
BOMB_ROW = b'<row><c t="s"><v>5</v></c><c t="s"><v>6</v></c><c/><c t="s"><v>5</v></c><c t="s"><v>6</v></c></row>'


def sheet_xml(rows: bytes, *, before: bytes = b"") -> bytes:
    return (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        b'<worksheet xmlns="' + MAIN.encode() + b'">' + before + b"<sheetData>" + rows + b"</sheetData></worksheet>"
    )


def workbook(sheets: dict[str, bytes], *, extra: dict[str, bytes] | None = None,
             shared_strings: list[str] = SHARED_STRINGS) -> bytes:
    """A minimal XLSX written part by part: the sheets' XML as given (titles -> XML), the shared strings,
    and any extra parts."""
    entries = "".join(
        f'<sheet name="{title}" sheetId="{n}" r:id="rId{n}"/>' for n, title in enumerate(sheets, start=1)
    )
    book = f'<workbook xmlns="{MAIN}" xmlns:r="{REL}"><sheets>{entries}</sheets></workbook>'
    rels = "".join(
        f'<Relationship Id="rId{n}" Type="{REL}/worksheet" Target="worksheets/sheet{n}.xml"/>'
        for n in range(1, len(sheets) + 1)
    )
    rels += f'<Relationship Id="rIdS" Type="{REL}/sharedStrings" Target="sharedStrings.xml"/>'
    strings = "".join(f"<si><t>{text}</t></si>" for text in shared_strings)
    overrides = "".join(
        f'<Override PartName="/xl/worksheets/sheet{n}.xml" ContentType="{SPREADSHEETML}.worksheet+xml"/>'
        for n in range(1, len(sheets) + 1)
    )
    content_types = (
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        f'<Override PartName="/xl/workbook.xml" ContentType="{SPREADSHEETML}.sheet.main+xml"/>'
        f'<Override PartName="/xl/sharedStrings.xml" ContentType="{SPREADSHEETML}.sharedStrings+xml"/>'
        f"{overrides}</Types>"
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", content_types)
        archive.writestr("_rels/.rels", ROOT_RELS)
        archive.writestr("xl/workbook.xml", book)
        archive.writestr(
            "xl/_rels/workbook.xml.rels",
            f'<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">{rels}'
            "</Relationships>",
        )
        archive.writestr("xl/sharedStrings.xml", f'<sst xmlns="{MAIN}">{strings}</sst>')
        for n, xml in enumerate(sheets.values(), start=1):
            archive.writestr(f"xl/worksheets/sheet{n}.xml", xml)
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return out.getvalue()


def bomb(rows: int = 300_000) -> bytes:
    """The file of the finding: about 100 KB whose sheet devices unpacks to 28 MB and 300,000 rows of
    four errors each (1,199,999 in all)."""
    return workbook({"devices": sheet_xml(BOMB_HEADER + BOMB_ROW * rows)})


@pytest.fixture
def rows_read(monkeypatch):
    """How many rows the reader read (ReadBudget.row is called for every one, blank ones included)."""
    counter = {"rows": 0}
    original = ReadBudget.row

    def counting(self, cells, **where):
        counter["rows"] += 1
        return original(self, cells, **where)

    monkeypatch.setattr(ReadBudget, "row", counting)
    return counter


def refused(name: str, data, **options) -> tuple:
    """The one issue a refused file raises, with the seconds and the peak MiB (tracemalloc) it took."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        with pytest.raises(ImportFileError) as caught:
            read_inventory_file(name, data, **options)
        seconds = time.monotonic() - started
        peak = tracemalloc.get_traced_memory()[1] / MiB
    finally:
        tracemalloc.stop()
    (issue,) = caught.value.issues
    return issue, seconds, peak


# --- the XLSX bomb ---------------------------------------------------------------------------------------------


def test_the_bomb_is_refused_from_its_zip_directory_before_anything_is_unpacked(rows_read):
    data = bomb()
    assert len(data) < 150 * 1024
    assert zipfile.ZipFile(io.BytesIO(data)).getinfo("xl/worksheets/sheet1.xml").file_size > 28_000_000
    issue, seconds, peak = refused("racks.xlsx", data)
    assert str(issue).startswith("racks.xlsx sheet devices: unpacks to 28 MB from ")
    assert str(issue).endswith("as a decompression bomb does; the limit is 100 times")
    assert (issue.sheet, issue.row) == ("devices", None)
    assert rows_read["rows"] == 0
    assert seconds < 1 and peak < 5  # on HEAD: 49 s and 2.3 GB


def test_the_bomb_uploaded_fails_its_job_with_one_error_and_keeps_the_file(
    client_for, technician, project, django_capture_on_commit_callbacks, settings
):
    data = bomb()
    client = client_for(technician)
    with django_capture_on_commit_callbacks(execute=True):
        response = upload(client, project, "racks.xlsx", data)
    assert response.status_code == 302
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.FAILED
    assert [error["sheet"] for error in job.errors] == ["devices"]  # on HEAD: 1,199,999 errors
    assert "unpacks to 28 MB" in job.errors[0]["text"]
    assert (Path(settings.MEDIA_ROOT) / job.file.name).read_bytes() == data
    assert (job.finished_at - job.started_at).total_seconds() < 1  # on HEAD: 49 s
    page = client.get(reverse("imports:job", args=[project.code, job.pk]))
    assert page.context["error_count"] == 1 and len(page.content) < 100_000  # on HEAD: 132 MB of HTML
    status = client.get(reverse("api-job-status", args=[job.job_type, job.pk])).json()
    assert (status["status"], status["error_count"]) == ("failed", 1)


def test_a_bomb_packed_less_tightly_stops_at_the_row_limit_while_its_xml_streams(rows_read, settings):
    settings.IMPORT_MAX_COMPRESSION_RATIO = 10_000  # let it past the directory
    limits = ImportLimits.from_settings(settings)
    issue, seconds, peak = refused("racks.xlsx", bomb(), limits=limits)
    assert str(issue) == (
        "racks.xlsx sheet devices: more than 50,000 rows in the file (all sheets together, blank rows "
        "included); the limit is 50,000"
    )
    assert rows_read["rows"] == 0  # the XML scan stopped it before openpyxl read a row
    assert peak < 5


def test_openpyxl_stops_reading_at_the_row_limit_too(rows_read, monkeypatch):
    """The XML scan is the first guard; the rows openpyxl reads are counted as well."""
    monkeypatch.setattr(reader, "check_xlsx", lambda source, limits: None)
    limits = ImportLimits(max_compression_ratio=10_000, max_rows=5_000)
    issue, _, _ = refused("racks.xlsx", bomb(60_000), limits=limits)
    assert issue.sheet == "devices" and "more than 5,000 rows" in issue.message
    assert rows_read["rows"] == 5_001


def test_a_sheet_larger_than_the_limit_is_refused_naming_it(settings):
    settings.IMPORT_MAX_SHEET_BYTES = 1 * MiB
    data = workbook({"racks": sheet_xml(b""), "devices": sheet_xml(BOMB_HEADER + BOMB_ROW * 30_000)})
    issue, _, _ = refused("racks.xlsx", data, limits=ImportLimits.from_settings(settings))
    assert str(issue) == "racks.xlsx sheet devices: unpacks to 2.8 MB; the limit is 1 MB"


def test_a_workbook_larger_than_the_limit_in_all_is_refused():
    sheets = {kind: sheet_xml(BOMB_HEADER + BOMB_ROW * 12_000) for kind in ("racks", "devices", "nics")}
    limits = ImportLimits(max_unpacked_bytes=2 * MiB, max_compression_ratio=10_000)
    issue, _, _ = refused("inventory.xlsx", workbook(sheets), limits=limits)
    assert str(issue) == "inventory.xlsx: unpacks to 3.4 MB in all; the limit is 2 MB"


def test_a_part_packed_like_a_bomb_is_refused_whatever_it_is():
    data = workbook({"racks": sheet_xml(b"")}, extra={"xl/media/image1.png": b"\0" * (5 * MiB)})
    issue, seconds, peak = refused("racks.xlsx", data)
    assert issue.message.startswith("the part xl/media/image1.png unpacks to 5 MB from 5.0 KB (1,026 times)")
    assert "as a decompression bomb does; the limit is 100 times" in issue.message
    assert seconds < 1 and peak < 5


def test_a_zip_of_too_many_parts_is_refused_before_its_directory_is_read():
    extra = {f"xl/media/pad{n}.txt": b"." for n in range(120)}
    issue, _, _ = refused("racks.xlsx", workbook({"racks": sheet_xml(b"")}, extra=extra))
    assert str(issue) == "racks.xlsx: holds 126 files inside; the limit is 100"


def test_a_zip_whose_end_record_understates_its_parts_is_refused_by_its_directory_size():
    extra = {f"xl/media/pad{n}.txt": b"." for n in range(5_000)}
    data = bytearray(workbook({"racks": sheet_xml(b"")}, extra=extra))
    at = data.rfind(b"PK\x05\x06")
    data[at + 8:at + 12] = (6).to_bytes(2, "little") * 2  # "6 parts", over a directory of 5,006
    issue, seconds, _ = refused("racks.xlsx", bytes(data))
    assert str(issue) == "racks.xlsx: holds more than 100 files inside (its zip directory is 322 KB); the limit is 100"
    assert seconds < 1


@pytest.mark.parametrize("name", ["xl/embeddings/inner.zip", "xl/media/image1.png", "xl/media/image2.png"])
def test_an_archive_inside_the_archive_is_refused(name):
    inner = {
        "xl/embeddings/inner.zip": b"anything",
        "xl/media/image1.png": workbook({"racks": sheet_xml(b"")}),  # a zip, whatever its name says
        "xl/media/image2.png": b"\x1f\x8b\x08\x00" + b"gzip" * 100,
    }[name]
    issue, _, _ = refused("racks.xlsx", workbook({"racks": sheet_xml(b"")}, extra={name: inner}))
    assert str(issue) == f"racks.xlsx: holds another archive inside ({name}); an inventory workbook holds none"


def test_a_row_far_down_the_sheet_counts_as_every_row_above_it(rows_read):
    rows = BOMB_HEADER + b'<row r="1048576"><c r="A1048576" t="s"><v>5</v></c></row>'
    issue, seconds, peak = refused("racks.xlsx", workbook({"devices": sheet_xml(rows)}))
    assert issue.sheet == "devices" and "more than 50,000 rows" in issue.message
    assert rows_read["rows"] == 0 and seconds < 1 and peak < 5


def test_a_value_far_to_the_right_is_refused_by_its_column():
    rows = BOMB_HEADER + b'<row r="2"><c r="A2" t="s"><v>5</v></c><c r="XFD2" t="s"><v>5</v></c></row>'
    issue, _, _ = refused("racks.xlsx", workbook({"devices": sheet_xml(rows)}))
    assert str(issue) == "racks.xlsx sheet devices row 2: a value in column 16,384; the limit is 50 columns"


def test_a_row_of_more_cells_than_a_sheet_has_is_refused_as_it_streams():
    rows = BOMB_HEADER + b"<row>" + b"<c/>" * 20_000 + b"</row>"
    issue, _, peak = refused("racks.xlsx", workbook({"devices": sheet_xml(rows)}))
    assert str(issue) == "racks.xlsx sheet devices row 2: more than 16,384 cells in one row, more than a sheet has"
    assert peak < 5


def test_a_workbook_of_too_many_cells_is_refused():
    rows = BOMB_HEADER + b"<row>" + b'<c t="s"><v>5</v></c>' * 5 + b"</row>" * 1
    issue, _, _ = refused("racks.xlsx", workbook({"devices": sheet_xml(rows * 3)}), limits=ImportLimits(max_cells=20))
    assert issue.sheet == "devices"
    assert issue.message == "more than 20 cells in the file (all sheets together); the limit is 20"


def test_a_sheet_that_claims_a_huge_dimension_reads_only_what_it_holds(rows_read):
    rows = BOMB_HEADER.replace(b"<row>", b'<row r="1">') + b'<row r="2"><c r="A2" t="s"><v>5</v></c></row>'
    data = workbook({"devices": sheet_xml(rows, before=b'<dimension ref="A1:XFD1048576"/>')})
    (sheet,) = read_inventory_file("devices.xlsx", data)
    assert [row.values["name"] for row in sheet.rows] == ["x"]
    assert rows_read["rows"] == 2


LAUGHS = (
    b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;">]>'
    b'<worksheet xmlns="' + MAIN.encode() + b'"><sheetData><row><c t="inlineStr"><is><t>&lol2;</t></is></c>'
    b"</row></sheetData></worksheet>"
)


def test_a_sheet_declaring_entities_is_not_read():
    issue, _, _ = refused("racks.xlsx", workbook({"devices": LAUGHS}))
    assert str(issue) == "racks.xlsx: not a readable XLSX workbook"


def test_a_file_larger_than_the_upload_limit_is_refused_unread(rows_read):
    data = csv_bytes(DEVICE_HEADER, *["gpu,X"] * 1000)
    assert len(data) == 6082
    issue, _, _ = refused("racks.csv", data, limits=ImportLimits(max_file_bytes=1024))
    assert str(issue) == "racks.csv: the file is 5.9 KB; the limit is 1 KB"
    assert rows_read["rows"] == 0


# --- CSV -----------------------------------------------------------------------------------------------------


def test_a_csv_with_a_10_mb_field_is_refused_without_holding_it(rows_read):
    data = DEVICE_HEADER.encode() + b"\ngpu-001," + b"A" * (10 * MiB) + b"\n"
    issue, seconds, peak = refused("devices.csv", io.BytesIO(data))
    assert str(issue) == (
        "devices.csv row 2: the line is longer than 500,150 characters (50 columns of at most 10,000 "
        "characters)"
    )
    assert rows_read["rows"] == 1 and seconds < 2 and peak < 5


def test_a_csv_field_quoted_over_many_lines_is_refused_at_the_field_limit():
    data = DEVICE_HEADER.encode() + b'\ngpu-001,"' + b"A\n" * (5 * MiB // 2) + b'"\n'
    issue, _, peak = refused("devices.csv", io.BytesIO(data))
    assert str(issue) == "devices.csv row 2: a cell holds more than 10,000 characters; the limit is 10,000"
    assert peak < 5


def test_a_csv_cell_over_the_cell_limit_is_refused_naming_its_column():
    data = csv_bytes(DEVICE_HEADER, "gpu-001,TEST," + "R" * 20_000)
    issue, _, _ = refused("devices.csv", data)
    assert str(issue) == "devices.csv row 2: the cell in column 3 holds 20,000 characters; the limit is 10,000"


def test_a_csv_of_200000_rows_stops_reading_at_the_row_limit(rows_read):
    data = csv_bytes(DEVICE_HEADER, *[f"gpu-{n},TEST-B300-8GPU" for n in range(200_000)])
    started = time.monotonic()
    with pytest.raises(ImportFileError) as caught:
        read_inventory_file("devices.csv", io.BytesIO(data))
    (issue,) = caught.value.issues
    assert str(issue) == "devices.csv: more than 50,000 rows in the file (all sheets together); the limit is 50,000"
    assert rows_read["rows"] == IMPORT_MAX_ROWS + 1
    assert time.monotonic() - started < 20


def test_a_csv_of_endless_blank_lines_stops_too(rows_read):
    issue, _, peak = refused("devices.csv", io.BytesIO(DEVICE_HEADER.encode() + b"\n" * (3 * MiB)))
    assert "more than 50,000 rows" in issue.message
    assert rows_read["rows"] == IMPORT_MAX_ROWS + 1 and peak < 20


def test_a_csv_row_of_too_many_columns_is_refused():
    issue, _, _ = refused("devices.csv", csv_bytes(DEVICE_HEADER, "gpu-1,X" + ",y" * 99))
    assert str(issue) == "devices.csv row 2: 101 columns; the limit is 50"


def test_a_csv_read_as_it_streams_still_reads_every_row():
    data = csv_bytes(DEVICE_HEADER, *[f"gpu-{n:03d},TEST-B300-8GPU,,,,,,,," for n in range(300)])
    (sheet,) = read_inventory_file("devices.csv", io.BytesIO(data), limits=ImportLimits())
    assert [row.number for row in sheet.rows] == list(range(2, 302))
    assert sheet.rows[-1].values["name"] == "gpu-299"


# --- errors: bounded, with how many more ---------------------------------------------------------------------


def bad_rows(count: int) -> bytes:
    """A devices file of `count` rows, each one error (an unknown hardware model)."""
    return csv_bytes("name,hardware_model", *[f"gpu-{n:05d},NO-SUCH-MODEL" for n in range(count)])


def test_10000_bad_rows_keep_200_errors_and_say_how_many_more(project, catalogue):
    result = inventory_import(project=project, filename="devices.csv", data=bad_rows(10_000), dry_run=True)
    assert result.error_count == 10_000
    assert len(result.issues) == IMPORT_MAX_ERRORS
    assert str(result.issues[0]) == (
        'devices.csv row 2, column hardware_model: unknown hardware model "NO-SUCH-MODEL" (give its part number)'
    )
    assert str(result.issues[-1]) == "devices.csv: ... and 9,801 more errors, not listed"
    assert result.issues[-1].more == 9_801
    assert len(result.plan.issues) == IMPORT_MAX_ERRORS  # never more kept in memory either


def test_the_error_limit_is_a_setting(project, catalogue, settings):
    settings.IMPORT_MAX_ERRORS = 3
    result = inventory_import(project=project, filename="devices.csv", data=bad_rows(10), dry_run=True)
    assert [issue.row for issue in result.issues] == [2, 3, None]
    assert str(result.issues[-1]) == "devices.csv: ... and 8 more errors, not listed"


def test_exactly_the_limit_of_errors_has_no_more_line(project, catalogue):
    result = inventory_import(project=project, filename="devices.csv", data=bad_rows(IMPORT_MAX_ERRORS), dry_run=True)
    assert len(result.issues) == IMPORT_MAX_ERRORS and not any(issue.more for issue in result.issues)


def make_job(project, user, name: str, data: bytes) -> ImportJob:
    job = ImportJob(project=project, requested_by=user, original_name=name)
    job.file.save(name, ContentFile(data), save=False)
    job.save()
    return job


def test_a_job_of_10000_bad_rows_stores_200_errors_and_pages_them(client_for, project, technician, catalogue):
    job = import_job_preview(job_id=make_job(project, technician, "devices.csv", bad_rows(10_000)).pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert len(job.errors) == IMPORT_MAX_ERRORS
    assert job.errors[-1] == {
        "file": "devices.csv", "sheet": "", "row": None, "column": "", "more": 9_801,
        "message": "... and 9,801 more errors, not listed",
        "text": "devices.csv: ... and 9,801 more errors, not listed",
    }
    client = client_for(technician)
    url = reverse("imports:job", args=[project.code, job.pk])
    first = client.get(url).context
    assert first["error_count"] == 10_000
    assert first["errors_page"].paginator.num_pages == 4
    assert [e["row"] for e in first["errors_page"]] == list(range(2, 52))
    last = client.get(url, {"page": 4}).context["errors_page"]
    assert last.object_list[-1]["more"] == 9_801 and len(last.object_list) == 50
    assert client.get(url, {"page": "nonsense"}).context["errors_page"].number == 1
    body = client.get(url).content.decode()
    assert "10000 errors: nothing was imported" in body and "page 1 of 4" in body
    assert body.count("<td>devices.csv</td>") == 50  # one page of rows, not the 200 kept


def test_a_job_refused_for_a_limit_keeps_its_raw_file(project, technician, settings):
    settings.IMPORT_MAX_ROWS = 10
    data = bad_rows(50)
    job = import_job_preview(job_id=make_job(project, technician, "devices.csv", data).pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED
    assert [e["text"] for e in job.errors] == [
        "devices.csv: more than 10 rows in the file (all sheets together); the limit is 10"
    ]
    assert (Path(settings.MEDIA_ROOT) / job.file.name).read_bytes() == data


# --- the request only stores the file ---------------------------------------------------------------------------


def test_the_upload_request_stores_the_file_and_reads_none_of_it(client_for, technician, project, monkeypatch):
    def must_not_read(*args, **kwargs):
        raise AssertionError("the upload request read the file")

    monkeypatch.setattr(reader, "read_inventory_file", must_not_read)
    from inventory.imports.services import apply

    monkeypatch.setattr(apply, "read_inventory_file", must_not_read)
    response = upload(client_for(technician), project, "racks.xlsx", bomb())  # on_commit callbacks not run
    assert response.status_code == 302
    job = ImportJob.objects.get(project=project)
    assert job.status == JobStatus.QUEUED and job.original_name == "racks.xlsx"


def test_the_upload_form_refuses_a_file_over_the_size_limit(client_for, technician, project, settings):
    settings.IMPORT_MAX_FILE_BYTES = 1024
    response = upload(client_for(technician), project, "devices.csv", bad_rows(200))
    assert response.status_code == 200
    assert response.context["form"].errors["file"] == ["The file is larger than 1 KB, the limit."]
    assert not ImportJob.objects.exists()


def test_an_ordinary_workbook_still_imports(project, catalogue):
    rows = [["name", "hardware_model"], ["gpu-001", "TEST-B300-8GPU"], ["gpu-002", "TEST-B300-8GPU"]]
    result = inventory_import(project=project, filename="devices.xlsx", data=io.BytesIO(xlsx_bytes({"devices": rows})))
    assert result.applied, [str(issue) for issue in result.issues]
    assert Device.objects.filter(project=project).count() == 2


def test_the_limits_come_from_the_settings(settings):
    settings.IMPORT_MAX_ROWS = 7
    settings.IMPORT_MAX_COMPRESSION_RATIO = 12.5
    limits = ImportLimits.from_settings(settings)
    assert (limits.max_rows, limits.max_compression_ratio, limits.max_errors) == (7, 12.5, IMPORT_MAX_ERRORS)


def test_a_bloated_styles_part_is_refused_before_openpyxl_builds_its_styles():
    styles = (
        f'<styleSheet xmlns="{MAIN}"><cellXfs count="40000">'.encode()
        + b"".join(b'<xf numFmtId="%d" fontId="0" fillId="0" borderId="0" xfId="0"/>' % n for n in range(40_000))
        + b"</cellXfs></styleSheet>"
    )
    data = workbook({"racks": sheet_xml(b"")}, extra={"xl/styles.xml": styles})
    issue, seconds, _ = refused("racks.xlsx", data, limits=ImportLimits(max_compression_ratio=10_000))
    assert str(issue) == "racks.xlsx: the part xl/styles.xml unpacks to 2.5 MB; the limit is 2 MB"
    assert seconds < 1


def test_an_image_in_a_workbook_is_held_to_the_sheet_limit_not_the_part_limit():
    data = workbook({"devices": sheet_xml(BOMB_HEADER)}, extra={"xl/media/logo.png": os.urandom(3 * MiB)})
    (sheet,) = read_inventory_file("devices.xlsx", data)
    assert (sheet.kind, sheet.rows) == ("devices", [])
