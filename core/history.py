"""Who changed what and when, read from django-simple-history for an object's page, and the author
of the history rows that a task or a command writes."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from types import SimpleNamespace

from django.db.models import QuerySet
from simple_history.models import HistoricalRecords

HISTORY_LIMIT = 50  # newest entries shown on an object's page; the admin has the full trail
HISTORY_KINDS = {"+": "Created", "~": "Changed", "-": "Deleted"}


@dataclass(frozen=True)
class FieldChange:
    field: str
    old: str
    new: str


@dataclass(frozen=True)
class HistoryRow:
    date: datetime
    user: str
    kind: str
    changes: list[FieldChange]
    # Why, when the write said: a bulk write names itself ("Fabric plan X applied", "Imported from F.xlsx"),
    # a status change its cause.
    reason: str = ""


def _display(field, value, related: dict) -> str:
    if value is None or value == "":
        return "—"
    if field.is_relation:
        return str(related.get((field.related_model, value), f"#{value} (deleted)"))
    if field.choices:
        return str(dict(field.flatchoices).get(value, value))
    return str(value)


def _related_objects(history_model, deltas) -> dict:
    """Foreign keys in a diff are raw ids; fetch each related model once for all of them."""
    wanted: dict[type, set] = {}
    for delta in deltas:
        for change in delta.changes if delta else ():
            field = history_model._meta.get_field(change.field)
            if field.is_relation:
                wanted.setdefault(field.related_model, set()).update(
                    v for v in (change.old, change.new) if v is not None
                )
    return {
        (model, pk): obj
        for model, pks in wanted.items()
        # select_related(): their __str__ may name a parent (a port prints as "device:port").
        for pk, obj in model._default_manager.select_related().in_bulk(pks).items()
    }


def history_rows(history: QuerySet, *, limit: int = HISTORY_LIMIT) -> list[HistoryRow]:
    """Newest first: who, when, and what changed against the record before (one query for the
    records, one per kind of foreign key that changed)."""
    newest_first = history.select_related("history_user").order_by("-history_date", "-history_id")
    records = list(newest_first[: limit + 1])  # one extra: the record the oldest shown one is diffed against
    pairs = list(zip(records[:limit], [*records[1:], None], strict=False))
    deltas = [
        newer.diff_against(older) if older and newer.history_type == "~" else None for newer, older in pairs
    ]
    related = _related_objects(history.model, deltas)
    rows = []
    for (record, _), delta in zip(pairs, deltas, strict=True):
        changes = []
        for change in delta.changes if delta else ():
            field = history.model._meta.get_field(change.field)
            changes.append(
                FieldChange(
                    field=str(field.verbose_name),
                    old=_display(field, change.old, related),
                    new=_display(field, change.new, related),
                )
            )
        user = record.history_user.get_username() if record.history_user else "system"
        rows.append(HistoryRow(date=record.history_date, user=user, kind=HISTORY_KINDS[record.history_type],
                               changes=changes, reason=record.history_change_reason or ""))
    return rows


@contextmanager
def history_user(user):
    """Record `user` as the author of the history rows written inside the block, as the history
    middleware does for a web request (tasks and commands have no request)."""
    context = HistoricalRecords.context
    previous = getattr(context, "request", None)
    if user is not None:
        context.request = SimpleNamespace(user=user)
    try:
        yield
    finally:
        if previous is not None:
            context.request = previous
        elif hasattr(context, "request"):
            del context.request
