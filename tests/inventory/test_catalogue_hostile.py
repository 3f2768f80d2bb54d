"""Hostile device-type files: each refused whole, quickly, with an error naming the file (and the line and
field where there is one), nothing written. Through the loader, the command and the upload page."""

from __future__ import annotations

import time

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from inventory.catalogue.reader import MAX_DEPTH, MAX_FILE_BYTES, MAX_INTERFACES, MAX_NODES, read_device_type
from inventory.choices import HardwareKind
from inventory.models import HardwareModel
from inventory.services import CatalogueFile, catalogue_load

pytestmark = pytest.mark.django_db

HEAD = "manufacturer: Acme\nmodel: Box\npart_number: ACME-1\nu_height: 1\nis_full_depth: true\n"


def refused(text: str | bytes, name: str = "hostile.yaml") -> list[str]:
    content = text.encode() if isinstance(text, str) else text
    started = time.perf_counter()
    with pytest.raises(ValidationError) as caught:
        catalogue_load(files=[CatalogueFile(name, content)], default_kind=HardwareKind.OTHER)
    assert time.perf_counter() - started < 5, "a hostile file must be refused in bounded time"
    assert not HardwareModel.objects.exists()
    return caught.value.messages


def test_billion_laughs_is_refused_at_the_first_alias():
    lol = ['lol0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lol += [f"lol{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    messages = refused(HEAD + "comments: x\n" + "\n".join(lol) + "\n")
    assert messages == ["hostile.yaml, line 8: aliases (*name) are not accepted in a device type"]


def test_a_merge_key_is_an_alias_too():
    text = HEAD + "interfaces:\n  - &p {name: p1, type: 1000base-t}\n  - {<<: *p, name: p2}\n"
    assert refused(text) == ["hostile.yaml, line 8: aliases (*name) are not accepted in a device type"]


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed():
    huge = HEAD + "comments: " + "x" * (10 * 1024 * 1024) + "\n"
    assert refused(huge) == [
        f"hostile.yaml: the file is {len(huge.encode()):,} bytes; a device type may have at most {MAX_FILE_BYTES:,}"]


def test_a_hundred_thousand_interfaces_are_refused():
    lines = "".join(f"- {{name: p{n}, type: 1000base-t}}\n" for n in range(100_000))
    text = HEAD + "interfaces:\n" + lines
    messages = refused(text[:MAX_FILE_BYTES - 1])  # within the size limit: the node count stops it
    assert len(messages) == 1 and messages[0].startswith("hostile.yaml, line ")
    assert f"more than {MAX_NODES:,} YAML nodes" in messages[0]


def test_more_interfaces_than_a_device_type_may_have_are_refused_by_count():
    lines = "".join(f"  - {{name: p{n}, type: 1000base-t}}\n" for n in range(MAX_INTERFACES + 1))
    assert refused(HEAD + "interfaces:\n" + lines) == [
        f"hostile.yaml, line 6: interfaces: {MAX_INTERFACES + 1:,} interfaces; a device type may have at most "
        f"{MAX_INTERFACES:,}"]


def test_deep_nesting_is_refused():
    text = HEAD + "comments: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    assert refused(text) == [f"hostile.yaml, line 6: nested deeper than {MAX_DEPTH} levels"]
    # Far deeper, libyaml's own limit speaks first (it scans ahead); refused all the same, no RecursionError.
    text = HEAD + "comments: " + "[" * 50_000 + "]" * 50_000 + "\n"
    assert refused(text) == ["hostile.yaml, line 6: not valid YAML: exceeded maximum nesting depth"]


@pytest.mark.parametrize(("field_line", "expected"), [
    ("  - {name: '=HYPERLINK(\"http://x\")', type: 1000base-t}",
     "hostile.yaml, line 7: interfaces[0].name: may not start with '=' (spreadsheets read that as a formula)"),
    ("  - {name: 'p1\"=cmd', type: 1000base-t}",
     "hostile.yaml, line 7: interfaces[0].name: 'p1\"=cmd' is not accepted here"),
    ("  - {name: '@SUM(1+1)*cmd', type: 1000base-t}",
     "hostile.yaml, line 7: interfaces[0].name: may not start with '@' (spreadsheets read that as a formula)"),
    ("  - {name: \"p1\\u0007\", type: 1000base-t}",
     "hostile.yaml, line 7: interfaces[0].name: control characters are not accepted"),
])
def test_formula_and_control_text_in_names_is_refused(field_line, expected):
    assert refused(HEAD + "interfaces:\n" + field_line + "\n") == [expected]


def test_formula_text_in_the_model_name_is_refused():
    text = HEAD.replace("model: Box", "model: \"=cmd|' /C calc'!A0\"")
    assert refused(text) == [
        "hostile.yaml, line 2: model: may not start with '=' (spreadsheets read that as a formula)"]


@pytest.mark.parametrize(("text", "expected"), [
    (HEAD.replace("u_height: 1", "u_height: 99999999999999999999999"),
     "hostile.yaml, line 4: u_height: 99999999999999999999999 is out of range (0 to 60)"),
    (HEAD.replace("u_height: 1", "u_height: " + "9" * 5000),
     "hostile.yaml: a value cannot be read: "),
    (HEAD.replace("u_height: 1", "u_height: 1.0e+999"),
     "hostile.yaml, line 4: u_height: expected a whole number, got inf"),
    (HEAD.replace("u_height: 1", "u_height: -3"), "hostile.yaml, line 4: u_height: -3 is out of range (0 to 60)"),
    (HEAD + "power-ports:\n  - {name: PS1, type: iec-60320-c14, maximum_draw: 10000000000}\n",
     "hostile.yaml, line 7: power-ports[0].maximum_draw: 10000000000 is out of range (1 to 200,000)"),
    (HEAD + "bringup: {max_power_w: true}\n",
     "hostile.yaml, line 6: bringup.max_power_w: expected a whole number, got True"),
])
def test_huge_and_wrong_numbers_are_refused_by_field(text, expected):
    messages = refused(text)
    assert len(messages) == 1 and messages[0].startswith(expected)


@pytest.mark.parametrize(("text", "expected"), [
    (b"\xff\xfe not utf-8", "hostile.yaml: not UTF-8 text (byte 0)"),
    ("", "hostile.yaml: the file is empty"),
    ("- just\n- a list\n", "hostile.yaml: not a device type: expected a mapping with manufacturer, model, u_height,"),
    ("manufacturer: [unclosed\n", "hostile.yaml, line 2: not valid YAML: "),
    ("!!python/object/apply:os.system ['echo hi']\n", "hostile.yaml, line 1: not valid YAML: "),
    (HEAD + "u_heigth: 2\n", "hostile.yaml, line 6: u_heigth: unknown field (expected one of: "),
    (HEAD + "interfaces:\n  - {name: p1, type: 1000base-t, bringup: {breakout: 3x100G}}\n",
     "hostile.yaml, line 7: interfaces[0].bringup.breakout: 3x100G does not add up to the port's 1G"),
    (HEAD + "interfaces:\n  - {name: p1, type: 1000base-t}\n  - {name: p1, type: 10gbase-t}\n",
     "hostile.yaml, line 8: interfaces[1].name: 'p1' is already the name of the interface at hostile.yaml, line 7"),
    (HEAD + "interfaces:\n  - {name: p1, type: 1000base-t, bringup: {nic: nic9}}\n",
     "hostile.yaml, line 7: interfaces[0].bringup.nic: no NIC in slot 'nic9' under bringup.nics"),
    (HEAD + "interfaces:\n  - {name: " + "p" * 31 + ", type: 1000base-t}\n",
     "hostile.yaml, line 7: interfaces[0].name: 31 characters; at most 30"),
])
def test_malformed_files_are_refused_with_a_named_error(text, expected):
    messages = refused(text)
    assert messages[0].startswith(expected), messages


def test_errors_of_a_file_are_capped():
    lines = "".join(f"  - {{name: p{n}, type: nonsense}}\n" for n in range(500))
    result = read_device_type((HEAD + "interfaces:\n" + lines).encode(), source="many.yaml", default_kind="other")
    assert len(result.errors) == 51 and result.errors[-1] == "many.yaml: ... and 450 more errors"


def test_the_upload_page_answers_a_hostile_file_with_a_400_naming_it(client_for, project, manager):
    from django.core.files.uploadedfile import SimpleUploadedFile

    lol = HEAD + "a: &a [1, 2]\nb: [*a, *a]\n"
    response = client_for(manager).post(
        reverse("inventory:catalogue-import", args=[project.code]),
        {"files": [SimpleUploadedFile("laughs.yaml", lol.encode())], "kind": ""},
    )
    assert response.status_code == 400
    assert "laughs.yaml, line 7: aliases (*name) are not accepted in a device type" in response.content.decode()
    too_big = SimpleUploadedFile("big.yaml", b"x" * (MAX_FILE_BYTES + 1))
    response = client_for(manager).post(reverse("inventory:catalogue-import", args=[project.code]),
                                        {"files": [too_big]})
    assert response.status_code == 400 and "Larger than 1 MiB, the limit: big.yaml." in response.content.decode()
    assert not HardwareModel.objects.exists()
