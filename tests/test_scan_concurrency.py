"""Races on the floor, run for real: threads with their own PostgreSQL connections, at the same moment.

- two technicians confirm the last end of one cable: exactly one is accepted (the cable verified once),
  the other a conflict naming the first;
- a manager's two as-built changes put two cables on one free port: exactly one wins, the other is a
  conflict, never an IntegrityError;
- one scan replayed three times at once (an offline queue flushed by three tabs): one event, the same
  answer three times, two of them marked replayed.

Row locks and unique constraints decide, so the tests hold each thread at a barrier right where the race
is (past the checks, before the write) to be sure they overlap. PostgreSQL only (SQLite takes one writer
at a time, so nothing races there): skipped on SQLite, a failure under REQUIRE_SERVICES=1 (CI).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from unittest import mock

import pytest
from django.core.exceptions import ValidationError
from django.db import connection, connections
from rest_framework.test import APIClient

from cabling.choices import CableStatus, ScanResult
from cabling.models import Cable, CableEnd, ScanEvent
from cabling.services import cable_end_repatch, scan_record, scans
from tests.cabling.conftest import fabric  # noqa: F401 - tests/cabling's small fabric, as a fixture here too
from tests.conftest import REQUIRE_SERVICES

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_S = 10  # a barrier nobody reaches fails the test instead of hanging it


@pytest.fixture(autouse=True)
def _postgresql_only():
    if connection.vendor != "postgresql":
        if REQUIRE_SERVICES:
            pytest.fail("REQUIRE_SERVICES=1 but the database is not PostgreSQL: the concurrency tests must run")
        pytest.skip("concurrency tests need PostgreSQL (DATABASE_URL=postgres://...)")


def at_once(*calls: Callable[[], object]) -> list:
    """Run the calls in threads started together; their results (or the exceptions they raised), in order."""
    results: list = [None] * len(calls)
    start = threading.Barrier(len(calls))

    def run(index: int, call: Callable[[], object]) -> None:
        try:
            start.wait(WAIT_S)
            results[index] = call()
        except Exception as exc:  # noqa: BLE001 - handed back to the test, which says what it expected
            results[index] = exc
        finally:
            connections.close_all()  # this thread's connection, or the test database cannot be dropped

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(4 * WAIT_S)
    assert not any(thread.is_alive() for thread in threads), "a thread is still running"
    return results


def hold_until_all_arrive(owner, name: str, parties: int):
    """Patch `owner.name` (a function of a module or a class) so that each caller waits there for the others,
    then goes on."""
    real = getattr(owner, name)
    gate = threading.Barrier(parties)

    def held(*args, **kwargs):
        gate.wait(WAIT_S)
        return real(*args, **kwargs)

    return mock.patch.object(owner, name, held)


def test_two_technicians_verify_one_cable_at_the_same_moment(fabric, technician, manager):  # noqa: F811
    scan_record(user=technician, project=fabric.project, action="cable_end", code="C00001/A",
                port_code="gpu-001:ib0/0")

    def last_end(user):
        return lambda: scan_record(user=user, project=fabric.project, action="cable_end", code="C00001/B",
                                   port_code="leaf-01:p1").event

    # Both checked their input and are about to resolve the code, which locks the cable: one gets it, the
    # other waits.
    with hold_until_all_arrive(scans, "resolve_code", 2):
        events = at_once(last_end(technician), last_end(manager))
    assert all(isinstance(e, ScanEvent) for e in events), events
    results = sorted(e.result for e in events)
    assert results == [ScanResult.ACCEPTED, ScanResult.CONFLICT]
    winner = next(e for e in events if e.result == ScanResult.ACCEPTED)
    loser = next(e for e in events if e.result == ScanResult.CONFLICT)
    assert loser.reason.startswith("C00001/B was already confirmed in leaf-01 port p1 by ")
    assert winner.user.username in loser.reason
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert (cable.status, cable.verified_by) == (CableStatus.VERIFIED, winner.user)
    assert cable.history.filter(status=CableStatus.VERIFIED).count() == 1


def test_two_technicians_confirm_the_two_ends_of_one_cable_at_the_same_moment(fabric, technician, manager):  # noqa: F811
    def end(user, code, port_code):
        return lambda: scan_record(user=user, project=fabric.project, action="cable_end", code=code,
                                   port_code=port_code).event

    # The second to get the cable's lock must see the first's confirmation (its ends are read under the lock,
    # not with the code): then it is the one that verifies the cable.
    with hold_until_all_arrive(scans, "resolve_code", 2):
        events = at_once(end(technician, "C00001/A", "gpu-001:ib0/0"), end(manager, "C00001/B", "leaf-01:p1"))
    assert all(isinstance(e, ScanEvent) for e in events), events
    assert [e.result for e in events] == [ScanResult.ACCEPTED, ScanResult.ACCEPTED]
    assert sum("is verified" in e.reason for e in events) == 1, [e.reason for e in events]
    cable = Cable.objects.get(pk=fabric.c1.pk)
    assert cable.status == CableStatus.VERIFIED
    assert not CableEnd.objects.filter(cable=cable, confirmed_at=None).exists()
    assert cable.history.filter(status=CableStatus.VERIFIED).count() == 1


def test_two_cables_repatched_onto_one_port_at_the_same_moment(fabric, manager):  # noqa: F811
    free = fabric.leaf1.ports.get(name="p5")
    ends = [CableEnd.objects.get(cable=cable, side="B") for cable in (fabric.c1, fabric.c3)]

    def repatch(end):
        return lambda: cable_end_repatch(end=end, port=free, user=manager, reason="found there on the walk")

    # Both checked that the port is free and are about to write: the unique port decides.
    with hold_until_all_arrive(CableEnd, "full_clean", 2):
        outcomes = at_once(repatch(ends[0]), repatch(ends[1]))
    won = [o for o in outcomes if isinstance(o, CableEnd)]
    lost = [o for o in outcomes if not isinstance(o, CableEnd)]
    assert len(won) == 1 and len(lost) == 1, outcomes
    assert isinstance(lost[0], ValidationError) and lost[0].code == "conflict"
    winner = won[0].cable.label
    loser = ({"C00001", "C00003"} - {winner}).pop()
    assert lost[0].messages == [f"leaf-01:p5 was just taken by {winner}; {loser}/B stays in leaf-01:"
                                f"p{1 if loser == 'C00001' else 2}."]
    assert CableEnd.objects.filter(port=free).count() == 1
    assert CableEnd.objects.get(cable__label=loser, side="B").port.name != "p5"


def test_one_scan_replayed_three_times_at_once_is_recorded_once(fabric, technician):  # noqa: F811
    body = {"project": fabric.project.code, "action": "cable_end", "code": "C00001/A", "port_code": "gpu-001:ib0/0",
            "idempotency_key": "offline-tab-7-0001", "source": "offline"}

    def send():
        api = APIClient()
        api.force_authenticate(technician)
        answer = api.post("/api/scans/", body, format="json")
        return answer.status_code, answer.json()

    # All three performed the scan's checks and are about to resolve the code, which locks the cable; the
    # key's unique constraint decides which event is recorded, and the others answer with it.
    with hold_until_all_arrive(scans, "resolve_code", 3):
        answers = at_once(send, send, send)
    assert all(isinstance(a, tuple) for a in answers), answers
    assert sorted(status for status, _ in answers) == [200, 200, 201]
    assert len({body["id"] for _, body in answers}) == 1
    assert sorted(body["replayed"] for _, body in answers) == [False, True, True]
    first = next(body for status, body in answers if status == 201)
    assert all(body == {**first, "replayed": True} for status, body in answers if status == 200)
    assert ScanEvent.objects.count() == 1
    assert CableEnd.history.filter(cable_id=fabric.c1.pk, confirmed_by=technician).count() == 1
