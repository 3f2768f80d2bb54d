"""Optics: seated in a port (installed), taken out, or changed; the status and the port always agree."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from ..choices import OpticStatus
from ..models import Optic, Port

UNCHANGED = object()  # "leave the optic's port as it is" for optic_save; None means "take it out"


@transaction.atomic
def optic_install(*, optic: Optic, port: Port) -> Optic:
    """Seat an optic in a port. The port accepts one optic; the database refuses a second."""
    if hasattr(port, "optic") and port.optic.pk != optic.pk:
        raise ValidationError({"port": f"{port} already holds optic {port.optic.serial}."})
    optic.port = port
    optic.status = OpticStatus.INSTALLED
    optic.full_clean()
    optic.save()
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
    optic.full_clean()
    optic.save()
    return optic
