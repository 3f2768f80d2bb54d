"""History rows for many rows at once, copied by the database (INSERT ... SELECT), for the bulk writes of
whole fabrics: 24,576 cables, 50,000 ports.

simple_history's bulk_history_create builds one historical instance per row in Python and inserts them
through the ORM (most of a minute for a whole fabric on a busy machine); `history_copy` asks the database
to copy the rows just written into their historical table, which gives the same history rows (every
tracked field as it is now, the date, the user, the reason, "~"), a chunk of ids per statement. Like
bulk_history_create it sends no signal and honours SIMPLE_HISTORY_ENABLED.

`bulk_create_recorded` and `bulk_update_recorded` are the bulk writes of the plan apply and the inventory
import: the rows written by the ORM's bulk_create / bulk_update, then their history rows ("+" created, "~"
changed) copied by the database in a statement per 2,000 rows, all with one date, the author and a reason
that names the bulk operation ("Fabric plan X applied", "Imported from inventory.xlsx"), which is what an
object's history page shows (core.history). Measured at 1,024 servers (docs/performance.md, "What made each
figure"): the history of 100,000 ports, 24,576 cables and 49,152 ends costs a few seconds this way, against
most of the apply's minute through simple_history's Python-side bulk_history_create.

On PostgreSQL a write and its history rows can be one statement (a data-modifying CTE whose history INSERT
copies what the UPDATE returns, so the rows are found once and no id goes to the database and back):
`update_recorded` (one set of values for every row a condition selects: a topology comparison's cable and
port moves) and `history_insert_from` for a caller's own CTEs (the identities a comparison learns,
inventory.sql). `update_recorded_supported` says when that path is open; elsewhere the write goes first and
`history_copy` follows it.

This module and core.rows are core's bulk writers, inside the fence of hand-written SQL (docs/architecture.md;
tests/test_sql_fence.py). What they write sends no model signal: the models they write are listed in
BULK_WRITTEN_MODELS, every writer refuses another, and tests/core/test_bulk_writers.py fails if any receiver but
simple_history's own listens to one of them, or if simple_history's columns are not the ones written here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from functools import cache

from django.conf import settings
from django.db import connection
from django.utils import timezone

CHUNK = 2000  # ids per statement: well under SQLite's and PostgreSQL's limits on parameters

# Every model whose rows are written around the ORM's save() and delete(): by the bulk writers here and in core.rows,
# and by the apps' sql modules. Those writes send no model signal (pre_save, post_save, ...), so a receiver
# connected to one of these models would silently miss them: none may be (simple_history's own excepted, whose
# history rows the writers write themselves). tests/core/test_bulk_writers.py holds every one to that.
BULK_WRITTEN_MODELS = (
    "cabling.Cable", "cabling.CableEnd", "cabling.ScanEvent",
    "delivery.GateRecompute",
    "inventory.Device", "inventory.DeviceUnit", "inventory.Nic", "inventory.Optic", "inventory.Port",
    "inventory.Rack", "inventory.Site",
    "validation.CheckResult",
)
# The columns of a history row that are not copies of the row: what the writers give each history row.
HISTORY_COLUMNS = ("history_date", "history_change_reason", "history_type", "history_user")


@cache
def bulk_written(model):
    """`model`, if it is one of BULK_WRITTEN_MODELS; TypeError otherwise (a writer that writes around the ORM
    is given a model nobody checked for signal receivers: list it, and tests/core/test_bulk_writers.py checks
    it). Every writer asks, once per model."""
    if model._meta.label not in BULK_WRITTEN_MODELS:
        raise TypeError(f"{model._meta.label} is written around the ORM (no model signal is sent) but is not in "
                        "core.bulk_history.BULK_WRITTEN_MODELS: add it there, where a test checks that nothing "
                        "listens for its signals.")
    return model


def history_columns(model) -> tuple[list[str], list[str]]:
    """(the columns a history row of `model` copies from its row, the history's own columns), as every writer
    of history rows here and in core.rows names them: the historical model's tracked fields, then
    HISTORY_COLUMNS (its primary key, history_id, is the database's to give)."""
    historical = bulk_written(model).history.model
    meta = historical._meta
    return ([field.column for field in historical.tracked_fields],
            [meta.get_field(name).column for name in HISTORY_COLUMNS])


def history_copy(model, ids: Iterable[int], *, user=None, reason: str, at: datetime, kind: str = "~") -> None:
    """A history row of `kind` ("~": changed) for each row of `model` among `ids`, as it is now in the
    database. The table and column names come from the models; every value is a parameter."""
    if not getattr(settings, "SIMPLE_HISTORY_ENABLED", True):
        return
    quote = connection.ops.quote_name
    source, pk = quote(model._meta.db_table), quote(model._meta.pk.column)
    with connection.cursor() as cursor:
        for condition, params in _id_conditions(pk, ids):
            insert, values = history_insert_from(model, f"{source} WHERE {condition}", user=user, reason=reason,
                                                 at=at, kind=kind)
            cursor.execute(insert, [*values, *params])


def update_recorded_supported() -> bool:
    """Whether a write and the history rows of the rows it changed go as one statement: PostgreSQL (a
    data-modifying CTE), with history kept (SIMPLE_HISTORY_ENABLED, which history_copy honours too)."""
    return connection.vendor == "postgresql" and getattr(settings, "SIMPLE_HISTORY_ENABLED", True)


def tracked_columns(model, alias: str = "") -> str:
    """The columns `model`'s history copies, quoted and comma-separated (each prefixed with `alias.` when
    given: an UPDATE ... FROM another relation must say whose columns it returns)."""
    quote, prefix = connection.ops.quote_name, f"{alias}." if alias else ""
    return ", ".join(prefix + quote(column) for column in history_columns(model)[0])


def history_insert_from(model, source: str, *, user, reason: str, at: datetime, kind: str = "~"
                        ) -> tuple[str, list]:
    """(SQL, params) of an INSERT of a history row of `kind` for each row of `source` (SQL naming rows with
    `model`'s tracked columns: its table with a condition, as history_copy gives, or on PostgreSQL a CTE's
    UPDATE ... RETURNING tracked_columns(model), so a change and its history rows are one statement), with
    `at`, `reason` and `user` (None: whoever the request or core.history's context names)."""
    historical, quote = bulk_written(model).history.model, connection.ops.quote_name
    meta = historical._meta
    if user is None:  # as bulk_history_create
        user = historical.get_default_history_user(None)
    limit = meta.get_field("history_change_reason").max_length
    reason = reason[:limit] if limit and reason else reason  # PostgreSQL refuses a longer one
    tracked = tracked_columns(model)
    extra = ", ".join(quote(column) for column in history_columns(model)[1])
    params = [meta.get_field("history_date").get_db_prep_value(at, connection), reason, kind, getattr(user, "pk", None)]
    return (f"INSERT INTO {quote(meta.db_table)} ({tracked}, {extra}) SELECT {tracked}, %s, %s, %s, %s "
            f"FROM {source}", params)


def update_recorded(model, values: Mapping[str, object], where: str, params: list, *, user, reason: str,
                    at: datetime) -> int:
    """UPDATE `values` ({field name: value}) on the rows of `model` that match `where` (SQL over the table's
    own columns, with its `params`) and, in the same statement, a history row ("~", `at`, `reason`, `user`)
    for each row it changed, copied from what the UPDATE returns: the rows history_copy would write, without
    finding the rows a second time by their ids. Returns how many rows changed. PostgreSQL only
    (update_recorded_supported)."""
    meta, quote = bulk_written(model)._meta, connection.ops.quote_name
    assignments = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in values)
    prepared = [meta.get_field(name).get_db_prep_save(value, connection) for name, value in values.items()]
    recorded, history = history_insert_from(model, "changed", user=user, reason=reason, at=at)
    with connection.cursor() as cursor:
        cursor.execute(  # the names are the models' own, `where` the caller's SQL; every value is a parameter
            f"WITH changed AS (UPDATE {quote(meta.db_table)} SET {assignments} WHERE {where} "
            f"RETURNING {tracked_columns(model)}), recorded AS ({recorded}) SELECT COUNT(*) FROM changed",
            [*prepared, *params, *history],
        )
        return cursor.fetchone()[0]


def _id_conditions(pk: str, ids: Iterable[int]) -> Iterator[tuple[str, list[int]]]:
    """WHERE conditions that select exactly `ids`, at most CHUNK parameters each: a run of consecutive ids
    (what a bulk insert gets) is one BETWEEN, the scattered ones an IN list."""
    runs: list[list[int]] = []
    for value in sorted(set(ids)):
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    singles: list[int] = []
    spans: list[tuple[int, int]] = []

    def flush() -> tuple[str, list[int]]:
        parts = [f"{pk} BETWEEN %s AND %s"] * len(spans)
        if singles:
            parts.append(f"{pk} IN ({', '.join(['%s'] * len(singles))})")
        condition = " OR ".join(parts), [v for span in spans for v in span] + singles
        singles.clear()
        spans.clear()
        return condition

    for low, high in runs:
        if high - low >= 2:
            spans.append((low, high))
        else:
            singles.extend(range(low, high + 1))
        if len(singles) + 2 * len(spans) >= CHUNK:
            yield flush()
    if singles or spans:
        yield flush()

def bulk_create_recorded(model, rows: list, *, batch_size: int, user=None, reason: str, at: datetime | None = None
                         ) -> list:
    """Insert `rows` (unsaved instances of `model`) with bulk_create, then a "created" history row for each,
    copied by the database. Returns the saved rows, with their primary keys."""
    created = bulk_written(model).objects.bulk_create(rows, batch_size=batch_size)
    history_copy(model, [row.pk for row in created], user=user, reason=reason, at=at or timezone.now(), kind="+")
    return created


def bulk_update_recorded(model, rows: list, fields: list[str], *, batch_size: int, user=None, reason: str,
                         at: datetime | None = None) -> None:
    """Update `fields` of `rows` with bulk_update, then a "changed" history row for each, copied by the
    database (so the history page diffs it against the row's previous record)."""
    if not rows:
        return
    bulk_written(model).objects.bulk_update(rows, fields, batch_size=batch_size)
    history_copy(model, [row.pk for row in rows], user=user, reason=reason, at=at or timezone.now(), kind="~")


# Field types whose Python values the database drivers take as they are: the others (dates, decimals, JSON)
# go through the field's own preparation.
_PLAIN_TYPES = frozenset({
    "AutoField", "BigAutoField", "BigIntegerField", "BooleanField", "CharField", "ForeignKey", "IntegerField",
    "OneToOneField", "PositiveBigIntegerField", "PositiveIntegerField", "PositiveSmallIntegerField",
    "SmallIntegerField", "TextField",
})


def insert_recorded(model, rows: Sequence[dict], *, user=None, reason: str, at: datetime | None = None) -> list[int]:
    """`insert_rows`, and a "created" history row for each row (history_copy). Returns the new ids, in order."""
    at = at or timezone.now()
    ids = insert_rows(model, rows, at=at)
    history_copy(model, ids, user=user, reason=reason, at=at, kind="+")
    return ids


def insert_rows(model, rows: Sequence[dict], *, at: datetime | None = None) -> list[int]:
    """Insert `rows` ({attname: value}; a field left out takes its default, `at` for an auto_now one) into
    `model`'s table without building a model instance per row; returns the new ids, in order.

    The ids are reserved first (PostgreSQL: from the table's sequence; SQLite: by moving its
    sqlite_sequence on, inside the writing transaction), so a caller can point other rows at them (lanes at
    their parent port, ends at their cable) before anything is written. PostgreSQL takes the rows with COPY;
    other databases with one executemany INSERT. Nothing checks the rows: callers validate first, and the
    database's constraints have the last word."""
    if not rows:
        return []
    at = at or timezone.now()
    meta = bulk_written(model)._meta
    fields = [field for field in meta.concrete_fields if not field.primary_key]
    defaults = {field.attname: _default(field, at) for field in fields}
    prepare = {field.attname: field for field in fields if field.get_internal_type() not in _PLAIN_TYPES}
    ids = reserve_ids(model, len(rows))
    names = [field.attname for field in fields]
    prepared = [(index, prepare[name]) for index, name in enumerate(names, start=1) if name in prepare]
    values = []
    for pk, row in zip(ids, rows, strict=True):
        line = [pk, *[row.get(name, defaults[name]) for name in names]]
        for index, field in prepared:
            if line[index] is not None:
                line[index] = field.get_db_prep_save(line[index], connection)
        values.append(line)
    quote = connection.ops.quote_name
    columns = ", ".join(quote(column) for column in [meta.pk.column, *(field.column for field in fields)])
    table = quote(meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # COPY goes round Django's cursor wrapper: its errors are turned into Django's here, so callers
            # catch IntegrityError as for any other write.
            with connection.wrap_database_errors, cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for line in values:
                    copy.write_row(line)
        else:
            marks = ", ".join(["%s"] * (len(fields) + 1))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", values)
    return ids


def _default(field, at: datetime):
    if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
        return at
    if field.has_default():
        return field.get_default()
    if field.null:
        return None
    return "" if field.empty_strings_allowed else None  # as Field.get_default() gives a blank text field


def reserve_ids(model, count: int) -> list[int]:
    """`count` new primary keys of `model`, never given out again, for rows inserted later in the same
    transaction. On SQLite it must run inside that transaction (transaction.atomic): it refuses otherwise."""
    if count <= 0:
        return []
    table, pk = model._meta.db_table, model._meta.pk.column
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, %s)) FROM generate_series(1, %s)",
                           [table, pk, count])
            return [row[0] for row in cursor.fetchall()]
        if connection.vendor != "sqlite":
            raise NotImplementedError(f"reserve_ids: no way to reserve ids on {connection.vendor}")
        if not connection.in_atomic_block:
            # Outside a transaction the move below would commit at once, and another connection could take
            # the same ids between this read and the caller's insert.
            raise RuntimeError("reserve_ids on SQLite must run inside transaction.atomic() with the insert")
        # AUTOINCREMENT tables keep their high-water mark in sqlite_sequence; moving it on reserves the ids
        # (SQLite lets one transaction write at a time: another connection cannot move it before this one
        # commits, and a rollback puts the mark back with the rows that used it).
        quote = connection.ops.quote_name
        cursor.execute(f"SELECT MAX({quote(pk)}) FROM {quote(table)}")
        highest = cursor.fetchone()[0] or 0
        cursor.execute("SELECT seq FROM sqlite_sequence WHERE name = %s", [table])
        found = cursor.fetchone()
        first = max(highest, found[0] if found else 0) + 1
        if found:
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [first + count - 1, table])
        else:
            cursor.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (%s, %s)", [table, first + count - 1])
        return list(range(first, first + count))
