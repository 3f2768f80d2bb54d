"""The rack units a device claims: one DeviceUnit row per unit and face, kept in step with the device by
the services. The database's unique (rack, unit, face) is what refuses two devices in one U whatever
races happen; these functions turn that refusal into the ValidationError clean() would have given."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from ..models import Device, DeviceUnit
from ..rack_space import units_of

# The code of a refusal because someone else was first (inventory.services.CONFLICT is this one).
CONFLICT = "conflict"

BULK_BATCH = 1000  # rows per INSERT


def unit_claims(device: Device) -> list[DeviceUnit]:
    """The unsaved claims of a racked device (none for a device out of any rack)."""
    if device.rack_id is None:
        return []
    return [
        DeviceUnit(device=device, rack_id=device.rack_id, unit=u, face=face)
        for u in units_of(device.position_u, device.hardware_model.height_u)
        for face in device.occupied_faces()
    ]


def units_claim(*, device: Device) -> None:
    """Replace the device's claims with the units it occupies now (after it was created or moved)."""
    DeviceUnit.objects.filter(device=device).delete()
    try:
        with transaction.atomic():
            DeviceUnit.objects.bulk_create(unit_claims(device))
    except IntegrityError as exc:
        # Checked free before; taken now: another device claimed it in the meantime (a scan's conflict).
        raise ValidationError({"position_u": ValidationError(
            f"Rack {device.rack} U{device.position_u}: already taken.", code=CONFLICT)}) from exc


def units_claim_bulk(*, devices: list[Device]) -> None:
    """Claim the units of many new devices in a few inserts; their places were checked before."""
    rows = [row for device in devices for row in unit_claims(device)]
    try:
        with transaction.atomic():
            DeviceUnit.objects.bulk_create(rows, batch_size=BULK_BATCH)
    except IntegrityError as exc:  # a claim made since the check: the database has the last word
        raise ValidationError("A rack unit was taken by another device while these devices were created.") from exc
