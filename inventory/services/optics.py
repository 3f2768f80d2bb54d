"""Optics: seated in a port (installed), taken out, or changed; the status and the port always agree.
Seating records when and by whom (a scan on the floor says who); taking it out clears both."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from ..choices import OpticStatus
from ..models import Optic, Port
from .phrasing import moment, person
from .racking import CONFLICT

UNCHANGED = object()  # "leave the optic's port as it is" for optic_save; None means "take it out"


@transaction.atomic
def optic_install(*, optic: Optic, port: Port, user=None, installed_at: datetime | None = None) -> Optic:
    """Seat an optic in a port (installed), recording when and by whom when it moves into the port. The
    port accepts one optic; the database refuses a second, even at the same moment (a conflict)."""
    if hasattr(port, "optic") and port.optic.pk != optic.pk:
        raise ValidationError({"port": f"{port} already holds optic {port.optic.serial}."})
    if optic.port_id != port.pk or optic.installed_at is None:
        optic.installed_at, optic.installed_by = installed_at or timezone.now(), user
    optic.port = port
    optic.status = OpticStatus.INSTALLED
    optic.full_clean()
    try:
        with transaction.atomic():
            optic.save()
    except IntegrityError as exc:  # another optic took the port since the check above
        holder = Optic.objects.filter(port=port).select_related("installed_by").first()
        if holder is None:
            raise
        raise ValidationError(
            f"{port} was just given optic {holder.serial} by {person(holder.installed_by)} at "
            f"{moment(holder.installed_at)}.", code=CONFLICT,
        ) from exc
    return optic


@transaction.atomic
def optic_save(*, optic: Optic, port: Port | None | object = UNCHANGED, **fields) -> Optic:
    """Create or change an optic. A port seats it (installed), None takes it out of its port (into the
    given status, in stock by default); the status and the port always stay in step."""
    status = fields.pop("status", None)
    for name, value in fields.items():
        setattr(optic, name, value)
    if port is not UNCHANGED and port is not None:
        return optic_install(optic=optic, port=port)
    if port is None and optic.port_id is not None:
        return optic_remove(optic=optic, status=status or OpticStatus.IN_STOCK)
    if status is not None:
        optic.status = status
    optic.full_clean()
    optic.save()
    return optic


@transaction.atomic
def optic_remove(*, optic: Optic, status: str = OpticStatus.IN_STOCK) -> Optic:
    optic.port = None
    optic.status = status
    optic.installed_at, optic.installed_by = None, None
    optic.full_clean()
    optic.save()
    return optic
