"""cabling's hand-written SQL, behind the fence (docs/architecture.md; tests/test_sql_fence.py): every
statement cabling writes out instead of having the ORM compile it, each a named function its callers call
(the scan's reads in cabling.services.cable_ends, cabling.search and cabling.api.scans; the topology's moves
in cabling.services.fabric_states). tests/cabling/test_sql.py holds each to the ORM's answer on the same rows.

Two reasons for SQL here, each function says which:
- the scan's hot path. A scan must cost a few milliseconds of CPU in all (200 a second on two cores), and
  compiling an ORM query with its joins costs 0.5 to 2 ms of them, ten times what running it costs: these
  reads are written out once (core.rows builds the instances as the ORM would). Not scoped: a scan reads
  what its service found in a project it checked.
- a whole fabric's moves: an UPDATE ... RETURNING, or the UPDATE and its history rows in one statement
  (core.bulk_history.update_recorded), which the ORM cannot say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from functools import cache

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import QuerySet

from core.bulk_history import bulk_written, update_recorded
from core.rows import Columns, columns_of, fetch, joined
from inventory.models import Device, HardwareModel, Optic, Port, Rack

from .models import Cable, CableEnd

# --- the scan's reads: a cable's ends, the cable locked, a device with its place ------------------------------


@cache
def _end_rows() -> tuple[str, tuple[Columns, ...]]:
    """A cable's ends with what cabling.scan_selectors.END_RELATIONS loads."""
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


def cable_ends_with_places(*, cable_id: int) -> list[CableEnd]:
    """A cable's ends in side and leg order, each with its port, device, rack (its name) and hardware model (its
    height), and who confirmed it (their names): what select_related("port__device__rack",
    "port__device__hardware_model", "confirmed_by") loads, in one written-out read (the scan's hot path)."""
    sql, parts = _end_rows()
    ends = []
    for row in fetch(sql, [cable_id]):
        end, port, device, rack, model, confirmed_by = joined(row, *parts)
        device.rack, device.hardware_model = rack, model
        port.device = device
        end.port, end.confirmed_by = port, confirmed_by
        ends.append(end)
    return ends


def cable_locked(*, cable_id: int) -> Cable:
    """The cable row, locked until the transaction ends (no lock where the database has none: SQLite
    serialises its writers anyway): Cable.objects.select_for_update().get(pk=cable_id), written out (the scan's
    hot path). Cable.DoesNotExist when it is gone."""
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


def device_with_place(*, device_id: int) -> Device:
    """The device with its rack, model and who racked it (what select_related("rack", "hardware_model",
    "racked_by") loads), in one written-out read (a scan's answer). Device.DoesNotExist when it is gone."""
    sql, parts = _device_rows()
    rows = fetch(sql, [device_id])
    if not rows:
        raise Device.DoesNotExist(f"No device {device_id}.")
    device, rack, model, racked_by = joined(rows[0], *parts)
    device.rack, device.hardware_model, device.racked_by = rack, model, racked_by
    return device


# --- the scan's lookups of a code (cabling.search) -----------------------------------------------------------
# Text is matched as the ORM's `iexact` does, UPPER(column) = UPPER(code), so the expression indexes serve them
# (tests/cabling/test_codes_and_search.py holds each lookup to its index). All of one project, at most `limit`.


def _upper(alias: str, column: str) -> str:
    """`UPPER(alias."column")` as the ORM writes an iexact (PostgreSQL casts to text first), so that the
    expression index on it is used."""
    cast = "::text" if connection.vendor == "postgresql" else ""
    return f'UPPER({alias}."{column}"{cast})'


@cache
def _cable_end_sql(lock: bool, limit: int):
    parts = (columns_of(CableEnd, "e"), columns_of(Cable, "c"), columns_of(Port, "p"), columns_of(Device, "d"))
    sql = (
        f'SELECT {", ".join(part.sql for part in parts)} FROM "cabling_cableend" e '
        'JOIN "cabling_cable" c ON c."id" = e."cable_id" JOIN "inventory_port" p ON p."id" = e."port_id" '
        'JOIN "inventory_device" d ON d."id" = p."device_id" '
        f'WHERE c."project_id" = %s AND {_upper("c", "label")} = UPPER(%s) AND e."side" = %s '
        f'ORDER BY e."position" LIMIT {int(limit)}'
        # The cable row only: it is what every writer of a cable's ends locks first (cable_ends.locked_ends),
        # and the locked row is read as it is now; the ends' own columns may be older, so they are read again.
        + (' FOR UPDATE OF c' if lock else '')
    )
    return sql, parts


def cable_ends_by_code(*, project_id: int, label: str, side: str, limit: int, lock: bool = False) -> list[CableEnd]:
    """The ends on `side` of the project's cable labelled `label` (any case), in leg order, each with its cable
    and its port and the port's device: CableEnd.objects.select_related("cable", "port__device")
    .filter(cable__project_id=..., cable__label__iexact=label, side=side).order_by("position")[:limit],
    written out (the scan's hot path). `lock` (inside a transaction): the cable row is read locked (FOR UPDATE
    OF the cable), where the database has row locks."""
    sql, parts = _cable_end_sql(lock and connection.features.has_select_for_update, limit)
    ends = []
    for row in fetch(sql, [project_id, label, side]):
        end, cable, port, device = joined(row, *parts)
        port.device = device
        end.cable, end.port = cable, port
        ends.append(end)
    return ends


def _ports_with_devices(sql: str, parts, params) -> list[Port]:
    found = []
    for row in fetch(sql, params):
        port, device = joined(row, *parts)
        port.device = device
        found.append(port)
    return found


@cache
def _port_sql(limit: int):
    parts = (columns_of(Port, "p"), columns_of(Device, "d"))
    sql = (
        f'SELECT {", ".join(part.sql for part in parts)} FROM "inventory_port" p '
        'JOIN "inventory_device" d ON d."id" = p."device_id" '
        f'WHERE d."project_id" = %s AND {_upper("d", "name")} = UPPER(%s) AND {_upper("p", "name")} = UPPER(%s) '
        f'ORDER BY p."device_id", p."id" LIMIT {int(limit)}'
    )
    return sql, parts


def ports_by_name(*, project_id: int, device: str, port: str, limit: int) -> list[Port]:
    """The project's ports named `port` on a device named `device` (both any case), each with its device:
    Port.objects.select_related("device").filter(device__project_id=..., device__name__iexact=device,
    name__iexact=port).order_by("device_id", "id")[:limit], written out (the scan's hot path)."""
    sql, parts = _port_sql(limit)
    return _ports_with_devices(sql, parts, [project_id, device, port])


@cache
def _exact_port_sql():
    parts = (columns_of(Port, "p"), columns_of(Device, "d"))
    sql = (
        f'SELECT {", ".join(part.sql for part in parts)} FROM "inventory_port" p '
        'JOIN "inventory_device" d ON d."id" = p."device_id" '
        'WHERE d."project_id" = %s AND d."name" = %s AND p."name" = %s'
    )
    return sql, parts


def port_by_names(*, project_id: int, device: str, port: str) -> Port | None:
    """The project's port `port` of the device `device`, names exactly as stored, with its device, or None:
    Port.objects.select_related("device").filter(device__project_id=..., device__name=device, name=port)
    .first(), written out (a scan's port label: the unique (project, name) and (device, name) indexes find it
    in one step)."""
    sql, parts = _exact_port_sql()
    found = _ports_with_devices(sql, parts, [project_id, device, port])
    return found[0] if found else None


@cache
def _text_sql(limit: int) -> dict[str, tuple]:
    """A cable by label; devices by serial, asset tag or name; optics (with their port) by serial."""
    cable, device = columns_of(Cable, "c"), columns_of(Device, "d")
    optic, port, port_device = columns_of(Optic, "o"), columns_of(Port, "p"), columns_of(Device, "pd")
    limit = int(limit)
    return {
        "cable": (f'SELECT {cable.sql} FROM "cabling_cable" c WHERE c."project_id" = %s AND '
                  f'{_upper("c", "label")} = UPPER(%s) ORDER BY c."label" LIMIT {limit}', (cable,)),
        "device": (f'SELECT {device.sql} FROM "inventory_device" d WHERE d."project_id" = %s AND '
                   f'({_upper("d", "serial")} = UPPER(%s) OR {_upper("d", "asset_tag")} = UPPER(%s) OR '
                   f'{_upper("d", "name")} = UPPER(%s)) ORDER BY d."name" LIMIT {limit}', (device,)),
        "optic": (f'SELECT {optic.sql}, {port.sql}, {port_device.sql} FROM "inventory_optic" o '
                  'LEFT JOIN "inventory_port" p ON p."id" = o."port_id" '
                  'LEFT JOIN "inventory_device" pd ON pd."id" = p."device_id" '
                  f'WHERE o."project_id" = %s AND {_upper("o", "serial")} = UPPER(%s) '
                  f'ORDER BY o."part_number", o."serial" LIMIT {limit}', (optic, port, port_device)),
    }


def cables_by_label(*, project_id: int, text: str, limit: int) -> list[Cable]:
    """The project's cables labelled `text` (any case): Cable.objects.filter(project_id=...,
    label__iexact=text).order_by("label")[:limit], written out (the scan's hot path)."""
    sql, (cable,) = _text_sql(limit)["cable"]
    return [cable.build(row) for row in fetch(sql, [project_id, text])]


def devices_by_text(*, project_id: int, text: str, limit: int) -> list[Device]:
    """The project's devices whose serial, asset tag or name is `text` (any case): Device.objects.filter(
    Q(serial__iexact=text) | Q(asset_tag__iexact=text) | Q(name__iexact=text), project_id=...)
    .order_by("name")[:limit], written out (the scan's hot path)."""
    sql, (device,) = _text_sql(limit)["device"]
    return [device.build(row) for row in fetch(sql, [project_id, text, text, text])]


def optics_by_serial(*, project_id: int, text: str, limit: int) -> list[Optic]:
    """The project's optics of serial `text` (any case), each with its port (None when in none) and the port's
    device: Optic.objects.select_related("port__device").filter(project_id=..., serial__iexact=text)
    .order_by("part_number", "serial")[:limit], written out (the scan's hot path)."""
    sql, parts = _text_sql(limit)["optic"]
    optics = []
    for row in fetch(sql, [project_id, text]):
        optic, port, port_device = joined(row, *parts)
        if port is not None:
            port.device = port_device
        optic.port = port
        optics.append(optic)
    return optics


# --- a topology comparison's moves of a whole fabric (cabling.services.fabric_states) ------------------------


def update_returning_supported() -> bool:
    """Whether the database takes UPDATE ... RETURNING: PostgreSQL does, SQLite from 3.35. Django has no
    feature flag for it (can_return_columns_from_insert speaks of INSERT only: MariaDB returns from an INSERT
    but not from an UPDATE), so the vendor and version decide."""
    if connection.vendor == "postgresql":
        return True
    if connection.vendor == "sqlite":
        return connection.Database.sqlite_version_info >= (3, 35)
    return False


def _port_selection(ports: Iterable[int] | QuerySet) -> tuple[str, list]:
    """(SQL, params) naming the ports: a list of ids as parameters, or a query of port ids (values("port_id"))
    as the ORM compiles it."""
    if isinstance(ports, QuerySet):
        sql, params = ports.query.sql_with_params()
        return sql, list(params)
    ids = list(ports)
    return ", ".join(["%s"] * len(ids)), ids


def _port_move_condition(ports, target: str, kept: Iterable[str]) -> tuple[str, list]:
    """WHERE of a port move, with its params: the ports named, not in `target` already, nor `kept` (a status
    a person set: disabled), checked on each row as it is written (a concurrent move is never overwritten)."""
    quote, meta = connection.ops.quote_name, Port._meta
    status, pk = quote(meta.get_field("status").column), quote(meta.pk.column)
    selection, params = _port_selection(ports)
    kept = sorted(kept)
    return (f"{pk} IN ({selection}) AND {status} <> %s AND {status} NOT IN ({', '.join(['%s'] * len(kept))})",
            [*params, target, *kept])


def ports_move_returning(*, ports: Iterable[int] | QuerySet, target: str, cause: str, kept: Iterable[str]
                         ) -> list[int]:
    """Move `ports` (ids, or a query of port ids) that are neither in `target` nor in one of the `kept`
    statuses to status `target` with `cause`, and return the ids it moved: Port.objects.filter(pk__in=ports)
    .exclude(status=target).exclude(status__in=kept).update(status=target, status_cause=cause), with the
    condition checked on each row as it is written and the ids it moved coming back from the same statement
    (UPDATE ... RETURNING: update_returning_supported). No history row: the caller copies them."""
    quote, meta = connection.ops.quote_name, bulk_written(Port)._meta
    status, status_cause = (quote(meta.get_field(name).column) for name in ("status", "status_cause"))
    where, params = _port_move_condition(ports, target, kept)
    with connection.cursor() as cursor:
        cursor.execute(  # the names are the model's own, a subquery the ORM's; every value is a parameter
            f"UPDATE {quote(meta.db_table)} SET {status} = %s, {status_cause} = %s WHERE {where} "
            f"RETURNING {quote(meta.pk.column)}",
            [target, cause, *params],
        )
        return [row[0] for row in cursor.fetchall()]


def ports_move_recorded(*, ports: Iterable[int] | QuerySet, target: str, cause: str, kept: Iterable[str], user,
                        at: datetime) -> int:
    """ports_move_returning's move (the same rows, the same condition checked on each row as it is written)
    with the history row of each port it moved ("~", `at`, `cause`, `user`) in the same statement; returns
    how many moved. No id goes to the database and back: on a whole fabric's first comparison that is 57,344
    ports, once. PostgreSQL only (core.bulk_history.update_recorded_supported)."""
    where, params = _port_move_condition(ports, target, kept)
    return update_recorded(Port, {"status": target, "status_cause": cause}, where, params, user=user, reason=cause,
                           at=at)


def cables_update_recorded(*, ids: list[int], values: Mapping[str, object], user, reason: str, at: datetime) -> int:
    """Cable.objects.filter(pk__in=ids).update(**values) with the history row of each cable it changed ("~",
    `at`, `reason`, `user`) in the same statement, the ids one array parameter whatever their number; returns
    how many changed. PostgreSQL only (core.bulk_history.update_recorded_supported)."""
    pk = connection.ops.quote_name(Cable._meta.pk.column)
    return update_recorded(Cable, values, f"{pk} = ANY(%s)", [list(ids)], user=user, reason=reason, at=at)
