"""inventory's hand-written SQL, behind the fence (docs/architecture.md; tests/test_sql_fence.py): the
statements inventory writes out instead of having the ORM compile them, each a named function its callers
call (inventory.services.identities). tests/inventory/test_sql.py holds each to the ORM's answer on the same
rows.

Why SQL: a whole fabric's identities (16,384 MACs at 1,024 servers) are learned at once. Django's bulk_update
would build a CASE of one WHEN per row and spend most of a minute compiling it; on PostgreSQL the learning,
the clearing and their history rows are one statement the ORM cannot say (data-modifying CTEs)."""

from __future__ import annotations

from datetime import datetime

from django.db import connection

from core.bulk_history import bulk_written, history_insert_from, tracked_columns
from projects.models import Project

from .models import Device, Port

CHUNK = 2000  # rows per statement: well under SQLite's and PostgreSQL's limits on parameters


def _in_project(model, project: Project, alias: str) -> tuple[str, list]:
    """The project's rows of `model` (a device, or a port of one of its devices) as a condition on the row
    `alias` of `model`'s table, with its params: for a port, by its device_id, so the port table is not read a
    second time."""
    devices, params = Device.objects.filter(project=project).order_by().values("pk").query.sql_with_params()
    column = model._meta.pk.column if model is Device else Port._meta.get_field("device").column
    return f"{alias}.{connection.ops.quote_name(column)} IN ({devices})", list(params)


def identities_learn_recorded(*, model, field: str, values: dict[int, str], project: Project, user, reason: str,
                              at: datetime) -> int:
    """Give each of the project's rows of `model` (Device or Port) named in `values` ({id: value}) its value in
    `field` where it differs, clear `field` on the project's other rows that held a value just learned, and
    write a history row ("~", `at`, `reason`, `user`) for each row either changed; returns how many rows
    changed. What the ORM would do with a read, an update per value and history_copy, as one statement
    (data-modifying CTEs; the ids and values are two array parameters, whatever their number). `cleared` reads
    the rows that held a learned value in the statement's snapshot, before `learned` wrote, and leaves out those
    `learned` wrote: no row is updated twice. PostgreSQL only (core.bulk_history.update_recorded_supported)."""
    quote, meta = connection.ops.quote_name, bulk_written(model)._meta
    table, pk, column = quote(meta.db_table), quote(meta.pk.column), quote(meta.get_field(field).column)
    scope, scope_params = _in_project(model, project, "t")
    recorded, history = history_insert_from(
        model, "(SELECT * FROM learned UNION ALL SELECT * FROM cleared) AS moved", user=user, reason=reason, at=at)
    returning = tracked_columns(model, alias="t")
    with connection.cursor() as cursor:
        cursor.execute(  # the names are the model's own, the scope the ORM's SQL; every value is a parameter
            f"WITH v(pk, value) AS (SELECT * FROM unnest(%s::bigint[], %s::text[])), "
            f"learned AS (UPDATE {table} AS t SET {column} = v.value FROM v WHERE t.{pk} = v.pk "
            f"AND t.{column} <> v.value AND {scope} RETURNING {returning}), "
            f"cleared AS (UPDATE {table} AS t SET {column} = '' WHERE t.{column} IN (SELECT {column} FROM learned) "
            f"AND t.{pk} NOT IN (SELECT {pk} FROM learned) AND {scope} RETURNING {returning}), "
            f"recorded AS ({recorded}) "
            "SELECT (SELECT COUNT(*) FROM learned) + (SELECT COUNT(*) FROM cleared)",
            [list(values), list(values.values()), *scope_params, *scope_params, *history],
        )
        return cursor.fetchone()[0]


def field_values_update(*, model, field: str, values: list[tuple[int, str]]) -> None:
    """Give each row of `model` among `values` ([(id, value)]) its own value in `field`: what
    Model.objects.bulk_update would write, in one statement per CHUNK rows (WITH v AS (VALUES ...) UPDATE ...
    FROM v, which PostgreSQL and SQLite 3.33+ both take). bulk_update would build a CASE of one WHEN per row and
    spend most of a minute compiling it for the 16,384 ports of a 1,024-server fabric. No history row: the
    caller copies them (core.bulk_history.history_copy)."""
    table = connection.ops.quote_name(bulk_written(model)._meta.db_table)
    column = connection.ops.quote_name(model._meta.get_field(field).column)
    with connection.cursor() as cursor:
        for start in range(0, len(values), CHUNK):
            chunk = values[start:start + CHUNK]
            rows = ", ".join(["(%s, %s)"] * len(chunk))
            params = [item for pair in chunk for item in pair]
            cursor.execute(  # the table and column names are the model's own; the values are parameters
                f"WITH v(id, value) AS (VALUES {rows}) UPDATE {table} SET {column} = v.value FROM v "
                f"WHERE {table}.id = v.id",
                params,
            )
