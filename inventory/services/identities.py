"""Identities the fabric reports, recorded on devices and ports as they are learned: a switch's (or host's)
InfiniBand node GUID on the device, an HCA port's GUID or an Ethernet port's MAC on the port. A topology
comparison learns them (validation.topology) and matches on them from then on, so a host renamed in its OS
is still found by its GUID.

Values arrive normalised (cabling.codes.normalize_guid_mac spells them: 16 lower-case hex digits for a
GUID, six colon-separated pairs for a MAC); inventory sits below cabling and cannot import it, so they are
only checked here. An identity belongs to one device or port of a project: learning it on one clears it
from any other that held it (a moved HCA, a swapped NIC). Every change keeps a history row, in bulk (copied
by the database: core.bulk_history).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from core.bulk_history import history_copy
from delivery.models import Project

from ..models import Device, Port

_GUID = re.compile(r"^[0-9a-f]{16}$")
_MAC = re.compile(r"^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$")
CHUNK = 2000


def _checked(values: Mapping[int, str], field: str, *, macs: bool) -> dict[int, str]:
    bad = sorted(str(v)[:40] for v in values.values() if not (_GUID.match(str(v)) or (macs and _MAC.match(str(v)))))
    if bad:
        what = "GUIDs (16 lower-case hex digits)" + (" or MACs (aa:bb:cc:dd:ee:ff)" if macs else "")
        raise ValidationError({field: f"Not {what}: {', '.join(bad[:5])}."})
    return {int(pk): str(value) for pk, value in values.items()}


def _chunks(items: list) -> list[list]:
    return [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]


@transaction.atomic
def identities_record(
    *, project: Project, device_guids: Mapping[int, str] | None = None, port_ids: Mapping[int, str] | None = None,
    user=None, cause: str = "",
) -> int:
    """Record `device_guids` (device id -> node GUID) and `port_ids` (port id -> GUID or MAC) on the
    project's devices and ports (ids of other projects are ignored). Returns how many rows changed."""
    guids = _checked(device_guids or {}, "device_guids", macs=False)
    ids = _checked(port_ids or {}, "port_ids", macs=True)
    reason = cause or "learned from the fabric"
    changed_devices: list[Device] = []
    for chunk in _chunks(sorted(guids)):
        for device in Device.objects.filter(project=project, pk__in=chunk):
            if device.node_guid != guids[device.pk]:
                device.node_guid = guids[device.pk]
                changed_devices.append(device)
    learned = {d.node_guid for d in changed_devices}
    moving = {d.pk for d in changed_devices}
    for chunk in _chunks(sorted(learned)):
        for device in Device.objects.filter(project=project, node_guid__in=chunk):
            if device.pk not in moving:
                device.node_guid = ""
                changed_devices.append(device)
    changed_ports: list[Port] = []
    for chunk in _chunks(sorted(ids)):
        for port in Port.objects.filter(device__project=project, pk__in=chunk):
            if port.guid_mac != ids[port.pk]:
                port.guid_mac = ids[port.pk]
                changed_ports.append(port)
    learned = {p.guid_mac for p in changed_ports}
    moving = {p.pk for p in changed_ports}
    for chunk in _chunks(sorted(learned)):
        for port in Port.objects.filter(device__project=project, guid_mac__in=chunk):
            if port.pk not in moving:
                port.guid_mac = ""
                changed_ports.append(port)
    now = timezone.now()
    for model, rows, field in ((Device, changed_devices, "node_guid"), (Port, changed_ports, "guid_mac")):
        if rows:
            _update_each(model, field, [(row.pk, getattr(row, field)) for row in rows])
            history_copy(model, [row.pk for row in rows], user=user, reason=reason, at=now)
    return len(changed_devices) + len(changed_ports)


def _update_each(model, field: str, values: list[tuple[int, str]]) -> None:
    """Give each row its own value, in one statement per chunk: WITH v AS (VALUES ...) UPDATE ... FROM v,
    which PostgreSQL and SQLite (3.33+) both take. Django's bulk_update would build a CASE of one WHEN per row
    and spend most of a minute compiling it for the 16,384 ports of a 1,024-server fabric."""
    table = connection.ops.quote_name(model._meta.db_table)
    column = connection.ops.quote_name(model._meta.get_field(field).column)
    with connection.cursor() as cursor:
        for chunk in _chunks(values):
            rows = ", ".join(["(%s, %s)"] * len(chunk))
            params = [item for pair in chunk for item in pair]
            cursor.execute(  # the table and column names are the model's own; the values are parameters
                f"WITH v(id, value) AS (VALUES {rows}) UPDATE {table} SET {column} = v.value FROM v "
                f"WHERE {table}.id = v.id",
                params,
            )
