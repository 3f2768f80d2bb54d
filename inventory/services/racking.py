"""Racking a device on the floor: a scan of its serial or asset tag, with the rack and U the technician
confirms. The device becomes racked (who and when recorded); it moves to another place only if that
place is free, by the same rack-space rules as every other write (Device.clean(), the unit claims)."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..choices import DeviceStatus
from ..models import Device, Rack
from .phrasing import moment, person
from .rack_units import CONFLICT, units_claim

# A device in one of these states stands in its rack: moving it is taking it out first, not a scan.
IN_A_RACK = frozenset({DeviceStatus.RACKED, DeviceStatus.POWERED, DeviceStatus.READY})
# CONFLICT (from rack_units): the refusal code a caller tells apart (ValidationError.code): someone else
# did it first.

@transaction.atomic
def device_rack(*, device: Device, rack: Rack, position_u: int, user, at: datetime | None = None) -> Device:
    """Record that `device` stands in `rack` at `position_u` (its lowest U), as `user` confirmed it.

    - A device not yet racked (planned, received) becomes racked there; if that is not its planned place,
      it moves, provided the units are free (else refused with who holds them).
    - A device already racked at that place is confirmed (who and when) without changing its status; one
      already confirmed there by someone else is a conflict naming them; by the same user, nothing changes.
    - A device already racked elsewhere is refused: it must be taken out there first.

    The device's row is locked for the transaction, so two scans of one device queue one after the other.
    Refusals are ValidationErrors in the technician's words (code CONFLICT when someone else was first)."""
    locked = (
        Device.objects.select_for_update(of=("self",))
        .select_related("rack", "hardware_model", "racked_by")
        .get(pk=device.pk)
    )
    if rack.project_id != locked.project_id:
        raise ValidationError({"rack": f"No rack {rack.name} in this project."})
    here = f"{rack.name} U{position_u}"
    same_place = locked.rack_id == rack.pk and locked.position_u == position_u
    if locked.status in IN_A_RACK and locked.rack_id and not same_place:
        raise ValidationError(
            f"{locked.name} is already racked in {locked.rack.name} U{locked.position_u}; take it out there first.",
            code="racked_elsewhere",
        )
    if same_place and locked.racked_at is not None:
        if locked.racked_by_id == getattr(user, "pk", None):
            return locked  # the same person scanning it again: nothing new to record
        raise ValidationError(
            f"{locked.name} was already racked in {here} by {person(locked.racked_by)} at {moment(locked.racked_at)}.",
            code=CONFLICT,
        )
    moved = not same_place
    locked.rack, locked.position_u = rack, position_u
    if locked.status not in IN_A_RACK:
        locked.status = DeviceStatus.RACKED
    locked.racked_at, locked.racked_by = at or timezone.now(), user
    locked.full_clean()  # the rack-space rules: inside the rack, no unit another device holds
    locked.save()
    if moved:
        units_claim(device=locked)  # the database's unique (rack, unit, face) has the last word
    return locked
