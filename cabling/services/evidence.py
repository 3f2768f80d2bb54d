"""States that follow the evidence: what the floor and the fabric say about a cable moves it and its
ports, each change with its cause and a history row.

- A scan of every end (cabling.services.scans) verifies a cable; its ports move on to connected.
- The topology comparison: its rules, for a whole fabric at once, are in cabling.services.fabric_states
  (`cables_fabric_record`), which uses the pieces of this module.
- The link-health check (`cables_link_observe`): a link seen ok makes a planned cable installed and its
  ports up; a failed one makes the cable faulty and its ports down, the cause naming the run and why.

Bulk by design (a comparison of the 1,024-server fabric sees 24,576 cables at once): rows are read in
chunks, each group of rows moving to the same values is written with one UPDATE, and their history
rows with simple_history's bulk_history_create, so a batch costs a handful of statements whatever its
size. Ports are never moved out of "disabled" (a person switched them off on purpose).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from inventory.choices import PortStatus
from inventory.models import Port
from projects.evidence import evidence_changed_send

from ..choices import CableStatus
from ..models import Cable, CableEnd

CHUNK = 2000  # ids per statement
CAUSE_LENGTH = Cable._meta.get_field("status_cause").max_length
# A port a person disabled stays disabled, whatever the fabric says.
PORT_KEPT = frozenset({PortStatus.DISABLED})
# After a verifying scan: a port nothing was known about is now known to hold its cable. A port seen up
# or down by the fabric keeps what the fabric saw (a scan says where a cable is, not whether it works).
CONNECTED_FROM = frozenset({PortStatus.PLANNED})


def cause_text(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= CAUSE_LENGTH else text[: CAUSE_LENGTH - 1] + "…"


def _chunks(ids: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK]


# What cables_link_observe reads of a cable to decide its move.
DECIDING_FIELDS = ("pk", "status", "status_cause", "fabric_state", "fabric_checked_at", "verified_at",
                   "fabric_verified_at")


def _locked_cables(project, ids: Iterable[int]) -> list[Cable]:
    """The project's cables among `ids` (others ignored), locked until the transaction ends, in id order
    so that two writers never wait on each other in a circle. Only the fields that decide a move are
    read (`.only`): a fabric of 24,576 cables is read in a fraction of the time of whole rows."""
    wanted = sorted({int(pk) for pk in ids})
    cables: list[Cable] = []
    for chunk in _chunks(wanted):
        cables += (Cable.objects.select_for_update().filter(project=project, pk__in=chunk)
                   .only(*DECIDING_FIELDS).order_by("pk"))
    return cables


def _write_cables(changed: list[Cable], fields: list[str], *, user, cause: str, at: datetime) -> None:
    """One UPDATE per group of cables moving to the same values, then their history rows in bulk."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for cable in changed:
        groups[tuple(getattr(cable, name) for name in fields)].append(cable.pk)
    for values, ids in groups.items():
        for chunk in _chunks(ids):
            Cable.objects.filter(pk__in=chunk).update(**dict(zip(fields, values, strict=True)))
    # The history rows copy whole rows: read the changed ones whole (the decision read only a few fields).
    whole = [cable for chunk in _chunks(sorted(c.pk for c in changed))
             for cable in Cable.objects.filter(pk__in=chunk).order_by("pk")]
    Cable.history.bulk_history_create(whole, batch_size=CHUNK, update=True, default_user=user,
                                      default_change_reason=cause, default_date=at)


def ports_move(
    *, port_ids: Iterable[int], to: str, cause: str, user=None, at: datetime | None = None,
    only_from: frozenset[str] | None = None, ports: Iterable[Port] | None = None,
) -> int:
    """Move ports to status `to` with `cause` and a history row each: those in `only_from` when given,
    else any but a disabled one. `ports` may hand over the rows already loaded (no read). Returns how
    many moved."""
    cause = cause_text(cause)
    if ports is None:  # only the rows that will move are read: a comparison that changes nothing reads none
        ids = sorted(set(port_ids))
        movable = Port.objects.exclude(status=to).exclude(status__in=PORT_KEPT)
        if only_from is not None:
            movable = movable.filter(status__in=only_from)
        ports = [p for chunk in _chunks(ids) for p in movable.filter(pk__in=chunk).order_by("pk")]
    moving = [
        port for port in ports
        if port.status != to and port.status not in PORT_KEPT and (only_from is None or port.status in only_from)
    ]
    if not moving:
        return 0
    for port in moving:
        port.status, port.status_cause = to, cause
    # The UPDATE repeats the condition: a port another writer moved since it was read is left as it is now.
    still_movable = Port.objects.exclude(status__in=PORT_KEPT)
    if only_from is not None:
        still_movable = still_movable.filter(status__in=only_from)
    for chunk in _chunks([port.pk for port in moving]):
        still_movable.filter(pk__in=chunk).update(status=to, status_cause=cause)
    Port.history.bulk_history_create(moving, batch_size=CHUNK, update=True, default_user=user,
                                     default_change_reason=cause, default_date=at or timezone.now())
    return len(moving)


def _end_ports(cable_ids: Iterable[int]) -> dict[int, list[int]]:
    ports: dict[int, list[int]] = defaultdict(list)
    for chunk in _chunks(sorted(set(cable_ids))):
        for cable_id, port_id in CableEnd.objects.filter(cable_id__in=chunk).values_list("cable_id", "port_id"):
            ports[cable_id].append(port_id)
    return ports


def _move_ports_of(cables_to: dict[int, str], *, cause_of: dict[int, str], user, at: datetime) -> None:
    """Each cable's ports to the port status given for it, grouped so one cause makes one batch."""
    ports_of = _end_ports(cables_to)
    batches: dict[tuple[str, str], list[int]] = defaultdict(list)
    for cable_id, status in cables_to.items():
        batches[(status, cause_of[cable_id])] += ports_of.get(cable_id, [])
    for (status, cause), port_ids in batches.items():
        ports_move(port_ids=port_ids, to=status, cause=cause, user=user, at=at)


@transaction.atomic
def cables_link_observe(
    *, project, ok: Iterable[int], failed: dict[int, str], at: datetime, cause: str, user=None
) -> int:
    """What a link-health run saw, by cable id (ids of other projects are ignored): `ok` links make a
    planned cable installed and its ports up; `failed` ones (id -> short reason) make the cable faulty
    and its ports down, status_cause naming the run (`cause`) and the reason. A cable in both is taken
    as failed. Returns how many cables changed status."""
    ok_ids = set(ok) - set(failed)
    causes = {pk: cause_text(f"{cause}: {reason}" if reason else cause) for pk, reason in failed.items()}
    causes.update(dict.fromkeys(ok_ids, cause_text(cause)))
    changed: list[Cable] = []
    ports_to: dict[int, str] = {}
    for cable in _locked_cables(project, causes):
        if cable.pk in failed:
            target, ports_to[cable.pk] = CableStatus.FAULTY, PortStatus.DOWN
        else:
            target = CableStatus.INSTALLED if cable.status == CableStatus.PLANNED else cable.status
            ports_to[cable.pk] = PortStatus.UP
        if target != cable.status:  # never to verified: a verified cable that moves leaves it
            cable.status, cable.status_cause, cable.fabric_verified_at = target, causes[cable.pk], None
            changed.append(cable)
    by_cause: dict[str, list[Cable]] = defaultdict(list)
    for cable in changed:
        by_cause[cable.status_cause].append(cable)
    for reason, cables in by_cause.items():
        _write_cables(cables, ["status", "status_cause", "fabric_verified_at"], user=user, cause=reason, at=at)
    _move_ports_of(ports_to, cause_of=causes, user=user, at=at)
    if changed:
        evidence_changed_send(project_id=project.pk, what="cable")  # the stage gates read cable states
    return len(changed)
