"""What a topology comparison saw of a whole fabric, recorded on its cables and their ports in bulk
(`cables_fabric_record`), written so that the 24,576 cables of a 1,024-server fabric cost a fraction of a
second when nothing changed and a few seconds when everything did.

- a link seen ok verifies the cable "by the fabric" and its ports are up;
- a missing link takes its ports down, and a cable that only the fabric had verified back to installed (a
  scan-verified cable stays verified);
- a miswired or degraded link makes the cable faulty and its ports down;
- a cable the fabric verifies gets the comparison's time in fabric_verified_at (the burn-up's date for it),
  kept while it stays verified and cleared when the fabric takes it out of verified;
- every cable seen gets the time of the comparison; a change of status or fabric state gets the cause (a
  status change in status_cause) and a history row; a port a person disabled stays disabled.

How it stays fast and safe: the decision reads plain values (no model instances) of every cable of the
project, locked in id order before anything is written (a writer that moved one in between is not
overwritten, and the stamp of every cable seen cannot deadlock with a scan, a link check or a swap, which
lock in id order too); a port's move is an UPDATE whose condition is checked on each row as it is
written. Each group of rows moving to the same values is one UPDATE, and their history rows are copied by the
database itself (the same rows simple_history's bulk_history_create would make, without building one Python
object per row). On PostgreSQL the UPDATE and its history rows are one statement (cabling.sql's
cables_update_recorded and ports_move_recorded, on core.bulk_history's update_recorded, a data-modifying CTE: the
history copies what the UPDATE returns, so the rows are found once, and no id goes to the database and back);
elsewhere the UPDATE goes by chunks of ids and history_copy follows it. A comparison that changes nothing writes
one UPDATE (the time seen) and no history.

What a first comparison of a whole fabric costs at the database is mostly these writes (24,576 cables and
57,344 ports, each with its history row): the cable and port tables keep free room in each page (fillfactor,
migrations inventory 0009 and cabling 0010), so a move that changes no indexed column is a HOT update that
writes no index entry (the port table has six indexes, none on what a comparison writes).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from core.bulk_history import history_copy, update_recorded_supported
from inventory.choices import PortStatus
from inventory.models import Port
from projects.evidence import evidence_changed_send

from ..choices import CableStatus, FabricState
from ..models import Cable, CableEnd
from ..sql import cables_update_recorded, ports_move_recorded, ports_move_returning, update_returning_supported
from .evidence import PORT_KEPT, cause_text

CHUNK = 2000  # ids per statement: well under SQLite's and PostgreSQL's limits on parameters
# The port status a cable's ports take from the fabric state of its link: up when seen ok, else down.
PORT_STATUSES = {PortStatus.UP: [FabricState.OK],
                 PortStatus.DOWN: [FabricState.MISSING, FabricState.MISWIRED, FabricState.DEGRADED]}


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


def cable_move(status: str, verified_at, seen: str) -> str:
    """The status a cable in `status` (scan-verified when `verified_at` is set) takes when the fabric shows
    its link in state `seen`."""
    if seen == FabricState.OK:
        return CableStatus.VERIFIED
    if seen == FabricState.MISSING:
        # The fabric takes back only its own word: a cable a technician verified by scan was seen in place.
        return CableStatus.INSTALLED if status == CableStatus.VERIFIED and verified_at is None else status
    return CableStatus.FAULTY  # miswired or degraded: not as planned


DECIDING = ("pk", "status", "fabric_state", "verified_at")


def _changes(rows: Iterable[tuple], observations: Mapping[int, str]) -> list[tuple]:
    """(cable id, status, new status, new fabric state) of the observed cables among `rows` (DECIDING
    values) whose status or fabric state would change."""
    changes = []
    for pk, status, fabric_state, verified_at in rows:
        seen = observations.get(pk)
        if seen is None:
            continue
        new_status = cable_move(status, verified_at, seen)
        if (new_status, seen) != (status, fabric_state):
            changes.append((pk, status, new_status, seen))
    return changes


def _locked(project) -> list[tuple]:
    """DECIDING values of every cable of the project, locked until the transaction ends, in id order, before
    anything is written: the stamp below writes every cable seen, and a writer that locked only the cables
    that change would then take the others' locks in whatever order the UPDATE met them, while a scan, a
    link check or a swap (which lock in id order) holds one and waits for one of ours: a deadlock."""
    return list(Cable.objects.select_for_update().filter(project=project).order_by("pk").values_list(*DECIDING))


def _stamp_seen(project, seen: set[int], project_ids: set[int], checked_at: datetime) -> None:
    """Every cable seen gets the time of the comparison, the unchanged ones too (those that changed have it
    already: not written twice): one statement when the comparison saw (nearly) the whole project, as it
    does on a whole fabric."""
    cables = Cable.objects.filter(project=project).exclude(fabric_checked_at=checked_at)
    unseen = sorted(project_ids - seen)
    if len(unseen) <= CHUNK:
        cables.exclude(pk__in=unseen).update(fabric_checked_at=checked_at)
        return
    for chunk in _chunks(sorted(seen)):
        cables.filter(pk__in=chunk).update(fabric_checked_at=checked_at)


def _fabric_verified(new_status: str, status_changed: bool, checked_at: datetime) -> dict:
    """fabric_verified_at for a cable moving to `new_status`: this comparison's time when it verifies the
    cable, cleared when the cable is not verified, and left alone for a cable that stays verified (the
    burn-up dates it by the comparison that first saw it ok, not by the latest one)."""
    if new_status != CableStatus.VERIFIED:
        return {"fabric_verified_at": None}
    return {"fabric_verified_at": checked_at} if status_changed else {}


def _write_cables(changes: list[tuple], *, cause: str, checked_at: datetime, user) -> None:
    """One UPDATE per group of cables moving to the same values, with their history rows: on PostgreSQL one
    statement per group (its ids one array parameter, whatever their number), elsewhere an UPDATE per chunk of
    ids and then history_copy of them all."""
    groups: dict[tuple[str, str, bool], list[int]] = defaultdict(list)
    for pk, status, new_status, seen in changes:
        groups[(new_status, seen, new_status != status)].append(pk)
    in_one_statement = update_recorded_supported()
    for (new_status, seen, status_changed), ids in groups.items():
        values = {"status": new_status, "fabric_state": seen, "fabric_checked_at": checked_at,
                  **_fabric_verified(new_status, status_changed, checked_at)}
        if status_changed:
            values["status_cause"] = cause
        if in_one_statement:
            cables_update_recorded(ids=ids, values=values, user=user, reason=cause, at=checked_at)
            continue
        for chunk in _chunks(ids):
            Cable.objects.filter(pk__in=chunk).update(**values)
    if not in_one_statement:
        history_copy(Cable, [change[0] for change in changes], user=user, reason=cause, at=checked_at)


def _ports_to(project, checked_at: datetime) -> dict[str, list[int]]:
    """Target port status -> ids of the ports to move there: those of the cables this comparison saw (their
    fabric_checked_at is its time, written above) whose status does not match their cable's fabric state
    yet, a disabled one excepted. The database joins and filters: when nothing moves, no row comes back."""
    ends = (CableEnd.objects.filter(cable__project=project, cable__fabric_checked_at=checked_at)
            .exclude(port__status__in=PORT_KEPT).order_by())
    moving = {}
    for target, states in PORT_STATUSES.items():
        ids = list(ends.filter(cable__fabric_state__in=states).exclude(port__status=target)
                   .values_list("port_id", flat=True))
        if ids:
            moving[target] = ids
    return moving


def _move_ports(moving: dict[str, list[int]], *, cause: str, user, at: datetime) -> int:
    """Move the ports (those still movable: another writer may have moved one since it was read) with one
    UPDATE per chunk, and copy the history rows of those it moved."""
    moved = 0
    for target, ids in moving.items():
        for chunk in _chunks(sorted(ids)):
            still = _update_ports_returning(chunk, target, cause)
            if still:
                history_copy(Port, still, user=user, reason=cause, at=at)
                moved += len(still)
    return moved


def _update_ports_returning(ids: list[int], target: str, cause: str) -> list[int]:
    """UPDATE those ports not in `target` nor kept to `target` (the condition is checked on each row as it
    is written, so a concurrent move is never overwritten) and return the ids it moved: with RETURNING where
    the database has it (cabling.sql.ports_move_returning), else lock, read, then update."""
    if not update_returning_supported():
        still = list(Port.objects.select_for_update().filter(pk__in=ids).exclude(status=target)
                     .exclude(status__in=PORT_KEPT).order_by("pk").values_list("pk", flat=True))
        Port.objects.filter(pk__in=still).update(status=target, status_cause=cause)
        return still
    return ports_move_returning(ports=ids, target=target, cause=cause, kept=PORT_KEPT)


def _move_seen_ports(project, checked_at: datetime, *, cause: str, user) -> int:
    """_ports_to and _move_ports in one statement per target status: an UPDATE of the ports whose cable this
    comparison saw (its time in fabric_checked_at) in a state that sends them there, with the same conditions
    checked on each row as it is written, and their history rows (on PostgreSQL in the same statement, else
    copied by the ids the UPDATE returned). No id goes to the database and back on PostgreSQL: on a whole
    fabric's first comparison that is 57,344 ports, once. A database without UPDATE ... RETURNING takes the
    two steps."""
    if not update_returning_supported():
        return _move_ports(_ports_to(project, checked_at), cause=cause, user=user, at=checked_at)
    moved = 0
    for target, states in PORT_STATUSES.items():
        seen = (CableEnd.objects.filter(cable__project=project, cable__fabric_checked_at=checked_at,
                                        cable__fabric_state__in=states).order_by().values("port_id"))
        if update_recorded_supported():
            moved += ports_move_recorded(ports=seen, target=target, cause=cause, kept=PORT_KEPT, user=user,
                                         at=checked_at)
            continue
        still = ports_move_returning(ports=seen, target=target, cause=cause, kept=PORT_KEPT)
        if still:
            history_copy(Port, still, user=user, reason=cause, at=checked_at)
            moved += len(still)
    return moved


@transaction.atomic
def cables_fabric_record(
    *, project, observations: Mapping[int, str], checked_at: datetime, cause: str, user=None
) -> int:
    """What the latest topology comparison saw of the project's cables, by cable id (FabricState values;
    ids of other projects are ignored): the moves of the module docstring, for a
    whole fabric at once. Returns how many cables changed status or fabric state."""
    known = frozenset(FabricState.values)  # .values builds a new list at each use: not once per cable
    unknown = sorted({str(state) for state in observations.values() if state not in known})
    if unknown:
        raise ValidationError({"observations": f"Unknown fabric states: {', '.join(unknown)}."})
    cause = cause_text(cause)
    observations = {int(pk): str(state) for pk, state in observations.items()}
    rows = _locked(project)
    changes = _changes(rows, observations)
    if changes:
        _write_cables(changes, cause=cause, checked_at=checked_at, user=user)
    project_ids = {row[0] for row in rows}
    _stamp_seen(project, project_ids & observations.keys(), project_ids, checked_at)
    _move_seen_ports(project, checked_at, cause=cause, user=user)
    if changes:
        evidence_changed_send(project_id=project.pk, what="cable")  # the stage gates read cable states
    return len(changes)
