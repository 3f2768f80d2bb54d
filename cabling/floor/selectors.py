"""Reads of the floor pages: what is left to do per rack, per device and per network/plane, in the order
a technician walks (top U down), and what the scan page keeps on the tablet for when the network drops.

Work comes in three kinds, each counted done / left / failed (failed is part of left: tried, not done):

- devices to rack: a device whose planned place is in the rack; done once racked (racked, powered or
  ready); failed when not done and a racking scan of it was refused.
- optics to seat: a cage (a physical port; a lane's optic sits in its parent) where a cable end needs a
  transceiver (its cable names an optic part for that side, and the end counts one: a twin-port cage is
  counted on one of its two ports); done once an optic is in it; failed when not done and an optic scan
  there was refused.
- cables to run and to verify: every cable with an end in the rack (a cable between two racks is on
  both worklists); done once verified; failed when faulty; "to run" is planned, "to verify" installed.

Every count is an aggregate (GROUP BY rack or device), so a page costs the same few queries for a rack of
six servers or for a network rack of 1,600 cable ends. Everything is scoped to the user's projects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Greatest
from django.shortcuts import get_object_or_404
from django.utils import timezone

from inventory.choices import DeviceStatus, Network
from inventory.models import Device, Optic, Port, Rack
from projects.access import scope_to_user
from projects.models import Project

from ..choices import CableStatus, ScanAction, ScanResult, Side
from ..codes import cable_end_code
from ..models import Cable, CableEnd, ScanEvent
from ..selectors import top_unit

RACKED = (DeviceStatus.RACKED, DeviceStatus.POWERED, DeviceStatus.READY)  # standing in its rack
TRIED_AND_REFUSED = (ScanResult.REFUSED, ScanResult.CONFLICT)
ENDS_PER_PAGE = 48  # a device page lists this many cable ends (a 144-port switch takes three pages)
RACK_DATA_VERSION = 1  # bumped when the shape of rack_data changes: the tablet drops older copies


@dataclass(frozen=True)
class Tally:
    total: int = 0
    done: int = 0
    failed: int = 0

    @property
    def left(self) -> int:
        return self.total - self.done

    @property
    def percent(self) -> int:
        return round(100 * self.done / self.total) if self.total else 100

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.total + other.total, self.done + other.done, self.failed + other.failed)


@dataclass(frozen=True)
class CableTally(Tally):
    to_run: int = 0  # planned: not in place yet
    to_verify: int = 0  # installed: in place, not confirmed by a scan or the fabric
    ends: int = 0  # cable ends in the rack or device
    ends_confirmed: int = 0


KIND_LABELS = (("devices", "Devices racked"), ("optics", "Optics seated"), ("cables", "Cables verified"))


def work_lines(work) -> list[tuple[str, str, Tally]]:
    """(kind, label, tally) of each kind of work there is, for the pages' counts."""
    return [(kind, label, getattr(work, kind)) for kind, label in KIND_LABELS
            if getattr(work, kind, None) is not None and getattr(work, kind).total]


@dataclass(frozen=True)
class Work:
    devices: Tally = Tally()
    optics: Tally = Tally()
    cables: CableTally = CableTally()

    @property
    def lines(self) -> list[tuple[str, str, Tally]]:
        return work_lines(self)

    @property
    def failed(self) -> int:
        return self.devices.failed + self.optics.failed + self.cables.failed

    @property
    def left(self) -> int:
        return self.devices.left + self.optics.left + self.cables.left


@dataclass(frozen=True)
class Scope:
    """A network and plane the worklists are narrowed to (a plane worklist), or everything."""

    network: str | None = None
    plane: int | None = None

    def __bool__(self) -> bool:
        return bool(self.network) or self.plane is not None

    def ends_q(self, prefix: str = "") -> Q:
        """Cable ends (reached through `prefix`, e.g. "ports__cable_end__") of cables in scope."""
        q = Q()
        if self.network:
            q &= Q(**{f"{prefix}cable__network": self.network})
        if self.plane is not None:
            q &= Q(**{f"{prefix}cable__plane": self.plane})
        return q

    @property
    def label(self) -> str:
        parts = [Network(self.network).label] if self.network else []
        if self.plane is not None:
            parts.append(f"plane {self.plane}")
        return ", ".join(parts)

    @property
    def query(self) -> dict[str, str]:
        query = {"network": self.network} if self.network else {}
        if self.plane is not None:
            query["plane"] = str(self.plane)
        return query


@dataclass
class RackWork:
    rack: Rack
    work: Work


@dataclass
class DeviceWork:
    device: Device
    work: Work

    @property
    def racked(self) -> bool:
        return self.device.status in RACKED

    @property
    def racking_refused(self) -> bool:
        return self.work.devices.failed > 0


@dataclass
class NetworkWork:
    network: str
    plane: int | None
    cables: CableTally
    optics: Tally = field(default_factory=Tally)

    devices = None  # a network has cables and optics; devices belong to none

    @property
    def scope(self) -> Scope:
        return Scope(self.network, self.plane)

    @property
    def lines(self) -> list[tuple[str, str, Tally]]:
        return work_lines(self)

    @property
    def label(self) -> str:
        return self.scope.label


# --- scoped building blocks ---------------------------------------------------------------------------


def _racks(user, project: Project) -> QuerySet[Rack]:
    return scope_to_user(Rack.objects.filter(project=project), user)


def _devices(user, project: Project) -> QuerySet[Device]:
    return scope_to_user(Device.objects.filter(project=project), user)


def _ends(user, project: Project, scope: Scope) -> QuerySet[CableEnd]:
    ends = scope_to_user(CableEnd.objects.filter(cable__project=project), user, "cable__project")
    return ends.filter(scope.ends_q())


def _with_top_u(devices: QuerySet[Device]) -> QuerySet[Device]:
    """Ordered as a technician walks a rack: from the top unit down."""
    return devices.annotate(
        top=F("position_u") + Greatest(F("hardware_model__height_u"), Value(1)) - Value(1)
    ).order_by(F("top").desc(nulls_last=True), "name")


def _refused(action: str, **match) -> Exists:
    return Exists(ScanEvent.objects.filter(action=action, result__in=TRIED_AND_REFUSED, **match))


# --- tallies, grouped by a key (rack id or device id) --------------------------------------------------


def _keyed(rows, key: str | tuple[str, ...]):
    """(group key, row) of a GROUP BY over one field or several (a tuple key for several)."""
    for row in rows:
        yield (tuple(row[k] for k in key) if isinstance(key, tuple) else row[key]), row


def _group_by(queryset: QuerySet, key: str | tuple[str, ...]) -> QuerySet:
    return queryset.order_by().values(*(key if isinstance(key, tuple) else (key,)))


def _device_tallies(devices: QuerySet[Device], key: str) -> dict[int, Tally]:
    done = Q(status__in=RACKED)
    rows = _group_by(devices, key).annotate(
        total=Count("pk"),
        done=Count("pk", filter=done),
        failed=Count("pk", filter=~done & Q(_refused(ScanAction.RACK, device_id=OuterRef("pk")))),
    )
    return {k: Tally(row["total"], row["done"], row["failed"]) for k, row in _keyed(rows, key)}


_CABLE_TALLY_FIELDS = ("total", "done", "failed", "to_run", "to_verify", "ends", "ends_confirmed")


def _cable_counts() -> dict:
    def cables(status: str | None = None) -> Count:
        return Count("cable", distinct=True, filter=Q(cable__status=status) if status else None)

    return dict(
        total=cables(), done=cables(CableStatus.VERIFIED), failed=cables(CableStatus.FAULTY),
        to_run=cables(CableStatus.PLANNED), to_verify=cables(CableStatus.INSTALLED),
        ends=Count("pk"), ends_confirmed=Count("pk", filter=Q(confirmed_at__isnull=False)),
    )


def _cable_tallies(ends: QuerySet[CableEnd], key: str | tuple[str, ...]) -> dict:
    rows = _group_by(ends, key).annotate(**_cable_counts())
    return {k: CableTally(**{name: row[name] for name in _CABLE_TALLY_FIELDS}) for k, row in _keyed(rows, key)}


def optic_needed() -> Q:
    """A cable end that needs a transceiver in its cage: its cable names one for the end's side, and the
    end counts it (the planner counts one per twin-port cage, on one of its ports)."""
    return Q(optic_count__gt=0) & (
        (Q(side=Side.A) & ~Q(cable__optic_part_a="")) | (Q(side=Side.B) & ~Q(cable__optic_part_b=""))
    )


def _optic_tallies(ends: QuerySet[CableEnd], key: str | tuple[str, ...]) -> dict:
    cages = ends.filter(optic_needed()).annotate(cage=Coalesce("port__parent_id", "port_id")).annotate(
        seated=Exists(Optic.objects.filter(port_id=OuterRef("cage"))),
        refused=_refused(ScanAction.OPTIC, port_id=OuterRef("cage")),
    )
    rows = _group_by(cages, key).annotate(
        total=Count("cage", distinct=True),
        done=Count("cage", distinct=True, filter=Q(seated=True)),
        failed=Count("cage", distinct=True, filter=Q(seated=False, refused=True)),
    )
    return {k: Tally(row["total"], row["done"], row["failed"]) for k, row in _keyed(rows, key)}


def _works(keys, devices: dict, optics: dict, cables: dict) -> dict[int, Work]:
    return {k: Work(devices.get(k, Tally()), optics.get(k, Tally()), cables.get(k, CableTally())) for k in keys}


# --- pages --------------------------------------------------------------------------------------------


def floor_racks(*, user, project: Project, scope: Scope = Scope(), row: str | None = None) -> list[RackWork]:
    """Every rack of the project (or of one row of it) with its work (four queries). With a scope, only
    racks holding cable ends of that network/plane, and only that work (devices are not in a network:
    none counted)."""
    racks = _racks(user, project).select_related("site").order_by("row", "position", "name")
    ends = _ends(user, project, scope).filter(port__device__rack__isnull=False)
    devices = _devices(user, project).filter(rack__isnull=False)
    if row is not None:
        racks, ends, devices = racks.filter(row=row), ends.filter(port__device__rack__row=row), devices.filter(
            rack__row=row)
    racks = list(racks)
    key = "port__device__rack_id"
    cables, optics = _cable_tallies(ends, key), _optic_tallies(ends, key)
    devices = {} if scope else _device_tallies(devices, "rack_id")
    works = _works([r.pk for r in racks], devices, optics, cables)
    shown = [RackWork(rack, works[rack.pk]) for rack in racks]
    if scope:
        shown = [item for item in shown if item.work.cables.total]
    return shown


@dataclass
class RowWork:
    row: str
    racks: int
    work: Work


def floor_rows(*, user, project: Project, scope: Scope = Scope()) -> list[RowWork]:
    """The rows of the hall, each with its racks' work counted as a whole (a cable between two racks of
    the row counts once): a hall of 300 racks is picked row first, then rack. Four queries. With a scope,
    the rows holding cable ends of it."""
    racks = _racks(user, project).order_by().values("row").annotate(racks=Count("pk"))
    ends = _ends(user, project, scope).filter(port__device__rack__isnull=False)
    key = "port__device__rack__row"
    cables, optics = _cable_tallies(ends, key), _optic_tallies(ends, key)
    devices = {} if scope else _device_tallies(_devices(user, project).filter(rack__isnull=False), "rack__row")
    counts = {entry["row"]: entry["racks"] for entry in racks}
    works = _works(sorted(counts), devices, optics, cables)
    rows = [RowWork(row, counts[row], works[row]) for row in sorted(counts)]
    return [item for item in rows if item.work.cables.total] if scope else rows


def rack_count(*, user, project: Project) -> int:
    return _racks(user, project).count()


def unplaced_device_count(*, user, project: Project) -> int:
    """Devices with no planned rack: the scan page can rack them once someone says where."""
    return _devices(user, project).filter(rack__isnull=True).count()


def floor_networks(*, user, project: Project) -> list[NetworkWork]:
    """One line per network, and one per plane of it (cables that name a plane), with cable and optic
    counts: the worklists of a crew cabling one network or one plane. Three aggregate queries."""
    ends = _ends(user, project, Scope())
    cables = scope_to_user(Cable.objects.filter(project=project), user)

    def count(status: str | None = None) -> Count:
        return Count("pk", filter=Q(status=status) if status else None)

    per_plane = cables.order_by().values("network", "plane").annotate(
        total=count(), done=count(CableStatus.VERIFIED), failed=count(CableStatus.FAULTY),
        to_run=count(CableStatus.PLANNED), to_verify=count(CableStatus.INSTALLED),
    )
    optics_per_network = _optic_tallies(ends, "cable__network")
    optics_per_plane = _optic_tallies(ends.filter(cable__plane__isnull=False), ("cable__network", "cable__plane"))
    networks: dict[str, CableTally] = {}
    lines: list[NetworkWork] = []
    for row in per_plane:
        tally = CableTally(row["total"], row["done"], row["failed"], row["to_run"], row["to_verify"])
        networks[row["network"]] = _sum_cables(networks.get(row["network"], CableTally()), tally)
        if row["plane"] is not None:
            key = (row["network"], row["plane"])
            lines.append(NetworkWork(row["network"], row["plane"], tally, optics_per_plane.get(key, Tally())))
    # A network all on one plane (or on none) is its own plane worklist: list only the network then.
    lines = [line for line in lines if lines_of(lines, line.network) > 1 or networks[line.network] != line.cables]
    lines += [NetworkWork(net, None, tally, optics_per_network.get(net, Tally())) for net, tally in networks.items()]
    order = {value: index for index, value in enumerate(Network.values)}
    return sorted(lines, key=lambda w: (order.get(w.network, len(order)), w.network, w.plane is not None,
                                        w.plane or 0))


def lines_of(lines: list[NetworkWork], network: str) -> int:
    return sum(1 for line in lines if line.network == network)


def _sum_cables(a: CableTally, b: CableTally) -> CableTally:
    return CableTally(*(getattr(a, name) + getattr(b, name) for name in _CABLE_TALLY_FIELDS))


@dataclass
class RackWorklist:
    rack: Rack
    work: Work
    devices: list[DeviceWork]
    scope: Scope


def rack_detail(*, user, project: Project, pk: int) -> Rack:
    return get_object_or_404(_racks(user, project).select_related("site"), pk=pk)


def rack_worklist(*, user, project: Project, pk: int, scope: Scope = Scope()) -> RackWorklist:
    """A rack's work, and its devices top U down, each with its own (five queries, whatever the rack
    holds). With a scope, the devices holding cable ends of it."""
    rack = rack_detail(user=user, project=project, pk=pk)
    devices = _devices(user, project).filter(rack=rack).select_related("hardware_model")
    if scope:
        devices = devices.filter(Exists(_ends(user, project, scope).filter(port__device_id=OuterRef("pk"))))
    device_list = list(_with_top_u(devices))
    ends = _ends(user, project, scope).filter(port__device__rack=rack)
    key = "port__device_id"
    cables, optics = _cable_tallies(ends, key), _optic_tallies(ends, key)
    racking = _device_tallies(devices, "pk")
    works = _works([d.pk for d in device_list], racking, optics, cables)
    rows = [DeviceWork(device, works[device.pk]) for device in device_list]
    total = Work(
        devices=sum((w.work.devices for w in rows), Tally()),
        optics=sum((w.work.optics for w in rows), Tally()),
        cables=_rack_cables(ends),
    )
    return RackWorklist(rack, total, rows, scope)


def _rack_cables(ends: QuerySet[CableEnd]) -> CableTally:
    """The rack's cables counted once each, even with both ends in the rack (a sum of its devices'
    counts would count such a cable twice): one aggregate query."""
    totals = ends.order_by().aggregate(**_cable_counts())
    return CableTally(**{name: totals[name] or 0 for name in _CABLE_TALLY_FIELDS})


@dataclass
class DeviceWorklist:
    device: Device
    work: Work
    ends: QuerySet[CableEnd]  # this device's cable ends, in port order: paginate it
    ports: list[dict]  # every port of the device, for the picture of its port row
    scope: Scope


def device_detail(*, user, project: Project, pk: int) -> Device:
    devices = _devices(user, project).select_related("rack", "hardware_model", "racked_by")
    device = get_object_or_404(devices, pk=pk)
    device.top = top_unit(device.position_u, device.hardware_model.height_u)
    return device


def device_worklist(*, user, project: Project, pk: int, scope: Scope = Scope()) -> DeviceWorklist:
    """One device's work: racking, its cages and its cable ends (with far ends, for a page of them), and
    its port row. Five queries, plus three for a page of ends."""
    device = device_detail(user=user, project=project, pk=pk)
    ends = _ends(user, project, scope).filter(port__device=device)
    key = "port__device_id"
    work = Work(
        devices=_device_tallies(_devices(user, project).filter(pk=device.pk), "pk").get(device.pk, Tally()),
        optics=_optic_tallies(ends, key).get(device.pk, Tally()),
        cables=_cable_tallies(ends, key).get(device.pk, CableTally()),
    )
    return DeviceWorklist(device, work, device_ends(ends), device_ports(device=device), scope)


def device_ends(ends: QuerySet[CableEnd]) -> QuerySet[CableEnd]:
    """Ends in port order (a lane after its port), each with its cable, port and cage optic, and its
    cable's other ends with their place (for a page of them: three queries)."""
    from django.db.models import Prefetch

    far = CableEnd.objects.select_related("port__device__rack", "port__device__hardware_model").order_by(
        "side", "position"
    )
    return (
        ends.select_related("cable", "port__optic", "port__parent__optic", "confirmed_by")
        .prefetch_related(Prefetch("cable__ends", queryset=far, to_attr="end_list"))
        .annotate(cage=Coalesce("port__parent_id", "port_id"))
        .order_by("cage", F("port__lane").asc(nulls_first=True), "pk")
    )


def describe_ends(ends) -> None:
    """What the device page shows of each end of a page of `device_ends` (no query): its printed end code
    and leg, the optic part it needs and the optic in its cage, and its far ends' places."""
    for end in ends:
        legs = end.cable.end_list
        b_ends = sum(1 for e in legs if e.side == Side.B)
        end.code = cable_end_code(end.cable.label, end.side, end.position, b_ends=b_ends)
        end.leg = "A end" if end.side == Side.A else ("B end" if b_ends <= 1 else f"B{end.position + 1} end")
        needs = end.cable.optic_part_a if end.side == Side.A else end.cable.optic_part_b
        end.optic_part = needs if end.optic_count else ""
        cage = end.port.parent if end.port.parent_id else end.port
        end.cage_optic = getattr(cage, "optic", None)
        end.far_ends = [
            {
                "rack": far.port.device.rack.name if far.port.device.rack_id else "",
                "top_u": top_unit(far.port.device.position_u, far.port.device.hardware_model.height_u),
                "device": far.port.device.name, "port": far.port.name,
            }
            for far in legs if far.side != end.side
        ]


PORT_FIELDS = ("id", "name", "parent", "lane", "plane", "optic", "end", "label", "status", "confirmed", "needs")


def device_ports(*, device: Device) -> list[list]:
    """Every port of one device as rows of PORT_FIELDS, for the picture of its port row (one query): the
    optic in it (serial), the cable end on it (id, cable label, cable status, whether the end is
    confirmed) and the optic part the end needs ("" when none)."""
    return [_port_row(row) for row in _port_values(Port.objects.filter(device=device))]


def _port_values(ports: QuerySet[Port]):
    return ports.order_by("id").values_list(
        "id", "device_id", "name", "parent_id", "lane", "plane", "optic__serial", "cable_end__id",
        "cable_end__cable__label", "cable_end__cable__status", "cable_end__confirmed_at", "cable_end__side",
        "cable_end__optic_count", "cable_end__cable__optic_part_a", "cable_end__cable__optic_part_b",
    )


def _port_row(row) -> list:
    (pk, _device, name, parent, lane, plane, optic, end, label, status, confirmed, side, count, part_a,
     part_b) = row
    needs = (part_a if side == Side.A else part_b) if end and count else ""
    return [pk, name, parent, lane, plane, optic or "", end, label or "", status or "", confirmed is not None,
            needs or ""]


# --- what the tablet keeps for offline use --------------------------------------------------------------


def rack_data(*, user, project: Project, pk: int) -> dict:
    """What the scan page needs to work in this rack without the network, as JSON-ready data:

    - the rack, and its devices (place, status, serial and asset tag, to resolve a scanned code);
    - every port of those devices as rows of PORT_FIELDS plus the device id (to tap a port);
    - every cable with an end in the rack, in the scan API's cable shape (both ends: rack, top U,
      device, port, lane, plane, optic part, confirmed), so an offline scan shows what an online one does.

    Five queries for any rack; the largest demo rack (1,600 ends, 7,900 ports) is about 1 MB of JSON
    before compression."""
    rack = rack_detail(user=user, project=project, pk=pk)
    devices = list(_with_top_u(_devices(user, project).filter(rack=rack).select_related("hardware_model")))
    ports = []
    for row in _port_values(Port.objects.filter(device__rack=rack, device__project=project)):
        ports.append([*_port_row(row), row[1]])
    # The ids first (a few hundred, at most a few thousand): one plain query, then the ends of exactly those
    # cables, rather than a subquery the planner may join in the wrong order over the whole project.
    cable_ids = set(_ends(user, project, Scope()).filter(port__device__rack=rack).values_list("cable_id", flat=True))
    cables = cables_for_scan(user=user, project=project, cable_ids=sorted(cable_ids))
    return {
        "version": RACK_DATA_VERSION,
        "project": project.code,
        "fetched_at": timezone.now().isoformat(),
        "rack": {"id": rack.pk, "name": rack.name, "height_u": rack.height_u},
        "devices": [_device_json(d, rack) for d in devices],
        "port_fields": [*PORT_FIELDS, "device"],
        "ports": ports,
        "cables": cables,
    }


def _device_json(device: Device, rack: Rack) -> dict:
    return {
        "id": device.pk, "name": device.name, "rack": rack.name, "position_u": device.position_u,
        "top_u": device.top, "height_u": max(device.hardware_model.height_u, 1), "status": device.status,
        "racked": device.status in RACKED, "serial": device.serial, "asset_tag": device.asset_tag,
    }


_SCAN_END_FIELDS = (
    "id", "cable_id", "side", "position", "port_id", "port__name", "port__lane", "port__plane",
    "port__device_id", "port__device__name", "port__device__rack__name", "port__device__position_u",
    "port__device__hardware_model__height_u", "confirmed_at", "confirmed_by__username",
    "cable__label", "cable__status", "cable__network", "cable__plane", "cable__verified_at",
    "cable__verified_by__username", "cable__optic_part_a", "cable__optic_part_b",
)


def cables_for_scan(*, user, project: Project, cable_ids: list[int]) -> list[dict]:
    """The cables of `cable_ids` (of the project, as the user may see them) in the scan API's shape
    (`{id, label, status, network, plane, verified_at, verified_by, ends: [{id, side, position, code,
    rack, top_u, device, device_id, port, port_id, lane, plane, optic_part, confirmed_at,
    confirmed_by}]}`), from one flat query over their ends."""
    ends = scope_to_user(CableEnd.objects.filter(cable__project=project), user, "cable__project").filter(
        cable_id__in=cable_ids
    )
    by_cable: dict[int, dict] = {}
    for row in ends.order_by("cable__label", "cable_id", "side", "position").values(*_SCAN_END_FIELDS):
        cable = by_cable.get(row["cable_id"])
        if cable is None:
            cable = by_cable[row["cable_id"]] = {
                "id": row["cable_id"], "label": row["cable__label"], "status": row["cable__status"],
                "network": row["cable__network"], "plane": row["cable__plane"],
                "verified_at": _iso(row["cable__verified_at"]), "verified_by": row["cable__verified_by__username"],
                "ends": [],
            }
        part = row["cable__optic_part_a"] if row["side"] == Side.A else row["cable__optic_part_b"]
        cable["ends"].append({
            "id": row["id"], "side": row["side"], "position": row["position"], "code": "",
            "rack": row["port__device__rack__name"],
            "top_u": top_unit(row["port__device__position_u"], row["port__device__hardware_model__height_u"]),
            "device": row["port__device__name"], "device_id": row["port__device_id"],
            "port": row["port__name"], "port_id": row["port_id"], "lane": row["port__lane"],
            "plane": row["port__plane"], "optic_part": part,
            "confirmed_at": _iso(row["confirmed_at"]), "confirmed_by": row["confirmed_by__username"],
        })
    for cable in by_cable.values():
        b_ends = sum(1 for end in cable["ends"] if end["side"] == Side.B)
        for end in cable["ends"]:
            end["code"] = cable_end_code(cable["label"], end["side"], end["position"], b_ends=b_ends)
    return list(by_cable.values())


def _iso(value: datetime | None) -> str | None:
    """As the API writes a time (DRF's DateTimeField): local time, ISO 8601, UTC as Z."""
    if value is None:
        return None
    text = timezone.localtime(value).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


def scan_racks(*, user, project: Project) -> list[dict]:
    """The project's racks for the scan page: to choose where a device goes, and to find a rack's
    offline data by the name an answer gives (one query)."""
    racks = _racks(user, project).order_by("row", "position", "name").values("id", "name", "height_u")
    return list(racks)
