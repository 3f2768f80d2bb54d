"""Reads of the floor's API: scan events and cables with everything their answers show (each end's rack,
U, device, port, optic and who confirmed it), scoped to what the user may see, in a fixed number of
queries whatever the number of rows."""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Prefetch, QuerySet

from core.rows import Columns, columns_of, fetch, joined
from inventory.models import Device, HardwareModel, Port, Rack
from projects.access import scope_to_user

from .models import Cable, CableEnd, ScanEvent

# What an end shows: its port, the device with its rack and model (for the top U), who confirmed it.
END_RELATIONS = ("port__device__rack", "port__device__hardware_model", "confirmed_by")


def ends_for_answers() -> QuerySet[CableEnd]:
    return CableEnd.objects.select_related(*END_RELATIONS).order_by("side", "position")


def with_ends(cables: QuerySet[Cable], prefix: str = "") -> QuerySet:
    """Prefetch each cable's ends into `end_list` (one query for all of them)."""
    return cables.prefetch_related(Prefetch(f"{prefix}ends", queryset=ends_for_answers(), to_attr="end_list"))


def cable_list_for_api(*, user) -> QuerySet[Cable]:
    """Every cable the user may see, with its ends (2 queries a page), in label order."""
    cables = scope_to_user(Cable.objects.all(), user).select_related("verified_by")
    return with_ends(cables).order_by("label", "pk")


def scan_list_rows() -> QuerySet[ScanEvent]:
    """Scan events with what each resolved to: its device (rack, model), optic (its port), port, cable and
    its ends (2 queries for any number of events). Not scoped: scan_list is, for the API's lists."""
    scans = ScanEvent.objects.select_related(
        "project", "user", "device__rack", "device__hardware_model", "device__racked_by", "optic__port__device",
        "optic__installed_by", "port__device", "cable__verified_by",
    )
    return scans.prefetch_related(Prefetch("cable__ends", queryset=ends_for_answers(), to_attr="end_list"))


def scan_list(*, user) -> QuerySet[ScanEvent]:
    """Every scan the user may see, newest first, with what each resolved to (scan_list_rows)."""
    return scope_to_user(scan_list_rows(), user).order_by("-created_at", "-id")


# --- the scan's hot path: hand-written joins (core.rows says why) ----------------------------------------------
# Not scoped, like scan_list_rows: a scan reads a cable its service found in a project it checked.


@cache
def _end_rows() -> tuple[str, tuple[Columns, ...]]:
    """A cable's ends with everything END_RELATIONS loads."""
    # The rack, the model and who confirmed it are read for what the answer and the reasons show of them.
    parts = (columns_of(CableEnd, "e"), columns_of(Port, "p"), columns_of(Device, "d"),
             columns_of(Rack, "r", ("name",)), columns_of(HardwareModel, "h", ("height_u",)),
             columns_of(get_user_model(), "u", ("username", "first_name", "last_name")))
    sql = (
        f'SELECT {", ".join(part.sql for part in parts)} FROM "cabling_cableend" e '
        'JOIN "inventory_port" p ON p."id" = e."port_id" '
        'JOIN "inventory_device" d ON d."id" = p."device_id" '
        'LEFT JOIN "inventory_rack" r ON r."id" = d."rack_id" '
        'JOIN "inventory_hardwaremodel" h ON h."id" = d."hardware_model_id" '
        f'LEFT JOIN "{get_user_model()._meta.db_table}" u ON u."id" = e."confirmed_by_id" '
        'WHERE e."cable_id" = %s ORDER BY e."side", e."position"'
    )
    return sql, parts


def cable_ends_with_places(cable_id: int) -> list[CableEnd]:
    """A cable's ends in side and leg order, each with what END_RELATIONS loads: its port, device, rack and
    hardware model, and who confirmed it (one query)."""
    sql, parts = _end_rows()
    ends = []
    for row in fetch(sql, [cable_id]):
        end, port, device, rack, model, confirmed_by = joined(row, *parts)
        device.rack, device.hardware_model = rack, model
        port.device = device
        end.port, end.confirmed_by = port, confirmed_by
        ends.append(end)
    return ends


def cable_locked(cable_id: int) -> Cable:
    """The cable row, locked until the transaction ends (no lock where the database has none: SQLite
    serialises its writers anyway). Cable.DoesNotExist when it is gone."""
    cable = columns_of(Cable, "c")
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    rows = fetch(f'SELECT {cable.sql} FROM "cabling_cable" c WHERE c."id" = %s{lock}', [cable_id])
    if not rows:
        raise Cable.DoesNotExist(f"No cable {cable_id}.")
    return cable.build(rows[0])


@cache
def _device_rows() -> tuple[str, tuple[Columns, ...]]:
    """A device with what a scan's answer shows of it: its rack, its model and who racked it."""
    user_model = get_user_model()
    parts = (columns_of(Device, "d"), columns_of(Rack, "r"), columns_of(HardwareModel, "h"),
             columns_of(user_model, "u", ("username", "first_name", "last_name")))
    sql = (
        f'SELECT {", ".join(part.sql for part in parts)} FROM "inventory_device" d '
        'LEFT JOIN "inventory_rack" r ON r."id" = d."rack_id" '
        'JOIN "inventory_hardwaremodel" h ON h."id" = d."hardware_model_id" '
        f'LEFT JOIN "{user_model._meta.db_table}" u ON u."id" = d."racked_by_id" '
        'WHERE d."id" = %s'
    )
    return sql, parts


def device_with_place(device_id: int) -> Device:
    """The device with its rack, model and who racked it (what select_related("rack", "hardware_model",
    "racked_by") loads), in one written-out read. Device.DoesNotExist when it is gone."""
    sql, parts = _device_rows()
    rows = fetch(sql, [device_id])
    if not rows:
        raise Device.DoesNotExist(f"No device {device_id}.")
    device, rack, model, racked_by = joined(rows[0], *parts)
    device.rack, device.hardware_model, device.racked_by = rack, model, racked_by
    return device
