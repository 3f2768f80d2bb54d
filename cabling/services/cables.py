"""Writes to cables themselves (not through a plan): their status set by a person, with its cause."""

from __future__ import annotations

from collections.abc import Iterable

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from simple_history.utils import bulk_update_with_history

from inventory.services import person
from projects.evidence import evidence_changed_send

from ..choices import CableStatus
from ..models import Cable
from .evidence import cause_text
from .plan_rules import BATCH

# Verified is the one status a person cannot set: it is what a scan of both ends records.
SETTABLE_CABLE_STATUSES = frozenset({CableStatus.PLANNED, CableStatus.INSTALLED, CableStatus.FAULTY})
# Every field of a cable but its status: what full_clean need not check again when only the status changes.
_NOT_STATUS = [f.name for f in Cable._meta.concrete_fields if f.name not in ("status", "status_cause")]


@transaction.atomic
def cable_status_set(
    *, cables: QuerySet[Cable] | Iterable[Cable], status: str, user=None, reason: str = "", cause: str = ""
) -> int:
    """Set the status of `cables` (a queryset or cable rows) to planned, installed or faulty, with a
    history record per cable that changes (by `user`) and its status_cause: `cause` as given, else who set
    it by hand and `reason`; returns how many changed. Verified is refused: a cable is verified by a scan of both
    its ends (or seen ok by the fabric), never by hand."""
    if status == CableStatus.VERIFIED:
        raise ValidationError(
            {"status": "A cable is verified by a scan of both its ends, not set by hand: scan it instead."}
        )
    if status not in SETTABLE_CABLE_STATUSES:
        choices = ", ".join(sorted(SETTABLE_CABLE_STATUSES))
        raise ValidationError({"status": f"Unknown cable status {status!r}: choose one of {choices}."})
    changing = [cable for cable in _locked(cables) if cable.status != status]
    label = CableStatus(status).label.lower()
    if not cause:
        reason = " ".join(reason.split())
        cause = f"Set to {label} by {person(user) if user else 'hand'}" + (f": {reason}" if reason else ".")
    cause = cause_text(cause)
    for cable in changing:
        # Never to verified (refused above): a fabric-verified cable leaving it loses the fabric's date.
        cable.status, cable.status_cause, cable.fabric_verified_at = status, cause, None
        # Only the status changes: its choices are checked; uniqueness and constraints cannot change.
        cable.full_clean(exclude=_NOT_STATUS, validate_unique=False, validate_constraints=False)
    bulk_update_with_history(changing, Cable, ["status", "status_cause", "fabric_verified_at"], batch_size=BATCH,
                             default_user=user, default_change_reason=cause)
    for project_id in sorted({cable.project_id for cable in changing}):
        evidence_changed_send(project_id=project_id, what="cable")  # a verified cable marked faulty regresses
    return len(changing)


def _locked(cables: QuerySet[Cable] | Iterable[Cable]) -> list[Cable]:
    """The cables' rows as they are now, locked until the transaction ends (so two writers do not both
    record a change from the same status)."""
    if isinstance(cables, QuerySet):
        ids = cables.order_by().values("pk")
    else:
        ids = [cable.pk for cable in cables]
    return list(Cable.objects.select_for_update().filter(pk__in=ids).order_by("pk"))
