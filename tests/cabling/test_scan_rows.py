"""core.rows, with the fabric of tests/cabling/conftest.py: the scan's hand-written reads and writes give
exactly what the ORM would, on SQLite and PostgreSQL alike: the same instances (converted values: decimals,
dates, JSON), the same history rows as save(), the same inserted row; and the person-token authentication
answers as DRF's does. cabling.sql's reads, each against the ORM's query, are in tests/cabling/test_sql.py."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.db import DatabaseError, transaction
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cabling.choices import CableStatus, ScanAction, ScanResult
from cabling.models import Cable, ScanEvent
from core.rows import columns_of, fetch, joined, row_insert, tracked_update
from inventory.models import Optic
from tests.factories import OpticFactory

pytestmark = pytest.mark.django_db

def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_built_rows_equal_what_the_orm_loads(fabric):
    optic = OpticFactory(project=fabric.project, dom_tx_power_dbm=[-1.5, 0.25], dom_temperature_c=41.5)
    cable, optic_columns = columns_of(Cable, "c"), columns_of(Optic, "o")
    rows = fetch(f'SELECT {cable.sql}, {optic_columns.sql} FROM "cabling_cable" c, "inventory_optic" o '
                 'WHERE c."id" = %s AND o."id" = %s', [fabric.c1.pk, optic.pk])
    built_cable, built_optic = joined(rows[0], cable, optic_columns)
    assert field_values(built_cable) == field_values(Cable.objects.get(pk=fabric.c1.pk))
    assert field_values(built_optic) == field_values(Optic.objects.get(pk=optic.pk))
    assert isinstance(built_cable.length_m, Decimal) and built_optic.dom_tx_power_dbm == [-1.5, 0.25]
    assert built_cable._state.adding is False  # a loaded row: saving it updates


def test_an_outer_joins_missing_row_is_none(fabric):
    optic = OpticFactory(project=fabric.project)  # in no port
    optic_columns, port = columns_of(Optic, "o"), columns_of(fabric.leaf1.ports.model, "p")
    rows = fetch(f'SELECT {optic_columns.sql}, {port.sql} FROM "inventory_optic" o '
                 'LEFT JOIN "inventory_port" p ON p."id" = o."port_id" WHERE o."id" = %s', [optic.pk])
    assert joined(rows[0], optic_columns, port)[1] is None


def test_a_tracked_update_writes_what_save_writes(fabric, technician):
    by_orm, written = fabric.c1, Cable.objects.get(pk=fabric.breakout.pk)
    at = timezone.now()
    for cable in (by_orm, written):
        cable.status, cable.status_cause, cable.verified_by = CableStatus.INSTALLED, "Installed by scan.", technician
    by_orm._history_user, by_orm._history_date, by_orm._change_reason = technician, at, "why"
    by_orm.save(update_fields=["status", "status_cause", "verified_by"])
    with transaction.atomic():
        tracked_update(written, ["status", "status_cause", "verified_by"], user=technician, at=at, reason="why")

    stored = Cable.objects.get(pk=written.pk)
    assert (stored.status, stored.status_cause, stored.verified_by) == (CableStatus.INSTALLED, "Installed by scan.",
                                                                        technician)
    expected, actual = by_orm.history.latest(), written.history.latest()
    for name in ("history_date", "history_change_reason", "history_type", "history_user"):
        assert getattr(actual, name) == getattr(expected, name), name
    assert field_values(actual.instance) == field_values(stored)  # the history row is the row as it now is
    assert written.history.count() == 2  # the plan's "+" row, then this one


def test_a_tracked_update_of_a_row_that_is_gone_is_refused_and_writes_no_history(fabric, technician):
    gone = Cable.objects.get(pk=fabric.c1.pk)
    history_before = Cable.history.count()
    Cable.objects.filter(pk=gone.pk).delete()
    history_after_delete = Cable.history.count()
    gone.status = CableStatus.INSTALLED
    with pytest.raises(DatabaseError, match="matched 0 rows"), transaction.atomic():
        tracked_update(gone, ["status"], user=technician, at=timezone.now(), reason="why")
    assert Cable.history.count() == history_after_delete >= history_before


def test_an_inserted_row_is_the_row_save_would_write(fabric, technician):
    event = ScanEvent(project=fabric.project, user=technician, idempotency_key="k-rows-0001", action=ScanAction.LOOKUP,
                      raw_code="C00001", result=ScanResult.FOUND, reason="found", cable=fabric.c1,
                      context={"matches": [{"kind": "cable", "id": fabric.c1.pk}]})
    row_insert(event)
    stored = ScanEvent.objects.get(pk=event.pk)
    assert event.created_at is not None and field_values(stored) == field_values(event)
    assert stored.context == {"matches": [{"kind": "cable", "id": fabric.c1.pk}]}


# --- the person token (Authorization: Token <key>), DRF's answers at a tenth of the cost -------------------


def scan_with(header: str, project_code: str):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=header)
    return api.post(reverse("scan-list"), {"project": project_code, "action": "lookup", "code": "C00001"},
                    format="json")


def test_a_person_token_scans_as_its_user(fabric, technician):
    token = Token.objects.create(user=technician)
    answer = scan_with(f"Token {token.key}", fabric.project.code)
    assert answer.status_code == 201, answer.content
    assert answer.json()["user"] == technician.username


def test_a_wrong_or_an_inactive_users_token_is_a_401_and_an_outsider_gets_404(fabric, technician, outsider):
    token = Token.objects.create(user=technician)
    wrong = scan_with("Token not-a-real-token", fabric.project.code)
    assert (wrong.status_code, wrong.json()["detail"]) == (401, "Invalid token.")
    outsiders = Token.objects.create(user=outsider)
    assert scan_with(f"Token {outsiders.key}", fabric.project.code).status_code == 404
    technician.is_active = False
    technician.save()
    inactive = scan_with(f"Token {token.key}", fabric.project.code)
    assert (inactive.status_code, inactive.json()["detail"]) == (401, "User inactive or deleted.")
    assert not ScanEvent.objects.exists()


# --- the query budget of one scan --------------------------------------------------------------------------

# One scan of each kind through the endpoint with a person's token: auth 1, project and role 1, the code 1 to 3
# (a bare label is also looked up as a serial and an optic), the port 1, the cable locked 1 and its ends 1 (a
# lookup's answer reads them too); then the writes: on PostgreSQL one statement for all of them (core.rows.Writes:
# the ends and the cable changed with their history rows, the ports a verification connects, the event),
# elsewhere each end or cable changed 2, the event 1, ports 2 when verified; here the transaction is a savepoint
# (2) and the gates' request waits for a commit that never comes. At 200 scans a second each query more is felt:
# this is the budget.
SCAN_QUERIES = {
    "postgresql": {"lookup": 9, "first end": 8, "last end": 8},
    "sqlite": {"lookup": 9, "first end": 12, "last end": 14},
}


def test_a_scan_keeps_to_its_query_budget(fabric, technician):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=technician).key}")
    scans = {
        "lookup": {"action": "lookup", "code": "C00001"},
        "first end": {"action": "cable_end", "code": "C00001/A", "port_code": "gpu-001:ib0/0"},
        "last end": {"action": "cable_end", "code": "C00001/B", "port_code": "leaf-01:p1"},
    }
    counts = {}
    for name, body in scans.items():
        with CaptureQueriesContext(connection) as captured:
            answer = api.post(reverse("scan-list"), {**body, "project": fabric.project.code}, format="json")
        assert answer.status_code == 201 and answer.json()["result"] in ("found", "accepted"), answer.content
        counts[name] = len(captured.captured_queries)
    assert Cable.objects.get(pk=fabric.c1.pk).status == CableStatus.VERIFIED
    assert counts == SCAN_QUERIES[connection.vendor], "\n".join(q["sql"][:150] for q in captured.captured_queries)
