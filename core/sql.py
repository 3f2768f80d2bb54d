"""core's hand-written SQL and its uses of the database connection, behind the fence (docs/architecture.md;
tests/test_sql_fence.py): each a small named function, called by the modules that need it. The bulk
writers (core.rows, core.bulk_history) are the fence's other core modules.

Here: what the ORM has no word for (a second connection in autocommit for a job's progress, a table's
storage setting, the state of the default connection and its transaction), and nothing an app's own sql
module should hold (those are in `<app>/sql.py`)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections, transaction

logger = logging.getLogger("core.jobs")


def atomic_block_open() -> bool:
    """Whether the default connection is inside transaction.atomic() (an outer transaction, or a savepoint).
    A connection attribute, not a query: the ORM does not say it."""
    return connection.in_atomic_block


def connection_close_if_unusable() -> None:
    """Close the default connection if it is broken or past its age (the next query opens a new one), as
    Django does between requests: for a task that retries after the database dropped it."""
    connection.close_if_unusable_or_obsolete()


def connection_scratch(*, name: str) -> dict:
    """A dict kept on the default connection object under `name`, for as long as that connection lives: state
    that belongs to the connection and the transactions it runs (delivery.stages' batches of on-commit asks),
    not to a request or a thread. Not the database's: nothing is read or written."""
    return transaction.get_connection().__dict__.setdefault(name, {})


@contextmanager
def job_progress_writer(*, job) -> Iterator[Callable[..., None] | None]:
    """A writer `write(done, total=None, step=None)` of `job`'s progress through a connection of its own, in
    autocommit, when the default connection is inside a transaction on PostgreSQL (where an UPDATE of the job
    row would stay invisible to the page's poller until commit); None otherwise, and the caller writes through
    the ORM (core.jobs.progress_reporter). The side connection is closed on leaving.

    Why SQL: the ORM has no side connection. The UPDATE names the job's own table and fields; every value is
    a parameter. It waits at most a second for a row lock: where the open transaction has locked the job row
    itself, a report is skipped (logged) rather than waiting for a lock that only commit releases."""
    main = connections[DEFAULT_DB_ALIAS]
    if not (main.in_atomic_block and main.vendor == "postgresql"):
        yield None
        return
    side = type(main)(dict(main.settings_dict), DEFAULT_DB_ALIAS)
    quote = main.ops.quote_name
    table, pk = quote(job._meta.db_table), quote(job._meta.pk.column)
    done_column, total_column, step_column = (quote(job._meta.get_field(name).column)
                                              for name in ("progress_done", "progress_total", "progress_step"))

    def write(done: int, total: int | None = None, step: str | None = None) -> None:
        sets, params = [f"{done_column} = %s"], [done]
        if total is not None:
            sets.append(f"{total_column} = %s")
            params.append(total)
        if step is not None:
            sets.append(f"{step_column} = %s")
            params.append(step[:80])
        try:
            with side.cursor() as cursor:
                cursor.execute("SET lock_timeout = '1s'")
                cursor.execute(f"UPDATE {table} SET {', '.join(sets)} WHERE {pk} = %s", [*params, job.pk])
        except OperationalError:  # the row is locked by the job's own transaction: progress shows at commit
            logger.info("progress of %s %s skipped: its row is locked", job.job_type, job.pk)

    try:
        yield write
    finally:
        side.close()


def table_fillfactor_set(*, schema_editor, model, fillfactor: int | None, rewrite: bool) -> None:
    """PostgreSQL: keep `100 - fillfactor` % of each page of `model`'s table free (None: back to the default),
    then, with `rewrite`, VACUUM FULL so the rows already there are rewritten under it (VACUUM cannot run
    inside a transaction: the migration must say `atomic = False`). Other databases have no such setting:
    nothing is done. Why SQL: a storage parameter, which the schema editor has no operation for."""
    if schema_editor.connection.vendor != "postgresql":
        return
    table = schema_editor.quote_name(model._meta.db_table)
    setting = "RESET (fillfactor)" if fillfactor is None else f"SET (fillfactor = {int(fillfactor)})"
    schema_editor.execute(f"ALTER TABLE {table} {setting}")
    if rewrite:
        schema_editor.execute(f"VACUUM FULL {table}")
