"""The rack units a device claims: one DeviceUnit row per unit and face, kept in step with the device by
the services. The database's unique (rack, unit, face) is what refuses two devices in one U whatever
races happen; these functions turn that refusal into the ValidationError clean() would have given."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from core.bulk_history import insert_rows

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


class DevicesRefused(ValidationError):
    """A refusal of many devices at once that keeps, beside each message, the name of the device it is about
    (`refusals`: [(device name, message)]), so an import can name each one's row. Its messages (what a plan
    apply shows) are "<device>: <message>", at most `shown` of them and a last one saying how many more."""

    def __init__(self, refusals: list[tuple[str, str]], *, shown: int = 20):
        self.refusals = list(refusals)
        messages = [device_message(name, message) for name, message in self.refusals[:shown]]
        if len(self.refusals) > shown:
            messages.append(f"... and {len(self.refusals) - shown} more like these")
        super().__init__(messages)


def device_message(name: str, message: str) -> str:
    """A message about one device of many, with its name in front unless it already starts with it."""
    return message if not name or message.startswith(name) else f"{name}: {message}"


def units_claim_bulk(*, devices: list[Device], at: datetime | None = None) -> None:
    """Claim the units of many new devices in one bulk insert (core.bulk_history.insert_rows: COPY on
    PostgreSQL); their places were checked before. A claim the database refuses (made since the check) raises
    DevicesRefused naming each device whose units were taken."""
    rows = [
        {"device_id": claim.device.pk, "rack_id": claim.rack_id, "unit": claim.unit, "face": claim.face}
        for device in devices
        for claim in unit_claims(device)
    ]
    try:
        with transaction.atomic():
            insert_rows(DeviceUnit, rows, at=at)
    except IntegrityError as exc:  # a claim made since the check: the database has the last word
        raise DevicesRefused(_claim_clashes(devices, rows) or [
            ("", "A rack unit was taken by another device while these devices were created.")]) from exc


def _claim_clashes(devices: list[Device], rows: list[dict]) -> list[tuple[str, str]]:
    """Which devices' claims clash, and with whom: read on the error path only (one query), against the claims
    the database holds and those the batch makes itself. One message per device, at its first taken unit."""
    names = {device.pk: device.name for device in devices}
    racks = {device.rack_id: device.rack for device in devices if device.rack_id}
    held = {
        (rack_id, unit, face): name
        for rack_id, unit, face, name in DeviceUnit.objects.filter(rack_id__in=racks).values_list(
            "rack_id", "unit", "face", "device__name")
    }
    clashes: dict[str, str] = {}
    for row in rows:
        key, name = (row["rack_id"], row["unit"], row["face"]), names[row["device_id"]]
        other = held.setdefault(key, name)
        if other != name and name not in clashes:
            clashes[name] = f"U{row['unit']} of rack {racks[row['rack_id']].name} is already taken by {other}."
    return list(clashes.items())
