"""Download names that are not plain ASCII (issue 12): core.http gives every download an ASCII
`filename="..."` fallback and, when the name needs it, RFC 6266 / RFC 5987 `filename*=UTF-8''...`, so a
Chinese name survives and a name with quotes or semicolons cannot break the header. The inventory export
uses it."""

import re
from urllib.parse import unquote

import pytest
from django.http import HttpResponse
from django.urls import reverse

from core.http import ascii_filename, attachment, content_disposition
from inventory.imports.export import export_csv

HEADER = re.compile(r'^attachment; filename="(?P<fallback>[ -~]*)"(?:; filename\*=UTF-8\'\'(?P<encoded>[^\s;"]+))?$')


def parsed(value: str) -> tuple[str, str | None]:
    """(the ASCII fallback, the decoded UTF-8 name or None), refusing any header not of that one shape."""
    match = HEADER.match(value)
    assert match, value
    encoded = match["encoded"]
    return match["fallback"], unquote(encoded, encoding="utf-8", errors="strict") if encoded else None


def test_a_plain_ascii_name_gets_the_plain_parameter_alone():
    assert content_disposition("ACME-72-racks.csv") == 'attachment; filename="ACME-72-racks.csv"'


def test_a_chinese_project_name_survives_in_filename_star():
    name = "华东数据中心-机柜.csv"
    value = content_disposition(name)
    assert value == (
        'attachment; filename="download.csv"; filename*=UTF-8\'\''
        "%E5%8D%8E%E4%B8%9C%E6%95%B0%E6%8D%AE%E4%B8%AD%E5%BF%83-%E6%9C%BA%E6%9F%9C.csv"
    )
    assert parsed(value) == ("download.csv", name)
    value.encode("latin-1")  # what an HTTP header may carry


def test_a_mixed_name_keeps_its_ascii_part_in_the_fallback():
    assert parsed(content_disposition("ACME-72 华东-racks.csv")) == ("ACME-72 _-racks.csv", "ACME-72 华东-racks.csv")
    assert parsed(content_disposition("Café.xlsx")) == ("Cafe.xlsx", "Café.xlsx")


@pytest.mark.parametrize("name", [
    'Rack "A"; rm -rf.csv',
    'racks.csv"; filename="evil.exe',
    "a;b;c.csv",
    "back\\slash%20.csv",
])
def test_quotes_and_semicolons_cannot_break_the_header(name):
    value = content_disposition(name)
    fallback, decoded = parsed(value)
    assert decoded == name.replace("\\", "_")  # a path separator, on Windows
    assert not set('"\\;%') & set(fallback)
    assert value.count('"') == 2 and value.count(";") == 2  # one quoted fallback, one encoded name


def test_line_breaks_and_path_separators_are_dropped():
    fallback, decoded = parsed(content_disposition("a\r\nSet-Cookie: x=1/../b.csv"))
    assert "\r" not in decoded and "\n" not in decoded and "/" not in decoded
    assert decoded == "aSet-Cookie: x=1_.._b.csv"
    assert fallback == "aSet-Cookie_ x=1_.._b.csv"


def test_a_name_with_nothing_ascii_falls_back_to_download():
    assert ascii_filename("机柜.csv") == "download.csv"
    assert ascii_filename("机柜") == "download"
    assert ascii_filename("") == "download"


def test_attachment_sets_the_header_on_a_response_or_a_new_one():
    response = attachment(HttpResponse(b"x", content_type="text/plain"), "报告.txt")
    assert parsed(response["Content-Disposition"]) == ("download.txt", "报告.txt")
    assert response["Content-Type"] == "text/plain"
    made = attachment(None, "racks.csv", content_type="text/csv; charset=utf-8")
    assert (made["Content-Type"], made["Content-Disposition"]) == (
        "text/csv; charset=utf-8", 'attachment; filename="racks.csv"',
    )


def test_the_inventory_export_names_its_download_through_it(client_for, technician, project):
    response = client_for(technician).get(reverse("imports:export", args=[project.code]), {"kind": "racks"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == content_disposition("ACME-72-racks.csv")
    assert response.content == export_csv(project, "racks")
