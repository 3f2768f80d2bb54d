"""A scan's writes sent together (core.rows.Writes): the end's and the cable's updates, the ports a
verification connects and the event go to the database in one statement on PostgreSQL (one after another
elsewhere), with the same rows and history rows as before; a replay is still recorded once; an update that
matches no row still fails the whole scan. The fabric is tests/cabling/conftest.py's (C00001: gpu-001:ib0/0
-> leaf-01:p1)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from cabling.choices import CableStatus, ScanAction, ScanResult
from cabling.models import Cable, CableEnd, ScanEvent
from cabling.services import scan_record
from core.rows import Writes
from inventory.choices import PortStatus
from inventory.models import Port

from .conftest import ports_of

pytestmark = pytest.mark.django_db

WRITES = ("INSERT", "UPDATE", "WITH", "DELETE")


def scan(user, project, code, port_code, key=""):
    return scan_record(user=user, project=project, action=ScanAction.CABLE_END, code=code, port_code=port_code,
                       idempotency_key=key)


def writes_of(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if q["sql"].lstrip().upper().startswith(WRITES)]


def test_a_verifying_scan_writes_once_on_postgresql_with_every_row_and_history_row(fabric, technician):
    scan(technician, fabric.project, "C00001/A", "gpu-001:ib0/0")
    with CaptureQueriesContext(connection) as captured:
        event = scan(technician, fabric.project, "C00001/B", "leaf-01:p1").event
    assert event.result == ScanResult.ACCEPTED
    # The end, the cable, its two ports with their history rows, and the event: one statement on PostgreSQL.
    if connection.vendor == "postgresql":
        assert len(writes_of(captured)) == 1, writes_of(captured)
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert cable.status == CableStatus.VERIFIED
    assert [h.status for h in cable.history.order_by("history_id")] == ["planned", "installed", "verified"]
    assert cable.history.latest().history_user == technician
    for port in Port.objects.filter(cable_end__cable=cable):
        assert (port.status, port.status_cause) == (PortStatus.CONNECTED, cable.status_cause)
        latest = port.history.latest()
        assert (latest.status, latest.history_type, latest.history_user, latest.history_change_reason) == (
            PortStatus.CONNECTED, "~", technician, cable.status_cause)
    assert CableEnd.history.filter(cable_id=cable.pk, confirmed_by=technician).count() == 2
    assert ScanEvent.objects.get(pk=event.pk).cable_end.side == "B"


def test_a_port_the_fabric_saw_keeps_its_status_and_gets_no_history_row(fabric, technician):
    leaf_port = ports_of(fabric.leaf1)["p1"]
    Port.objects.filter(pk=leaf_port.pk).update(status=PortStatus.UP)  # seen up by a link check
    rows_before = leaf_port.history.count()
    scan(technician, fabric.project, "C00001/A", "gpu-001:ib0/0")
    answer = scan(technician, fabric.project, "C00001/B", "leaf-01:p1").event
    assert answer.cable.end_list[1].port.status == PortStatus.UP  # the answer shows the port as it is
    leaf_port.refresh_from_db()
    assert leaf_port.status == PortStatus.UP and leaf_port.history.count() == rows_before
    assert Port.objects.get(pk=ports_of(fabric.gpu1)["ib0/0"].pk).status == PortStatus.CONNECTED


def test_a_queued_port_update_repeats_its_condition(fabric, technician):
    """A port another writer moved since it was read is left as it is now, without a history row."""
    port = ports_of(fabric.leaf1)["p1"]
    Port.objects.filter(pk=port.pk).update(status=PortStatus.DOWN)
    rows_before = port.history.count()
    writes = Writes()
    writes.rows_update(Port, [port.pk], {"status": PortStatus.CONNECTED, "status_cause": "why"},
                       only_if={"status": [PortStatus.PLANNED]}, user=technician, at=timezone.now(), reason="why")
    with transaction.atomic():
        writes.send()
    port.refresh_from_db()
    assert port.status == PortStatus.DOWN and port.history.count() == rows_before


def test_a_queued_update_of_a_row_that_is_gone_fails_and_leaves_nothing(fabric, technician):
    gone = Cable.objects.get(pk=fabric.c1.pk)
    event_count = ScanEvent.objects.count()
    Cable.objects.filter(pk=gone.pk).delete()
    gone.status = CableStatus.INSTALLED
    writes = Writes()
    writes.tracked_update(gone, ["status"], user=technician, at=timezone.now())
    writes.insert(ScanEvent(project=fabric.project, user=technician, action=ScanAction.LOOKUP, raw_code="x",
                            result=ScanResult.FOUND, reason="x", context={}))
    with pytest.raises(DatabaseError, match="matched 0 rows"), transaction.atomic():
        writes.send()
    assert ScanEvent.objects.count() == event_count


def test_a_scan_replayed_three_times_is_recorded_once(fabric, technician):
    outcomes = [scan(technician, fabric.project, "C00001/A", "gpu-001:ib0/0", key="replay-key-1") for _ in range(3)]
    assert [o.replayed for o in outcomes] == [False, True, True]
    assert len({o.event.pk for o in outcomes}) == 1
    assert ScanEvent.objects.filter(idempotency_key="replay-key-1").count() == 1
    assert CableEnd.history.filter(cable_id=fabric.c1.pk, confirmed_by=technician).count() == 1


def test_the_endpoints_statements_per_scan_and_an_outsider(fabric, technician, outsider):
    """What POST /api/scans/ costs a person's token (the bench's figure), and an outsider learns nothing."""
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=technician).key}")
    body = {"project": fabric.project.code, "action": "cable_end", "code": "C00001/A", "port_code": "gpu-001:ib0/0"}
    with CaptureQueriesContext(connection) as captured:
        assert api.post("/api/scans/", body, format="json").status_code == 201
    # token, project, resolve (locking the cable; SQLite's transaction holds the write lock from its start),
    # port, ends, the writes with the event (the savepoint pair the test's transaction adds not counted): one
    # statement for all the writes on PostgreSQL.
    statements = [q for q in captured.captured_queries if "SAVEPOINT" not in q["sql"]]
    assert len(statements) == (6 if connection.vendor == "postgresql" else 10), [q["sql"][:80] for q in statements]
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=outsider).key}")
    assert stranger.post("/api/scans/", {**body, "code": "C00001/B", "port_code": "leaf-01:p1"},
                         format="json").status_code == 404
    assert not CableEnd.objects.filter(cable=fabric.c1, side="B", confirmed_at__isnull=False).exists()


def test_a_built_row_is_the_instance_the_orm_loads_and_init_receivers_still_see_it(fabric):
    """core.rows builds a row's instance without Model.__init__ when no receiver listens to its init: the same
    values, state and behaviour; with a receiver, through from_db, so the receiver sees it."""
    from django.db.models.signals import post_init

    from core.rows import columns_of, fetch

    cable = columns_of(Cable, "c")
    sql = f'SELECT {cable.sql} FROM "cabling_cable" c WHERE c."id" = %s'
    built, loaded = cable.build(fetch(sql, [fabric.c1.pk])[0]), Cable.objects.get(pk=fabric.c1.pk)
    assert {k: v for k, v in vars(built).items() if k != "_state"} == {
        k: v for k, v in vars(loaded).items() if k != "_state"}
    assert (built._state.adding, built._state.db, built.project, built == loaded) == (
        False, "default", fabric.project, True)
    seen = []

    def receiver(sender, instance, **kwargs):
        seen.append(instance.pk)

    post_init.connect(receiver, sender=Cable)
    try:
        assert cable.build(fetch(sql, [fabric.c1.pk])[0]).pk == fabric.c1.pk
    finally:
        post_init.disconnect(receiver, sender=Cable)
    assert seen == [fabric.c1.pk]
    port = columns_of(Port, "p", ("name",))  # only some columns: the others deferred, as with only()
    partial = port.build(fetch(f'SELECT {port.sql} FROM "inventory_port" p WHERE p."name" = %s', ["p1"])[0])
    assert partial.get_deferred_fields() and partial.name == "p1"
