"""History rows for many rows at once, copied by the database (INSERT ... SELECT), for the bulk writes of
whole fabrics: 24,576 cables, 50,000 ports.

simple_history's bulk_history_create builds one historical instance per row in Python and inserts them
through the ORM (most of a minute for a whole fabric on a busy machine); `history_copy` asks the database
to copy the rows just written into their historical table, which gives the same history rows (every
tracked field as it is now, the date, the user, the reason, "~"), a chunk of ids per statement. Like
bulk_history_create it sends no signal and honours SIMPLE_HISTORY_ENABLED.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from django.conf import settings
from django.db import connection

CHUNK = 2000  # ids per statement: well under SQLite's and PostgreSQL's limits on parameters


def history_copy(model, ids: Iterable[int], *, user=None, reason: str, at: datetime, kind: str = "~") -> None:
    """A history row of `kind` ("~": changed) for each row of `model` among `ids`, as it is now in the
    database. The table and column names come from the models; every value is a parameter."""
    if not getattr(settings, "SIMPLE_HISTORY_ENABLED", True):
        return
    historical = model.history.model
    meta, quote = historical._meta, connection.ops.quote_name
    if user is None:  # as bulk_history_create: whoever the request or core.history's context names
        user = historical.get_default_history_user(None)
    limit = meta.get_field("history_change_reason").max_length
    reason = reason[:limit] if limit and reason else reason  # PostgreSQL refuses a longer one
    tracked = ", ".join(quote(field.column) for field in historical.tracked_fields)
    extra = ", ".join(quote(meta.get_field(name).column) for name in (
        "history_date", "history_change_reason", "history_type", "history_user"))
    source, target = quote(model._meta.db_table), quote(meta.db_table)
    pk = quote(model._meta.pk.column)
    values = [meta.get_field("history_date").get_db_prep_value(at, connection), reason, kind, getattr(user, "pk", None)]
    ordered = sorted(set(ids))
    with connection.cursor() as cursor:
        for start in range(0, len(ordered), CHUNK):
            chunk = ordered[start : start + CHUNK]
            cursor.execute(
                f"INSERT INTO {target} ({tracked}, {extra}) "
                f"SELECT {tracked}, %s, %s, %s, %s FROM {source} WHERE {pk} IN ({', '.join(['%s'] * len(chunk))})",
                [*values, *chunk],
            )
