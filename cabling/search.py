"""One search for every code the floor prints or a tool reports: the scan field and the search box both
resolve a code to its object in one step (cabling.codes says what kind of code it is).

What it finds, in one project the user may see: a device by serial, asset tag, name or node GUID; an
optic by serial; a port by `device:port`, end tag, GUID or MAC; a cable by label; a cable end by its end
code (`C00417/A`). Text is matched exactly, case-insensitively; a code may match several objects (a
serial that is also a name), and all are returned, the most specific first. A bounded number of
queries, whatever the size of the project.

The search box and the API also find what people type before they finish (`search_text`): after the exact
matches, names, labels and serials that start with the text, then those that contain it (gpu-05 finds
gpu-050 to gpu-059; the last digits of an optic's serial find it), one query per kind of object. The scan
field resolves codes exactly: a scan names one thing.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Case, IntegerField, Q, Value, When
from django.urls import reverse

from inventory.models import Device, Optic, Port
from projects.access import is_node, project_role
from projects.models import Project

from .codes import ParsedCode, parse_code
from .models import Cable
from .sql import cable_ends_by_code, cables_by_label, devices_by_text, optics_by_serial, port_by_names, ports_by_name

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


def resolve_code(*, user, project: Project, code: str | ParsedCode, lock_cable: bool = False) -> list[Match]:
    """Every object of the project this code names (CodeError for a code that cannot be one).

    lock_cable (inside a transaction): the cable an end code names is read locked (FOR UPDATE), for a scan
    that goes on to confirm the end; its ends are to be read after this, under the lock."""
    parsed = code if isinstance(code, ParsedCode) else parse_code(code)
    if not _sees(user, project):
        return []
    matches: list[Match] = []
    if parsed.cable_end:
        matches += _cable_ends(project, parsed, lock=lock_cable)
    if parsed.port:
        matches += _ports_by_name(project, *parsed.port)
    if parsed.end_tag:
        matches += _ports_by_end_tag(project, *parsed.end_tag)
    if parsed.guid_mac:
        matches += _by_guid_mac(project, parsed.guid_mac)
    if not parsed.cable_end:
        matches += _by_text(project, parsed.text)
    return _unique(matches)[:MAX_MATCHES]


PARTIAL_MIN = 2  # characters before partial matches are looked for: one letter names half the project


def search_text(*, user, project: Project, text: str) -> list[Match]:
    """What the search box finds for `text`: its exact matches (resolve_code) first, then the project's
    devices (by name, serial or asset tag), cables (by label) and optics (by serial) whose text starts with
    it, then those that contain it; at most MAX_MATCHES in all. CodeError for a text no code could be."""
    matches = resolve_code(user=user, project=project, code=text)
    wanted = text.strip()
    if len(matches) >= MAX_MATCHES or len(wanted) < PARTIAL_MIN or not _sees(user, project):
        return matches[:MAX_MATCHES]
    room = MAX_MATCHES - len(matches)
    partial = sorted(_partial(project, wanted, room), key=lambda found: found[0])
    return _unique(matches + [match for _, match in partial])[:MAX_MATCHES]


def _ranked(rows, fields: list[str], text: str):
    """`rows` whose `fields` contain `text` (any case), each with its rank: 0 when one of them starts with it,
    1 when it is only inside; the starting ones first."""
    contains, starts = Q(), Q()
    for name in fields:
        contains |= Q(**{f"{name}__icontains": text})
        starts |= Q(**{f"{name}__istartswith": text})
    rank = Case(When(starts, then=Value(0)), default=Value(1), output_field=IntegerField())
    return rows.filter(contains).annotate(search_rank=rank)


def _partial(project: Project, text: str, limit: int) -> list[tuple[tuple, Match]]:
    """(sort key, match) of the partial matches, three queries: devices, cables, optics."""
    devices = _ranked(Device.objects.filter(project=project), ["name", "serial", "asset_tag"], text)
    cables = _ranked(Cable.objects.filter(project=project), ["label"], text)
    optics = _ranked(Optic.objects.filter(project=project).select_related("port__device"), ["serial"], text)
    found = []
    lowered = text.lower()
    for device in devices.order_by("search_rank", "name")[:limit]:
        how = next((f"{label} {'starts with' if device.search_rank == 0 else 'contains'} it"
                    for label, value in (("name", device.name), ("serial", device.serial),
                                         ("asset tag", device.asset_tag)) if lowered in value.lower()), "name")
        found.append(((device.search_rank, 0, device.name), Match("device", device, how)))
    for cable in cables.order_by("search_rank", "label")[:limit]:
        how = f"label {'starts with' if cable.search_rank == 0 else 'contains'} it"
        found.append(((cable.search_rank, 1, cable.label), Match("cable", cable, how)))
    for optic in optics.order_by("search_rank", "serial")[:limit]:
        how = f"serial {'starts with' if optic.search_rank == 0 else 'contains'} it"
        found.append(((optic.search_rank, 2, optic.serial), Match("optic", optic, how)))
    return found


def _sees(user, project: Project) -> bool:
    """Whether the user may see the project at all: every lookup below stays inside it, so this is the whole
    of projects.access's scoping rule here (a member or staff; a node token its own project), asked once
    (the role is cached on the user: a scan that checked it already pays nothing)."""
    if is_node(user):
        return user.project_id == project.pk
    return project_role(user, project) is not None


# The lookups a scan makes are written out in cabling.sql (it says why); the rest go through the ORM.


def _cable_ends(project, parsed: ParsedCode, *, lock: bool = False) -> list[Match]:
    wanted = parsed.cable_end
    ends = cable_ends_by_code(project_id=project.pk, label=wanted.label, side=wanted.side, limit=MAX_MATCHES,
                              lock=lock)
    if wanted.side == "B" and wanted.position is not None:
        ends = [end for end in ends if end.position == wanted.position]
    elif wanted.side == "B" and len(ends) > 1:
        return [Match("cable", ends[0].cable, "label")]  # "/B" of a breakout: which leg, the port will tell
    return [Match("cable_end", end, "end code") for end in ends]


def port_by_label(*, project: Project, device: str, port: str) -> Port | None:
    """The port a label names exactly as we print it (`ib-leaf-03:p17`), with its device, or None: the
    unique (project, name) and (device, name) indexes find it in one step."""
    return port_by_names(project_id=project.pk, device=device, port=port)


def _ports_by_name(project, device: str, port: str) -> list[Match]:
    found = ports_by_name(project_id=project.pk, device=device, port=port, limit=MAX_MATCHES)
    return [Match("port", p, "device and port") for p in found]


def _ports_by_end_tag(project, rack: str, top_u: int, rest: str) -> list[Match]:
    """`A01-U37-gpu-001-ib0`: device names hold dashes too, so the device is the one in that rack whose
    name starts the rest, and the port the remainder."""
    devices = Device.objects.filter(project=project, rack__name__iexact=rack)
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


def _by_guid_mac(project, value: str) -> list[Match]:
    ports = Port.objects.filter(device__project=project, guid_mac__iexact=value)
    devices = Device.objects.filter(project=project, node_guid__iexact=value)
    return [
        *(Match("device", d, "node GUID") for d in devices[:MAX_MATCHES]),
        *(Match("port", p, "GUID / MAC") for p in ports.select_related("device")[:MAX_MATCHES]),
    ]


def _by_text(project, text: str) -> list[Match]:
    """A cable by label; devices by serial, asset tag or name; optics (with their port) by serial."""
    matches = [Match("cable", cable, "label")
               for cable in cables_by_label(project_id=project.pk, text=text, limit=MAX_MATCHES)]
    for found in devices_by_text(project_id=project.pk, text=text, limit=MAX_MATCHES):
        how = "serial" if found.serial.lower() == text.lower() else (
            "asset tag" if found.asset_tag.lower() == text.lower() else "name"
        )
        matches.append(Match("device", found, how))
    matches += [Match("optic", optic, "serial")
                for optic in optics_by_serial(project_id=project.pk, text=text, limit=MAX_MATCHES)]
    return matches


def _unique(matches: list[Match]) -> list[Match]:
    seen, unique = set(), []
    for match in matches:
        key = (match.kind, match.obj.pk)
        if key not in seen:
            seen.add(key)
            unique.append(match)
    return unique
