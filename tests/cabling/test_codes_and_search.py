"""Every code the floor prints or a tool reports resolves to its object in one step, only in projects
the user may see, in a bounded number of queries."""

import pytest

from cabling.codes import CodeError, cable_end_code, normalize_guid_mac, parse_code
from cabling.search import resolve_code
from inventory.models import Port
from tests.support import count_queries

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("raw, expected", [
    ("C00417/A", ("C00417", "A", None)),
    ("C00417/B", ("C00417", "B", None)),
    ("c00417/b2", ("c00417", "B", 1)),
    ("  C00417/A\r\n", ("C00417", "A", None)),
])
def test_end_codes(raw, expected):
    end = parse_code(raw).cable_end
    assert (end.label, end.side, end.position) == expected


def test_end_code_round_trip():
    assert cable_end_code("C00005", "B", 1, b_ends=2) == "C00005/B2"
    assert cable_end_code("C00001", "B", 0, b_ends=1) == "C00001/B"
    assert parse_code(cable_end_code("C00005", "B", 1, b_ends=2)).cable_end.position == 1


@pytest.mark.parametrize("raw, normal", [
    ("0x043F720300AABBCC", "043f720300aabbcc"),
    ("043f:7203:00aa:bbcc", "043f720300aabbcc"),
    ("B8-CE-F6-12-34-56", "b8:ce:f6:12:34:56"),
    ("b8ce.f612.3456", "b8:ce:f6:12:34:56"),
    ("gpu-001", None),
])
def test_guids_and_macs_are_normalised(raw, normal):
    assert normalize_guid_mac(raw) == normal


@pytest.mark.parametrize("raw", ["", "   ", "\x00\x1b", "x" * 513])
def test_what_cannot_be_a_code_is_refused(raw):
    with pytest.raises(CodeError):
        parse_code(raw)


def kinds(matches):
    return [(m.kind, str(m.obj)) for m in matches]


def test_every_kind_of_code_resolves(fabric, manager):
    project, leaf = fabric.project, fabric.leaf1
    fabric.gpu2.serial, fabric.gpu2.asset_tag = "SN-GPU-2", "AT-0002"
    fabric.gpu2.save()
    port = Port.objects.get(device=leaf, name="p2")
    port.guid_mac = "043f720300aabbcc"
    port.save()

    def find(code):
        return kinds(resolve_code(user=manager, project=project, code=code))

    assert find("C00001") == [("cable", "C00001")]
    assert find("c00001/a") == [("cable_end", f"C00001 A0: {fabric.gpu1.name}:ib0/0")]
    assert find("C00005/B2") == [("cable_end", "C00005 B1: leaf-02:p3")]
    assert find("C00005/B") == [("cable", "C00005")]  # which leg: the port will tell
    assert find("leaf-01:p2") == find("leaf-01 p2") == [("port", "leaf-01:p2")]
    assert find("N01-U01-leaf-01-p2") == [("port", "leaf-01:p2")]
    assert find("0x043F720300AABBCC") == [("port", "leaf-01:p2")]
    assert find("SN-GPU-2") == find("at-0002") == find("gpu-002") == [("device", "gpu-002")]
    assert find("NOTHING-LIKE-IT") == []


def test_other_projects_and_outsiders_find_nothing(fabric, manager, outsider):
    assert resolve_code(user=manager, project=fabric.project, code="C00001-FOREIGN") == []
    assert resolve_code(user=outsider, project=fabric.project, code="C00001") == []


def test_queries_do_not_grow_with_the_project(fabric, manager, add_cables):
    def run():
        resolve_code(user=manager, project=fabric.project, code="N01-U01-leaf-01-p2")
        resolve_code(user=manager, project=fabric.project, code="C00001")

    run()  # the user's role in the project is read once, then cached on the user (projects.access)
    before = count_queries(run)
    add_cables(fabric.project, 40)
    assert count_queries(run) == before


@pytest.mark.django_db
def test_every_lookup_the_resolver_makes_has_its_expression_index():
    """On PostgreSQL, `iexact` runs as UPPER(column::text): each lookup a scan makes has the index on that
    very expression (a plain index on the column cannot serve it: a scan would read the whole table)."""
    from django.db import connection

    from cabling.models import Cable
    from inventory.models import Device, Optic, Port

    if connection.vendor != "postgresql":
        pytest.skip("expression indexes are checked on PostgreSQL")
    lookups = {
        "cable_label_upper": Cable.objects.filter(project_id=1, label__iexact="c00417"),
        "device_name_upper": Device.objects.filter(project_id=1, name__iexact="gpu-001"),
        "device_serial_upper": Device.objects.filter(project_id=1, serial__iexact="sn1"),
        "device_asset_tag_upper": Device.objects.filter(project_id=1, asset_tag__iexact="at1"),
        "port_name_upper": Port.objects.filter(device_id=1, name__iexact="p17"),
        "optic_serial_upper": Optic.objects.filter(project_id=1, serial__iexact="mt1"),
    }
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname = ANY(%s)", [list(lookups)])
        definitions = dict(cursor.fetchall())
    for index, queryset in lookups.items():
        column = str(queryset.query).split("UPPER(", 1)[1].split(")", 1)[0].split(".")[-1].strip('"')
        column = column.replace('"::text', "").replace("::text", "")
        assert f"upper(({column})::text)" in definitions.get(index, ""), (index, definitions.get(index))
