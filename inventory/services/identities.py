"""Identities the fabric reports, recorded on devices and ports as they are learned: a switch's (or host's)
InfiniBand node GUID on the device, an HCA port's GUID or an Ethernet port's MAC on the port. A topology
comparison learns them (validation.topology) and matches on them from then on, so a host renamed in its OS
is still found by its GUID.

Values arrive normalised (cabling.codes.normalize_guid_mac spells them: 16 lower-case hex digits for a
GUID, six colon-separated pairs for a MAC); inventory sits below cabling and cannot import it, so they are
only checked here. An identity belongs to one device or port of a project: learning it on one clears it
from any other that held it (a moved HCA, a swapped NIC). Every change keeps a history row, in bulk (copied
by the database: core.bulk_history). The statements are written out in inventory.sql.

A whole fabric's first comparison learns every port's identity at once (16,384 MACs at 1,024 servers), so on
PostgreSQL each kind (devices, ports) is one statement: the values go as two arrays, the rows that change are
updated from them, the rows that held a learned value are cleared, and both get their history rows, all as
data-modifying CTEs (no row comes back to Python, and the statement's text does not grow with the values, so it
is prepared once). Elsewhere (SQLite, or history turned off) the rows are read by chunks of ids and updated with
one statement per chunk, and history_copy follows. Measured at 1,024 servers: 0.35 s for the 16,383 ports and
their history rows (EXPLAIN ANALYZE), against about 1 s for 18 SELECTs building 16,000 model instances, 9 UPDATEs
and the history copy; a port's guid_mac has no index (migration inventory 0010), so the ports' UPDATE is HOT.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from core.bulk_history import history_copy, update_recorded_supported
from projects.models import Project

from ..models import Device, Port
from ..sql import field_values_update, identities_learn_recorded

_GUID = re.compile(r"^[0-9a-f]{16}$")
_MAC = re.compile(r"^[0-9a-f]{2}(?::[0-9a-f]{2}){5}$")
CHUNK = 2000


def _checked(values: Mapping[int, str], field: str, *, macs: bool) -> dict[int, str]:
    bad = sorted(str(v)[:40] for v in values.values() if not (_GUID.match(str(v)) or (macs and _MAC.match(str(v)))))
    if bad:
        what = "GUIDs (16 lower-case hex digits)" + (" or MACs (aa:bb:cc:dd:ee:ff)" if macs else "")
        raise ValidationError({field: f"Not {what}: {', '.join(bad[:5])}."})
    return {int(pk): str(value) for pk, value in values.items()}


def _chunks(items: list) -> list[list]:
    return [items[i:i + CHUNK] for i in range(0, len(items), CHUNK)]


@transaction.atomic
def identities_record(
    *, project: Project, device_guids: Mapping[int, str] | None = None, port_ids: Mapping[int, str] | None = None,
    user=None, cause: str = "",
) -> int:
    """Record `device_guids` (device id -> node GUID) and `port_ids` (port id -> GUID or MAC) on the
    project's devices and ports (ids of other projects are ignored). Returns how many rows changed."""
    guids = _checked(device_guids or {}, "device_guids", macs=False)
    ids = _checked(port_ids or {}, "port_ids", macs=True)
    recorded = {"user": user, "reason": cause or "learned from the fabric", "at": timezone.now()}
    learn = _learned_in_one_statement if update_recorded_supported() else _learned_by_chunks
    changed = 0
    for model, field, values in ((Device, "node_guid", guids), (Port, "guid_mac", ids)):
        if values:
            changed += learn(model, field, values, project, **recorded)
    return changed


def _project_rows(model, project: Project) -> QuerySet:
    """The project's devices or ports: the only rows an identity is learned on or taken from."""
    return model.objects.filter(project=project) if model is Device else model.objects.filter(device__project=project)


def _learned_by_chunks(model, field: str, values: dict[int, str], project: Project, *, user, reason: str,
                       at: datetime) -> int:
    """Give each of the project's rows of `model` named in `values` its value in `field` where it differs,
    clear it from any other of the project's rows that held a value just learned, and copy the history rows of
    both: reads and updates by chunks of ids, then history_copy. Returns how many rows changed."""
    rows = _project_rows(model, project)
    learned: dict[int, str] = {}
    for chunk in _chunks(sorted(values)):
        for pk, current in rows.filter(pk__in=chunk).values_list("pk", field):
            if current != values[pk]:
                learned[pk] = values[pk]
    cleared: list[int] = []
    for chunk in _chunks(sorted(set(learned.values()))):
        cleared += [pk for pk in rows.filter(**{f"{field}__in": chunk}).values_list("pk", flat=True)
                    if pk not in learned]
    if learned or cleared:
        field_values_update(model=model, field=field, values=[*learned.items(), *((pk, "") for pk in cleared)])
        history_copy(model, [*learned, *cleared], user=user, reason=reason, at=at)
    return len(learned) + len(cleared)


def _learned_in_one_statement(model, field: str, values: dict[int, str], project: Project, *, user, reason: str,
                              at: datetime) -> int:
    """_learned_by_chunks's changes and history rows in one statement (PostgreSQL: inventory.sql)."""
    return identities_learn_recorded(model=model, field=field, values=values, project=project, user=user,
                                     reason=reason, at=at)
