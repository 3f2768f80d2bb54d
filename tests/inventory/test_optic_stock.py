"""Optics taken into stock in bulk (inventory.services.optic_stock, what the demo's 2,000 use): the rows and
history optic_save writes one by one, a fixed number of queries however many, and every problem refused at
once with nothing written."""

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from inventory.choices import FormFactor, OpticStatus
from inventory.models import Optic
from inventory.services import optic_save, optics_stock_bulk
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def stock(project, count: int, *, prefix: str = "SN", **fields) -> list[Optic]:
    values = {"vendor": "NVIDIA", "part_number": "OSFP-800G", "form_factor": FormFactor.OSFP, "speed_gbps": 800,
              **fields}
    return [Optic(project=project, serial=f"{prefix}{n:05d}", **values) for n in range(count)]


def test_the_optics_are_in_stock_with_a_created_history_row_naming_the_intake(project, manager):
    saved = optics_stock_bulk(project=project, optics=stock(project, 3), user=manager, reason="Delivery 42")
    assert all(optic.pk for optic in saved)
    optics = Optic.objects.filter(project=project).order_by("serial")
    assert [(o.serial, o.status, o.port_id) for o in optics] == [
        (f"SN{n:05d}", OpticStatus.IN_STOCK, None) for n in range(3)]
    for optic in optics:
        (record,) = optic.history.all()
        assert (record.history_type, record.history_change_reason, record.history_user) == ("+", "Delivery 42",
                                                                                            manager)


def test_the_same_rows_as_optic_save_one_by_one(project):
    one = optic_save(optic=stock(project, 1, prefix="ONE")[0], status=OpticStatus.IN_STOCK)
    (bulk,) = optics_stock_bulk(project=project, optics=stock(project, 1, prefix="BULK"))
    fields = [f.name for f in Optic._meta.concrete_fields if f.name not in ("id", "serial")]
    one.refresh_from_db()
    bulk.refresh_from_db()
    assert {f: getattr(one, f) for f in fields} == {f: getattr(bulk, f) for f in fields}


def statements(captured) -> list[str]:
    """The queries sent, the transaction's savepoints aside."""
    return [q["sql"] for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]


@pytest.mark.parametrize("count", [5, 120])
def test_queries_do_not_grow_with_the_number_of_optics(project, count):
    optics = stock(project, count)
    with CaptureQueriesContext(connection) as captured:
        optics_stock_bulk(project=project, optics=optics)
    sent = statements(captured)
    # The serials already in stock, the inserts (one per batch: SQLite's limit on parameters cuts 120 rows into
    # a few), the history copy: not a statement per optic.
    assert sent[0].startswith("SELECT") and all(sql.startswith("INSERT") for sql in sent[1:]), sent
    assert len(sent) <= 6, sent
    assert Optic.objects.filter(project=project).count() == count


def test_every_problem_is_refused_at_once_and_nothing_is_written(project):
    optic_save(optic=stock(project, 1)[0], status=OpticStatus.IN_STOCK)  # SN00000 is in stock already
    other = ProjectFactory()
    bad = [*stock(project, 2), *stock(project, 1, prefix="DUP"), *stock(project, 1, prefix="DUP"),
           Optic(project=project, vendor="", part_number="X", serial="NOVENDOR", form_factor="cd-rom", speed_gbps=1),
           *stock(other, 1, prefix="ELSEWHERE"), *stock(project, 1, prefix="BROKEN", status=OpticStatus.FAULTY)]
    with pytest.raises(ValidationError) as refused:
        optics_stock_bulk(project=project, optics=bad)
    text = " ".join(refused.value.messages)
    assert "SN00000: another optic of the project already has this serial" in text
    assert "DUP00000: another optic of the project already has this serial" in text
    assert "NOVENDOR: vendor:" in text and "NOVENDOR: form_factor:" in text
    assert "ELSEWHERE00000: belongs to another project" in text
    assert "BROKEN00000: only optics in stock" in text
    assert "SN00001" not in text
    assert list(Optic.objects.values_list("serial", flat=True)) == ["SN00000"]


def test_nothing_to_take_in_writes_nothing(project):
    with CaptureQueriesContext(connection) as captured:
        assert optics_stock_bulk(project=project, optics=[]) == []
    assert statements(captured) == []
