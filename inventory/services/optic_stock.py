"""Optics taken into stock many at once (a delivery of transceivers, the demo's stock of 2,000): the rows
optic_save writes one by one for an optic in stock, checked in memory first and then written in bulk inserts
with their history rows copied by the database (core.bulk_history), so a thousand optics cost a fixed number
of queries per batch rather than four per optic."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction

from core.bulk_history import bulk_create_recorded
from projects.models import Project

from ..choices import OpticStatus
from ..models import Optic
from .rack_units import BULK_BATCH

MAX_STOCK_ERRORS = 20


def _stock_errors(project: Project, optics: list[Optic]) -> list[str]:
    """What full_clean() and the database would refuse, for the whole delivery with one query: each optic's
    fields, and serials unique in the project (against the stock and within the delivery)."""
    errors: list[str] = []
    serials = set(Optic.objects.filter(project=project).values_list("serial", flat=True))
    for optic in optics:
        try:
            optic.clean_fields(exclude=["project", "port", "installed_by"])
        except ValidationError as exc:
            errors += [f"{optic.serial or '(no serial)'}: {field}: {' '.join(msgs)}"
                       for field, msgs in exc.message_dict.items()]
        if optic.project_id != project.pk:
            errors.append(f"{optic.serial}: belongs to another project")
        if optic.port_id is not None or optic.status != OpticStatus.IN_STOCK:
            errors.append(f"{optic.serial}: only optics in stock (in no port) are taken in this way")
        if optic.serial in serials:
            errors.append(f"{optic.serial}: another optic of the project already has this serial")
        serials.add(optic.serial)
    if len(errors) > MAX_STOCK_ERRORS:
        errors = errors[:MAX_STOCK_ERRORS] + [f"... and {len(errors) - MAX_STOCK_ERRORS} more like these"]
    return errors


@transaction.atomic
def optics_stock_bulk(*, project: Project, optics: list[Optic], user=None, reason: str = "Taken into stock",
                      at: datetime | None = None) -> list[Optic]:
    """Take `optics` (unsaved, of `project`, in stock) into the project's stock: every problem first, as one
    ValidationError listing them, and nothing written; else bulk inserts and a "created" history row each by
    `user` with `reason`. Returns the saved optics."""
    if not optics:
        return []
    errors = _stock_errors(project, optics)
    if errors:
        raise ValidationError(errors)
    return bulk_create_recorded(Optic, optics, batch_size=BULK_BATCH, user=user, reason=reason, at=at)
