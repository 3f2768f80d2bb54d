"""delivery's hand-written SQL and database branches, behind the fence (docs/architecture.md;
tests/test_sql_fence.py): each a named function its callers call (delivery.stages.services,
delivery.reports.services). tests/delivery/test_sql.py holds each to the ORM's answer on the same rows, on
SQLite and PostgreSQL alike.

Why SQL: the gates' recompute flag is claimed after every accepted scan (200 a second on the floor), so the
usual answer, "queued already", must cost one statement that writes nothing, which the ORM cannot say (an
UPDATE ... RETURNING, and on PostgreSQL the row's existence read in the same statement; an INSERT ... ON
CONFLICT DO UPDATE ... WHERE). And a report's snapshot reads in one repeatable-read transaction on PostgreSQL,
which the ORM has no word for."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.db import connection, transaction

from core.bulk_history import bulk_written

from .models import GateRecompute, Stage


def gate_recompute_flag_claim(*, project_id: int, now: datetime, stale_before: datetime) -> tuple[bool, bool]:
    """(claimed, the flag row exists): set the project's GateRecompute row pending, requested at `now`, only
    where it is not pending already or was asked for before `stale_before` (its task was lost, and the gates
    would never be recomputed): GateRecompute.objects.filter(Q(pending=False) | Q(requested_at=None) |
    Q(requested_at__lt=stale_before), project_id=...).update(pending=True, requested_at=now), and whether the
    row exists. One statement that writes nothing when the flag is pending (no row matched, no row locked,
    nothing to flush at commit): on PostgreSQL the UPDATE and, from the same snapshot, the row's existence;
    elsewhere a second read only when nothing was claimed. Two requests at the same moment: the UPDATE's row
    lock lets one set the flag; the other, once the first commits, finds it pending and matches nothing."""
    at = connection.ops.adapt_datetimefield_value(now)
    stale = connection.ops.adapt_datetimefield_value(stale_before)
    flag = connection.ops.quote_name(bulk_written(GateRecompute)._meta.db_table)
    update = (f'UPDATE {flag} SET "pending" = TRUE, "requested_at" = %s WHERE "project_id" = %s '
              'AND ("pending" = FALSE OR "requested_at" IS NULL OR "requested_at" < %s)')
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":  # one statement: the UPDATE and, from the same snapshot, the row
            cursor.execute(f'WITH claimed AS ({update} RETURNING "id") SELECT EXISTS (SELECT 1 FROM claimed), '
                           f'EXISTS (SELECT 1 FROM {flag} WHERE "project_id" = %s)',
                           [at, project_id, stale, project_id])
            claimed, present = cursor.fetchone()
            return bool(claimed), bool(present)
        cursor.execute(f"{update} RETURNING \"id\"", [at, project_id, stale])
        if cursor.fetchone() is not None:
            return True, True
        cursor.execute(f'SELECT 1 FROM {flag} WHERE "project_id" = %s', [project_id])
        return False, cursor.fetchone() is not None


def gate_recompute_flag_first_claim(*, project_id: int, now: datetime) -> bool:
    """Make the project's GateRecompute row, pending and requested at `now`, if the project has stages; True
    when this call set the flag. A concurrent request that made the row first leaves it to this one to claim
    as gate_recompute_flag_claim would (only where it is not pending): one INSERT ... ON CONFLICT DO UPDATE
    ... WHERE, which both databases take and the ORM cannot say (its update_or_create reads, then writes)."""
    at = connection.ops.adapt_datetimefield_value(now)
    flag, stage = (connection.ops.quote_name(model._meta.db_table)
                   for model in (bulk_written(GateRecompute), Stage))
    with connection.cursor() as cursor:
        cursor.execute(
            f'INSERT INTO {flag} ("project_id", "pending", "requested_at") '
            f'SELECT %s, TRUE, %s WHERE EXISTS (SELECT 1 FROM {stage} WHERE "project_id" = %s) '
            f'ON CONFLICT ("project_id") DO UPDATE SET "pending" = TRUE, "requested_at" = EXCLUDED."requested_at" '
            f'WHERE {flag}."pending" = FALSE RETURNING "id"',
            [project_id, at, project_id],
        )
        return cursor.fetchone() is not None


@contextmanager
def report_read_consistent() -> Iterator[None]:
    """Inside: one repeatable-read transaction on PostgreSQL, so every read is of one moment of the project
    whatever is written meanwhile (SET TRANSACTION, which the ORM has no word for). Not on SQLite, where a
    transaction takes the write lock (the embedded default holds small projects and writes little), nor inside
    an outer transaction (whose isolation is set already): there, reads as they come."""
    if connection.vendor != "postgresql" or connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        yield
