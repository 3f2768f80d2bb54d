"""validation's hand-written SQL and database branches, behind the fence (docs/architecture.md;
tests/test_sql_fence.py): each a named function its callers call (validation.services.execution, validation.gates,
validation.report_selectors). tests/validation/test_sql.py holds each to the ORM's answer on the same rows, on
SQLite and PostgreSQL alike.

Why SQL, or a branch on the database: a check engine's outcomes are written a chunk at a time (the ORM's
bulk_update costs more than judging the outputs), and "the newest row of each port or cable" has a PostgreSQL
form (DISTINCT ON) that SQLite does not take."""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection
from django.db.models import F, QuerySet, Window
from django.db.models.functions import RowNumber

from core.bulk_history import bulk_written

from .models import CheckResult


def check_results_write(*, rows: Sequence[CheckResult], fields: list[str]) -> None:
    """CheckResult.objects.bulk_update(rows, fields), as one executemany of a plain UPDATE by id: the ORM's
    bulk_update builds a CASE per field and row, which cost a link-health target more than its own parsing and
    judging (measured: about 3 ms a target on this machine, against under 1 ms this way). Each value is
    prepared by its field, as the ORM's save would. No history (CheckResult keeps none), no signal."""
    model_fields = [bulk_written(CheckResult)._meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table = quote(CheckResult._meta.db_table)
    columns = ", ".join(f"{quote(field.column)} = %s" for field in model_fields)
    statement = f"UPDATE {table} SET {columns} WHERE {quote(CheckResult._meta.pk.column)} = %s"
    params = [
        [*(field.get_db_prep_save(getattr(row, field.attname), connection) for field in model_fields), row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(statement, params)


def first_per_key(*, rows: QuerySet, key: str, chunk_size: int = 5000) -> dict:
    """{key value: value} of `rows`, a values_list of (`key`, value) ordered by `key` and then by preference
    (newest first): the first row of each key. On PostgreSQL DISTINCT ON (`key`), so each key's other rows
    never leave the database; elsewhere the rows are read in that order and the first of each key kept. Read
    in chunks of `chunk_size`. Not a correlated subquery per key: at 24,576 cables on PostgreSQL that cost
    seconds to minutes."""
    if connection.vendor == "postgresql":
        return dict(rows.distinct(key).iterator(chunk_size=chunk_size))
    first: dict = {}
    for value_of_key, value in rows.iterator(chunk_size=chunk_size):
        first.setdefault(value_of_key, value)  # rows come in preference order within a key
    return first


def first_per_key_ids(*, rows: QuerySet, key: str, order: Sequence) -> QuerySet:
    """The primary keys (values("pk"), for a `pk__in`) of the first row of each `key` among `rows`, in
    `order` (expressions: newest first), as one query: PostgreSQL's DISTINCT ON, or elsewhere (SQLite) a
    ROW_NUMBER() window partitioned by `key`."""
    if connection.vendor == "postgresql":
        return rows.order_by(key, *order).distinct(key).values("pk")
    rank = Window(RowNumber(), partition_by=[F(key)], order_by=list(order))
    return rows.annotate(_first_per_key=rank).filter(_first_per_key=1).values("pk")
