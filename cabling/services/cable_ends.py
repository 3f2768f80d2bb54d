"""Writes to cable ends themselves, outside a scan: a manager's as-built change (the end is really in
another port than the plan said)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from inventory.choices import PortStatus
from inventory.models import Port
from inventory.services import CONFLICT, person
from projects.access import Capability, can

from ..choices import CableStatus, Side
from ..codes import cable_end_code
from ..models import Cable, CableEnd
from ..sql import cable_ends_with_places, cable_locked
from .evidence import cause_text, ports_move


def locked_ends(cable_id: int, *, locked: Cable | None = None) -> list[CableEnd]:
    """A cable's ends, their cable row locked until the transaction ends: every writer of a cable's ends
    (a scan, a repatch) locks the cable first, so two of them queue one after the other. The ends are read
    once the lock is held, so the second sees what the first wrote (a join read in the locking query itself
    could be a stale row of another table). With what a scan's answer shows of each end (its rack, top U,
    who confirmed it), in two hand-written reads (cabling.sql: at 200 scans a second, compiling
    the ORM's joins would cost more than the scan). `locked`: the cable row, read locked already in this
    transaction (a scan's resolver reads it so: one statement less)."""
    cable = locked if locked is not None and locked.pk == cable_id else cable_locked(cable_id=cable_id)
    ends = cable_ends_with_places(cable_id=cable_id)
    for end in ends:
        end.cable = cable  # one row shared by all its ends: a change made through one is seen through all
    return ends


def end_code(end: CableEnd, ends: list[CableEnd]) -> str:
    """`C00417/A`, `C00417/B`, `C00417/B2` of an end among its cable's ends."""
    b_ends = sum(1 for e in ends if e.side == Side.B)
    return cable_end_code(end.cable.label, end.side, end.position, b_ends=b_ends)


@transaction.atomic
def cable_end_repatch(*, end: CableEnd, port: Port, user, reason: str) -> CableEnd:
    """Record an as-built change: `end` is really in `port`, a free port of the same project. Managers
    only. The end's confirmation goes (it was of the old port: scan it again), a cable verified in its
    old place goes back to installed, and the old port, if it was connected, back to planned; every
    change names the repatch as its cause.

    Two cables claimed for one port at the same moment: the one-cable-per-port unique constraint lets
    exactly one through; the other is refused as a conflict naming the winner, never an error."""
    reason = " ".join(str(reason or "").split())
    if not reason:
        raise ValidationError({"reason": "Say why the end moved (what you found on the floor)."})
    ends = locked_ends(end.cable_id)
    end = next(e for e in ends if e.pk == end.pk)
    cable = end.cable
    if not can(user, Capability.MANAGE_PROJECT, cable.project_id):
        raise PermissionDenied("Only the project's managers record an as-built change.")
    port = Port.objects.select_related("device").get(pk=port.pk)
    if port.device.project_id != cable.project_id:
        raise ValidationError({"port": "The port belongs to another project."})
    code, old_port = end_code(end, ends), end.port
    if port.pk == old_port.pk:
        raise ValidationError({"port": f"{code} is already planned in {port}."})
    holder = CableEnd.objects.filter(port=port).select_related("cable").first()
    if holder is not None:
        raise ValidationError({"port": f"{port} already carries {holder.cable.label}; move or remove that one first."})
    cause = cause_text(f"Repatched by {person(user)}: {code} moved from {old_port} to {port} ({reason}).")
    end.port, end.confirmed_at, end.confirmed_by = port, None, None
    end.full_clean(exclude=["cable", "port", "confirmed_by"], validate_unique=False, validate_constraints=False)
    end._history_user, end._change_reason = user, cause
    try:
        with transaction.atomic():
            end.save(update_fields=["port", "confirmed_at", "confirmed_by"])
    except IntegrityError as exc:  # another end took the port since the check: the database decided
        winner = CableEnd.objects.filter(port=port).select_related("cable").first()
        taken_by = winner.cable.label if winner else "another cable"
        raise ValidationError(f"{port} was just taken by {taken_by}; {code} stays in {old_port}.",
                              code=CONFLICT) from exc
    if cable.status == CableStatus.VERIFIED:
        cable.status, cable.status_cause, cable.fabric_verified_at = CableStatus.INSTALLED, cause, None
        cable._history_user, cable._change_reason = user, cause
        cable.save(update_fields=["status", "status_cause", "fabric_verified_at"])
    ports_move(port_ids=(), ports=[old_port], to=PortStatus.PLANNED, cause=cause, user=user, at=timezone.now(),
               only_from=frozenset({PortStatus.CONNECTED}))
    return end
