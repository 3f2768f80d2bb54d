"""Rows of a hand-written query turned into model instances, as the ORM would make them.

Where a request must cost a few milliseconds of CPU in all (a scan: 200 a second on two cores), compiling
an ORM query with its joins costs 0.5 to 2 ms of them, ten times what running it costs. Such a path writes
its few reads out once (`SELECT {columns.sql} FROM ...`) and builds the instances here: every concrete
column of each model in the join, converted as the ORM's compiler would convert it (Model.from_db, the
backend's and the field's converters), so what the code downstream receives is what the ORM would give.

This module and core.bulk_history are core's bulk writers, inside the fence of hand-written SQL
(docs/architecture.md; tests/test_sql_fence.py): the apps' `sql` modules write their reads out with Columns and
fetch, and their callers call those. What is written here sends no model signal, so only models of core.bulk_history's
BULK_WRITTEN_MODELS are written (a receiver on one of them fails tests/core/test_bulk_writers.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, cached_property

from django.db import DatabaseError, connection
from django.db.models import Model
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init

from .bulk_history import bulk_written, history_columns


class Columns:
    """The concrete columns of `model` under the table alias `alias`, for a SELECT list, and the instance
    built from those values of a row (None for the NULL row of an outer join). All of them, or the primary
    key and `only` those fields: the others are then deferred, as with the ORM's only() (reading one costs a
    query), so `only` is for a relation read for a few shown values (a rack's name)."""

    def __init__(self, model: type[Model], alias: str, only: tuple[str, ...] = ()):
        self.model, self.alias = model, alias
        wanted = {model._meta.pk.name, *only}
        self.fields = tuple(f for f in model._meta.concrete_fields if not only or f.name in wanted)
        self.attnames = None if not only else [field.attname for field in self.fields]
        self.sql = ", ".join(f'{alias}."{field.column}"' for field in self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @cached_property
    def _converters(self) -> tuple[tuple[int, object, list], ...]:
        """(index, column, converters) of the fields whose database value needs converting: what the ORM's
        compiler would apply (the backend's, e.g. SQLite's dates and decimals, then the field's own, e.g. a
        JSONField's)."""
        found = []
        for index, field in enumerate(self.fields):
            column = field.get_col(self.alias)
            converters = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if converters:
                found.append((index, column, converters))
        return tuple(found)

    @cached_property
    def _attnames(self) -> tuple[str, ...]:
        return tuple(field.attname for field in self.fields)

    def build(self, row, start: int = 0):
        values = list(row[start:start + len(self.fields)])
        if values[0] is None:  # the primary key (first): no row on this side of an outer join
            return None
        for index, column, converters in self._converters:
            for converter in converters:
                values[index] = converter(values[index], column, connection)
        model = self.model
        if pre_init.has_listeners(model) or post_init.has_listeners(model):
            return model.from_db(connection.alias, self.attnames, values)  # the receivers see what they expect
        # What Model.from_db makes, without Model.__init__'s walk of every field through setattr (a tenth of a
        # scan's CPU): with no init receivers, the instance is its values in __dict__ (the deferred ones absent)
        # and its state, loaded from this database.
        instance = model.__new__(model)
        instance.__dict__.update(zip(self._attnames, values, strict=True))
        state = instance._state = ModelState()
        state.adding, state.db = False, connection.alias
        return instance


@cache
def columns_of(model: type[Model], alias: str, only: tuple[str, ...] = ()) -> Columns:
    """The Columns of a model under an alias, made once (the models are loaded by then)."""
    return Columns(model, alias, only)


def joined(row, *columns: Columns) -> list:
    """The instances of one row of a join, in the order of `columns`' SELECT lists."""
    built, start = [], 0
    for part in columns:
        built.append(part.build(row, start))
        start += len(part)
    return built


def fetch(sql: str, params) -> list[tuple]:
    """The rows of one query, through Django's cursor (so the query is counted and logged like any other)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


# --- writes: the same statements save() would make, without compiling them ---------------------------------


@dataclass(frozen=True)
class _TrackedUpdate:
    update: str  # UPDATE of the fields
    history: str  # INSERT of the historical row, its values copied from the instance (as simple_history does)
    history_head: str  # `INSERT INTO "historical table" (columns) `, for an INSERT ... SELECT
    both: str | None  # PostgreSQL: one statement, the historical row copied from the row the UPDATE returns
    updated: tuple  # the fields updated
    tracked: tuple  # the historical model's copies of the tracked fields
    history_date: object  # its history_date field


@cache
def _tracked_update_sql(model: type[Model], names: tuple[str, ...]) -> _TrackedUpdate:
    table, pk = bulk_written(model)._meta.db_table, model._meta.pk.column
    historical = model.history.model  # a new manager at each access: read once
    updated = tuple(model._meta.get_field(name) for name in names)
    tracked = tuple(historical._meta.get_field(field.name) for field in historical.tracked_fields)
    assignments = ", ".join(f'"{field.column}" = %s' for field in updated)
    update = f'UPDATE "{table}" SET {assignments} WHERE "{pk}" = %s'
    copied_columns, own_columns = history_columns(model)
    columns = ", ".join(f'"{column}"' for column in [*copied_columns, *own_columns])
    insert = f'INSERT INTO "{historical._meta.db_table}" ({columns}) '
    history = f"{insert}VALUES ({', '.join(['%s'] * (len(copied_columns) + len(own_columns)))})"
    both = None
    if connection.vendor == "postgresql":
        copied = ", ".join(f'u."{field.column}"' for field in tracked)
        both = f"WITH u AS ({update} RETURNING *) {insert}SELECT {copied}, %s, %s, %s, %s FROM u"
    return _TrackedUpdate(update, history, insert, both, updated, tracked, historical._meta.get_field("history_date"))


def tracked_update(instance: Model, fields: list[str], *, user, at, reason: str | None = None) -> None:
    """What `instance.save(update_fields=fields)` writes for a model that keeps its history: the UPDATE of
    those fields and the historical row of the whole instance as it now is (type "~", `user`, `at`,
    `reason`), written out instead of compiled (on PostgreSQL, one statement for both). No model signal is
    sent: callers are services whose models have no receivers but the history, which this writes."""
    from django.conf import settings

    sql = _tracked_update_sql(type(instance), tuple(fields))
    values = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in sql.updated]
    history = [sql.history_date.get_db_prep_save(at, connection), reason, "~", getattr(user, "pk", None)]
    with connection.cursor() as cursor:
        if not getattr(settings, "SIMPLE_HISTORY_ENABLED", True):
            cursor.execute(sql.update, [*values, instance.pk])
            _one_row_updated(cursor, instance)
        elif sql.both is not None:
            cursor.execute(sql.both, [*values, instance.pk, *history])
            _one_row_updated(cursor, instance)  # the INSERT copies as many rows as the UPDATE returned
        else:
            cursor.execute(sql.update, [*values, instance.pk])
            _one_row_updated(cursor, instance)  # before the history row: none for a row that is gone
            copied = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in sql.tracked]
            cursor.execute(sql.history, [*copied, *history])


def _one_row_updated(cursor, instance: Model) -> None:
    """save(update_fields=...) refuses to update a row that is gone: so does tracked_update. (Its callers hold
    the row's lock, so the row they read is the row they update: the history copied from the database on
    PostgreSQL and from the instance elsewhere is then the same.)"""
    if cursor.rowcount != 1:
        raise DatabaseError(
            f"{type(instance).__name__} {instance.pk}: the update matched {cursor.rowcount} rows, not 1.")


@cache
def _insert_sql(model: type[Model]) -> tuple[str, tuple]:
    fields = tuple(field for field in bulk_written(model)._meta.concrete_fields if not field.primary_key)
    columns = ", ".join(f'"{field.column}"' for field in fields)
    placeholders = ", ".join(["%s"] * len(fields))
    returning = f' RETURNING "{model._meta.pk.column}"' if connection.features.can_return_columns_from_insert else ""
    return f'INSERT INTO "{model._meta.db_table}" ({columns}) VALUES ({placeholders}){returning}', fields


def row_insert(instance: Model) -> Model:
    """What `instance.save()` writes for a new row of a model with an automatic primary key, no history and
    no signal receivers (each field's pre_save, e.g. auto_now_add, and database value as the ORM prepares
    them), in one written-out statement; the instance gets its primary key."""
    sql, fields = _insert_sql(type(instance))
    values = [field.get_db_prep_save(field.pre_save(instance, True), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        instance.pk = cursor.fetchone()[0] if connection.features.can_return_columns_from_insert else cursor.lastrowid
    instance._state.adding, instance._state.db = False, connection.alias
    return instance


# --- writes sent together: a scan's few writes in one statement -------------------------------------------


@cache
def _rows_update_sql(model: type[Model], names: tuple[str, ...], only_if: tuple[str, ...]) -> tuple[str, tuple]:
    """UPDATE of `names` on the rows among a list of primary keys whose `only_if` fields hold one of the given
    values, returning the tracked columns of each row updated (what its historical row copies)."""
    table, pk = bulk_written(model)._meta.db_table, model._meta.pk.column
    historical = model.history.model
    tracked = tuple(historical._meta.get_field(field.name) for field in historical.tracked_fields)
    assignments = ", ".join(f'"{model._meta.get_field(name).column}" = %s' for name in names)
    conditions = "".join(f' AND "{model._meta.get_field(name).column}" IN %s' for name in only_if)
    returning = ", ".join(f'"{field.column}"' for field in tracked)
    return f'UPDATE "{table}" SET {assignments} WHERE "{pk}" IN %s{conditions} RETURNING {returning}', tracked


def _in_list(values) -> str:
    return "(" + ", ".join(["%s"] * len(values)) + ")"


class Writes:
    """The writes a service decides on after its reads, sent together when it is done: on PostgreSQL as one
    statement (each write a data-modifying CTE; a scan's three to five round trips become one), elsewhere one
    after another, as tracked_update and row_insert write them. The same rows and historical rows either way.

    Queued writes are not seen by reads made before `send()`: queue only what nothing reads again."""

    def __init__(self):
        self._updates: list[tuple] = []  # (instance, fields, user, at, reason)
        self._row_updates: list[tuple] = []  # (model, pks, values, only_if, user, at, reason)
        self._insert: Model | None = None

    def tracked_update(self, instance: Model, fields: list[str], *, user, at, reason: str | None = None) -> None:
        """tracked_update(), sent with the rest (exactly one row must match, as there)."""
        self._updates.append((instance, tuple(fields), user, at, reason))

    def rows_update(self, model: type[Model], pks, values: dict, *, only_if: dict, user, at,
                    reason: str | None = None) -> None:
        """UPDATE `values` on the rows of `pks` whose fields still hold one of `only_if`'s values (a row another
        writer moved since it was read is left as it is now), each row updated with its historical row."""
        if pks:
            self._row_updates.append((model, tuple(pks), dict(values), {k: tuple(v) for k, v in only_if.items()},
                                      user, at, reason))

    def insert(self, instance: Model) -> None:
        """row_insert() of one new row, sent last (the instance gets its primary key then)."""
        self._insert = instance

    def send(self) -> None:
        from django.conf import settings

        history = getattr(settings, "SIMPLE_HISTORY_ENABLED", True)
        if connection.vendor == "postgresql" and history:
            self._send_as_one()
        else:
            self._send_one_by_one(history)
        self._updates, self._row_updates, self._insert = [], [], None

    def _history(self, user, at, reason, date_field) -> list:
        return [date_field.get_db_prep_save(at, connection), reason, "~", getattr(user, "pk", None)]

    def _send_one_by_one(self, history: bool) -> None:
        for instance, fields, user, at, reason in self._updates:
            tracked_update(instance, list(fields), user=user, at=at, reason=reason)
        for model, pks, values, only_if, user, at, reason in self._row_updates:
            sql, _ = _rows_update_sql(model, tuple(values), tuple(only_if))
            params = self._row_update_params(model, pks, values, only_if)
            date_field = model.history.model._meta.get_field("history_date")
            with connection.cursor() as cursor:
                cursor.execute(_expand_in(sql, pks, only_if), params)
                rows = cursor.fetchall()
                if history and rows:
                    insert = _tracked_update_sql(model, tuple(values)).history
                    cursor.executemany(insert, [[*row, *self._history(user, at, reason, date_field)] for row in rows])
        if self._insert is not None:
            row_insert(self._insert)

    def _row_update_params(self, model, pks, values, only_if) -> list:
        params = [model._meta.get_field(name).get_db_prep_save(value, connection) for name, value in values.items()]
        params += list(pks)
        for choices in only_if.values():
            params += list(choices)
        return params

    def _send_as_one(self) -> None:
        parts, params, counted = [], [], []
        for index, (instance, fields, user, at, reason) in enumerate(self._updates):
            sql = _tracked_update_sql(type(instance), fields)
            values = [field.get_db_prep_save(getattr(instance, field.attname), connection) for field in sql.updated]
            copied = ", ".join(f'w{index}."{field.column}"' for field in sql.tracked)
            parts.append(f"w{index} AS ({sql.update} RETURNING *)")
            parts.append(f"h{index} AS ({sql.history_head}SELECT {copied}, %s, %s, %s, %s FROM w{index})")
            params += [*values, instance.pk, *self._history(user, at, reason, sql.history_date)]
            counted.append((f"w{index}", instance))
        for index, (model, pks, values, only_if, user, at, reason) in enumerate(self._row_updates):
            sql, tracked = _rows_update_sql(model, tuple(values), tuple(only_if))
            history = _tracked_update_sql(model, tuple(values))
            copied = ", ".join(f'r{index}."{field.column}"' for field in tracked)
            parts.append(f"r{index} AS ({_expand_in(sql, pks, only_if)})")
            parts.append(f"rh{index} AS ({history.history_head}SELECT {copied}, %s, %s, %s, %s FROM r{index})")
            params += [*self._row_update_params(model, pks, values, only_if),
                       *self._history(user, at, reason, history.history_date)]
        selected = [f"(SELECT COUNT(*) FROM {name})" for name, _ in counted]
        if self._insert is not None:
            insert_sql, fields = _insert_sql(type(self._insert))
            parts.append(f"ins AS ({insert_sql})")
            params += [field.get_db_prep_save(field.pre_save(self._insert, True), connection) for field in fields]
            selected.append(f'(SELECT "{type(self._insert)._meta.pk.column}" FROM ins)')
        if not parts:
            return
        with connection.cursor() as cursor:
            cursor.execute(f"WITH {', '.join(parts)} SELECT {', '.join(selected) or '1'}", params)
            row = cursor.fetchone()
        for (_, instance), count in zip(counted, row, strict=False):
            if count != 1:
                raise DatabaseError(f"{type(instance).__name__} {instance.pk}: the update matched {count} rows, not 1.")
        if self._insert is not None:
            self._insert.pk = row[-1]
            self._insert._state.adding, self._insert._state.db = False, connection.alias


def _expand_in(sql: str, pks, only_if: dict) -> str:
    """The `IN %s` of _rows_update_sql with one placeholder per value (the same on every backend)."""
    lists = [pks, *only_if.values()]
    head, *rest = sql.split(" IN %s")
    return head + "".join(f" IN {_in_list(values)}{tail}" for values, tail in zip(lists, rest, strict=True))
