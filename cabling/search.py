"""One search for every code the floor prints or a tool reports: the scan field and the search box both
resolve a code to its object in one step (cabling.codes says what kind of code it is).

What it finds, in one project the user may see: a device by serial, asset tag, name or node GUID; an
optic by serial; a port by `device:port`, end tag, GUID or MAC; a cable by label; a cable end by its end
code (`C00417/A`). Text is matched exactly, case-insensitively; a code may match several objects (a
serial that is also a name), and all are returned, the most specific first. A bounded number of
queries, whatever the size of the project.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Q
from django.urls import reverse

from delivery.access import scope_to_user
from delivery.models import Project
from inventory.models import Device, Optic, Port

from .codes import ParsedCode, parse_code
from .models import Cable, CableEnd

MAX_MATCHES = 20  # a code that matches more than this is not a code; the first ones are shown


@dataclass(frozen=True)
class Match:
    kind: str  # "cable_end", "cable", "port", "device", "optic"
    obj: object
    how: str  # what matched: "serial", "asset tag", "name", "label", "end code", "GUID / MAC", ...

    @property
    def label(self) -> str:
        return str(self.obj)

    def url(self, project: Project) -> str:
        """The object's page (a cable end opens its cable, a port its device)."""
        code = project.code
        if self.kind in ("cable", "cable_end"):
            cable_id = self.obj.cable_id if self.kind == "cable_end" else self.obj.pk
            return reverse("cabling:cable-detail", args=[code, cable_id])
        if self.kind == "port":
            return reverse("inventory:device-detail", args=[code, self.obj.device_id])
        if self.kind == "device":
            return reverse("inventory:device-detail", args=[code, self.obj.pk])
        return reverse("inventory:optic-detail", args=[code, self.obj.pk])


def resolve_code(*, user, project: Project, code: str | ParsedCode) -> list[Match]:
    """Every object of the project this code names (CodeError for a code that cannot be one)."""
    parsed = code if isinstance(code, ParsedCode) else parse_code(code)
    matches: list[Match] = []
    if parsed.cable_end:
        matches += _cable_ends(user, project, parsed)
    if parsed.port:
        matches += _ports_by_name(user, project, *parsed.port)
    if parsed.end_tag:
        matches += _ports_by_end_tag(user, project, *parsed.end_tag)
    if parsed.guid_mac:
        matches += _by_guid_mac(user, project, parsed.guid_mac)
    if not parsed.cable_end:
        matches += _by_text(user, project, parsed.text)
    return _unique(matches)[:MAX_MATCHES]


def _scoped(queryset, user, project: Project, path: str = "project"):
    return scope_to_user(queryset.filter(**{path: project}), user, path)


def _cable_ends(user, project, parsed: ParsedCode) -> list[Match]:
    wanted = parsed.cable_end
    ends = _scoped(CableEnd.objects.all(), user, project, "cable__project").filter(
        cable__label__iexact=wanted.label, side=wanted.side
    )
    ends = list(ends.select_related("cable", "port__device").order_by("position")[:MAX_MATCHES])
    if wanted.side == "B" and wanted.position is not None:
        ends = [end for end in ends if end.position == wanted.position]
    elif wanted.side == "B" and len(ends) > 1:
        return [Match("cable", ends[0].cable, "label")]  # "/B" of a breakout: which leg, the port will tell
    return [Match("cable_end", end, "end code") for end in ends]


def _ports_by_name(user, project, device: str, port: str) -> list[Match]:
    ports = _scoped(Port.objects.all(), user, project, "device__project").filter(
        device__name__iexact=device, name__iexact=port
    )
    return [Match("port", p, "device and port") for p in ports.select_related("device")[:MAX_MATCHES]]


def _ports_by_end_tag(user, project, rack: str, top_u: int, rest: str) -> list[Match]:
    """`A01-U37-gpu-001-ib0`: device names hold dashes too, so the device is the one in that rack whose
    name starts the rest, and the port the remainder."""
    devices = _scoped(Device.objects.all(), user, project).filter(rack__name__iexact=rack)
    found = []
    for device in devices.select_related("hardware_model").only(
        "id", "name", "position_u", "hardware_model__height_u"
    ):
        prefix = f"{device.name.lower()}-"
        if rest.lower().startswith(prefix) and device.top_u == top_u:
            found.append((device.pk, rest[len(prefix):]))
    if not found:
        return []
    wanted = Q()
    for device_id, port in found:
        wanted |= Q(device_id=device_id, name__iexact=port)
    ports = Port.objects.filter(wanted).select_related("device")[:MAX_MATCHES]
    return [Match("port", p, "end tag") for p in ports]


def _by_guid_mac(user, project, value: str) -> list[Match]:
    ports = _scoped(Port.objects.all(), user, project, "device__project").filter(guid_mac__iexact=value)
    devices = _scoped(Device.objects.all(), user, project).filter(node_guid__iexact=value)
    return [
        *(Match("device", d, "node GUID") for d in devices[:MAX_MATCHES]),
        *(Match("port", p, "GUID / MAC") for p in ports.select_related("device")[:MAX_MATCHES]),
    ]


def _by_text(user, project, text: str) -> list[Match]:
    cables = _scoped(Cable.objects.all(), user, project).filter(label__iexact=text)
    devices = _scoped(Device.objects.all(), user, project).filter(
        Q(serial__iexact=text) | Q(asset_tag__iexact=text) | Q(name__iexact=text)
    )
    optics = _scoped(Optic.objects.all(), user, project).filter(serial__iexact=text)
    matches = [Match("cable", c, "label") for c in cables[:MAX_MATCHES]]
    for device in devices[:MAX_MATCHES]:
        how = "serial" if device.serial.lower() == text.lower() else (
            "asset tag" if device.asset_tag.lower() == text.lower() else "name"
        )
        matches.append(Match("device", device, how))
    matches += [Match("optic", o, "serial") for o in optics.select_related("port__device")[:MAX_MATCHES]]
    return matches


def _unique(matches: list[Match]) -> list[Match]:
    seen, unique = set(), []
    for match in matches:
        key = (match.kind, match.obj.pk)
        if key not in seen:
            seen.add(key)
            unique.append(match)
    return unique
