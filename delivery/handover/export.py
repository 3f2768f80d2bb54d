"""The as-built in NetBox's terms: what a project's sites, racks, devices, ports, cables and optics are as
NetBox objects, and the bulk-import files (CSV) of NetBox's "Import" pages, in import order.

One reading of the database serves both ways out: the files written here and the live push
(`handover.push`) take the same records, so a value cannot differ between them. Each table is read with a
fixed number of queries whatever its size; the big ones (interfaces, cables, optics) stream from the
database in chunks, so a file of 100,000 interfaces costs the memory of a chunk.

The column names are NetBox's own CSV fields (`dcim/forms/bulk_import.py`, see docs/handover.md for the
version they were checked against); the values are NetBox's choice values (statuses, interface and cable
types). Every CSV cell goes through `core.spreadsheets.csv_safe`, as every CSV the project writes.
"""

from __future__ import annotations

import csv
import io
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from itertools import groupby
from typing import IO

from django.utils.text import slugify

from cabling.choices import CableStatus, CableType
from cabling.codes import normalize_guid_mac
from cabling.models import CableEnd
from core.spreadsheets import csv_safe
from inventory.catalogue.reader import INTERFACE_TYPES
from inventory.choices import DeviceRole, DeviceStatus, FormFactor, Network, PortKind, PortStatus, RackStatus
from inventory.models import Device, Optic, Port, Rack, Site
from projects.models import Project

CHUNK = 2_000  # rows fetched at a time from the big tables
DESCRIPTION_MAX = 200  # NetBox's description fields
RACK_WIDTH = 19  # inches: NetBox's rack import requires a width, and GPU racks are 19"

# --- Our values in NetBox's words ----------------------------------------------------------------------

RACK_STATUS = {
    RackStatus.PLANNED: "planned", RackStatus.INSTALLED: "active", RackStatus.POWERED: "active",
    RackStatus.ACTIVE: "active",
}
# NetBox's device statuses: offline, active, planned, staged, failed, inventory, decommissioning.
DEVICE_STATUS = {
    DeviceStatus.PLANNED: "planned", DeviceStatus.RECEIVED: "inventory", DeviceStatus.RACKED: "staged",
    DeviceStatus.POWERED: "staged", DeviceStatus.READY: "active",
}
# NetBox's cable (link) statuses are connected, planned and decommissioning: a faulty cable is still in
# place, so it is connected; the description says it is faulty.
CABLE_STATUS = {
    CableStatus.PLANNED: "planned", CableStatus.INSTALLED: "connected", CableStatus.VERIFIED: "connected",
    CableStatus.FAULTY: "connected",
}
# A fibre with transceivers may be single-mode or multimode (800G 2xDR4 is single-mode, 400G SR4 multimode):
# we do not know which, so its NetBox type stays empty rather than wrong.
CABLE_TYPE = {
    CableType.DAC: "dac-passive", CableType.ACC: "dac-active", CableType.AOC: "aoc", CableType.CAT6: "cat6",
    CableType.FIBER: "",
}
ROLE_COLORS = {  # NetBox wants a colour per device role (six hex digits)
    DeviceRole.GPU_NODE: "4caf50", DeviceRole.STORAGE_NODE: "795548", DeviceRole.LEAF: "2196f3",
    DeviceRole.SPINE: "3f51b5", DeviceRole.SUPER_SPINE: "673ab7", DeviceRole.MGMT_SWITCH: "9e9e9e",
    DeviceRole.HEAD_NODE: "009688", DeviceRole.PDU: "ff9800", DeviceRole.OTHER: "607d8b",
}
# Ports that are NetBox interfaces (power and console ports are other kinds of NetBox component).
INTERFACE_KINDS = (PortKind.ETHERNET, PortKind.INFINIBAND, PortKind.BMC)
# How a NetBox interface type names a form factor, for choosing among the types of one speed.
FORM_FACTOR_TYPE_SUFFIX = {
    FormFactor.OSFP: "-osfp", FormFactor.QSFP112: "-qsfp112", FormFactor.QSFP_DD: "-qsfpdd",
    FormFactor.QSFP56: "-qsfp56", FormFactor.QSFP28: "-qsfp28", FormFactor.SFP28: "-sfp28",
    FormFactor.SFP_PLUS: "-sfpp", FormFactor.RJ45: "-t",
}
# The type of a port of this kind and speed when no seated transceiver says its form factor: the cage GPU
# clusters use most at that speed. Every value is a key of the catalogue's INTERFACE_TYPES, the table the
# device-type import reads NetBox types with, so the two directions agree.
DEFAULT_INTERFACE_TYPE = {
    (PortKind.ETHERNET, 1): "1000base-t", (PortKind.ETHERNET, 10): "10gbase-x-sfpp",
    (PortKind.ETHERNET, 25): "25gbase-x-sfp28", (PortKind.ETHERNET, 40): "40gbase-x-qsfpp",
    (PortKind.ETHERNET, 50): "50gbase-x-sfp56", (PortKind.ETHERNET, 100): "100gbase-x-qsfp28",
    (PortKind.ETHERNET, 200): "200gbase-x-qsfp56", (PortKind.ETHERNET, 400): "400gbase-x-osfp",
    (PortKind.ETHERNET, 800): "800gbase-x-osfp", (PortKind.ETHERNET, 1600): "1.6tbase-x-osfp1600",
    (PortKind.INFINIBAND, 100): "infiniband-edr", (PortKind.INFINIBAND, 200): "infiniband-hdr",
    (PortKind.INFINIBAND, 400): "infiniband-ndr", (PortKind.INFINIBAND, 800): "infiniband-xdr",
}
OTHER_INTERFACE_TYPE = "other"


@lru_cache(maxsize=256)  # a cluster has a handful of (kind, speed, form factor): 100,000 ports ask again
def interface_type(kind: str, speed_gbps: int, form_factor: str = "") -> str:
    """NetBox's interface type for a port: from the catalogue's table (kind and speed), narrowed by the form
    factor of the transceiver seated in it when there is one; "other" for a speed NetBox has no type for."""
    kind = PortKind.ETHERNET if kind == PortKind.BMC else kind
    candidates = [name for name, known in INTERFACE_TYPES.items() if known == (kind, speed_gbps)]
    suffix = FORM_FACTOR_TYPE_SUFFIX.get(form_factor)
    if suffix:
        fitting = [name for name in candidates if name.endswith(suffix)]
        if fitting:
            return fitting[0]
    return DEFAULT_INTERFACE_TYPE.get((kind, speed_gbps)) or (candidates[0] if candidates else OTHER_INTERFACE_TYPE)


def slug_of(text: str, fallback: str) -> str:
    """A NetBox slug (letters, digits, - and _, at most 100): a name of Chinese characters only slugs to
    nothing, so `fallback` then stands in."""
    return (slugify(text) or slugify(fallback) or "x")[:100]


def wwn_of(guid_mac: str) -> str:
    """An InfiniBand GUID (EUI-64) as NetBox's interface WWN prints it ("04:3F:72:...", eight pairs);
    blank for a MAC or anything else."""
    value = normalize_guid_mac(guid_mac) if guid_mac else None
    if not value or len(value) != 16:
        return ""
    return ":".join(value[i:i + 2] for i in range(0, 16, 2)).upper()


def mac_of(guid_mac: str) -> str:
    """An Ethernet MAC as NetBox prints it ("B8:CE:F6:12:34:56"); blank for a GUID or anything else."""
    value = normalize_guid_mac(guid_mac) if guid_mac else None
    return value.upper() if value and len(value) == 17 else ""


def _describe(*parts: str) -> str:
    return "; ".join(part for part in parts if part)[:DESCRIPTION_MAX]


NETWORK_LABELS = dict(Network.choices)


@lru_cache(maxsize=256)
def _network_text(network: str, plane: int | None) -> str:
    if not network:
        return ""
    name = NETWORK_LABELS.get(network, network)
    name = str(name)
    return f"{name}, plane {plane}" if plane is not None else name


# --- The records ----------------------------------------------------------------------------------------
# Each names its related objects by what NetBox's import looks them up by (a site by name, a device type by
# its manufacturer and model, a device by name, an interface by its device and name).


@dataclass(frozen=True, slots=True)
class NbSite:
    name: str
    slug: str
    physical_address: str = ""
    status: str = "active"


@dataclass(frozen=True, slots=True)
class NbRack:
    site: str
    name: str
    status: str
    u_height: int
    description: str
    width: int = RACK_WIDTH


@dataclass(frozen=True, slots=True)
class NbManufacturer:
    name: str
    slug: str


@dataclass(frozen=True, slots=True)
class NbDeviceType:
    manufacturer: str
    model: str
    slug: str
    part_number: str
    u_height: int
    is_full_depth: bool


@dataclass(frozen=True, slots=True)
class NbRole:
    name: str
    slug: str
    color: str


@dataclass(frozen=True, slots=True)
class NbDevice:
    name: str
    role: str  # the role's name
    manufacturer: str
    device_type: str  # the model
    status: str
    site: str
    rack: str  # blank: not racked
    position: int | None  # lowest U; None for an unracked or zero-U device
    face: str  # blank when there is no position
    serial: str
    asset_tag: str


@dataclass(slots=True)
class NbInterface:
    device: str
    name: str
    parent: str  # the physical port of a breakout lane, blank otherwise
    type: str
    speed: int  # kb/s, as NetBox counts interface speeds
    enabled: bool
    mgmt_only: bool
    wwn: str
    mac_address: str
    description: str


@dataclass(slots=True)
class NbCable:
    label: str
    a: tuple[tuple[str, str], ...]  # (device, interface) of each termination, in leg order
    b: tuple[tuple[str, str], ...]
    type: str
    status: str
    length: Decimal
    length_unit: str
    description: str

    @property
    def is_breakout(self) -> bool:
        return len(self.a) > 1 or len(self.b) > 1


@dataclass(slots=True)
class NbInventoryItem:
    device: str
    name: str
    manufacturer: str
    part_id: str
    serial: str
    component_name: str  # the interface the optic sits in
    description: str
    status: str = "active"
    component_type: str = "dcim.interface"


@dataclass
class AsBuilt:
    """The small tables of a project, read at once (devices are at most a few thousand); the big ones are
    streamed by `interfaces`, `cables` and `inventory_items`."""

    project: Project
    sites: list[NbSite]
    racks: list[NbRack]
    manufacturers: list[NbManufacturer]
    device_types: list[NbDeviceType]
    roles: list[NbRole]
    devices: list[NbDevice]


def as_built(project: Project) -> AsBuilt:
    """Sites, racks, manufacturers, device types, roles and devices of `project` (four queries)."""
    sites = list(Site.objects.filter(project=project).order_by("name"))
    racks = list(Rack.objects.filter(project=project).select_related("site").order_by("site__name", "name"))
    devices = list(
        Device.objects.filter(project=project).select_related("hardware_model", "rack__site").order_by("name")
    )
    nb_sites = [NbSite(name=s.name, slug=slug_of(s.name, f"site-{s.pk}"), physical_address=s.address) for s in sites]
    default_site = _default_site(project, nb_sites, devices)
    if default_site is not None and all(s.name != default_site.name for s in nb_sites):
        nb_sites.append(default_site)
    models = {d.hardware_model_id: d.hardware_model for d in devices}
    vendors = {m.vendor for m in models.values()} | set(
        Optic.objects.filter(project=project, port__isnull=False).values_list("vendor", flat=True).distinct()
    )
    roles = sorted({d.role for d in devices})
    return AsBuilt(
        project=project,
        sites=nb_sites,
        racks=[_rack(r) for r in racks],
        manufacturers=[NbManufacturer(name=v, slug=slug_of(v, f"vendor-{i}")) for i, v in enumerate(sorted(vendors))],
        device_types=[_device_type(m) for m in sorted(models.values(), key=lambda m: (m.vendor, m.model))],
        roles=[_role(r) for r in roles],
        devices=[_device(d, default_site) for d in devices],
    )


def _default_site(project: Project, sites: list[NbSite], devices: list[Device]) -> NbSite | None:
    """Where an unracked device goes (NetBox gives every device a site): the project's first site, or one
    named after the project's site text (its code when blank) when it has none."""
    if sites:
        return sites[0]
    if not any(d.rack_id is None for d in devices):
        return None
    name = project.site or project.code
    return NbSite(name=name, slug=slug_of(name, project.code))


def _rack(rack: Rack) -> NbRack:
    return NbRack(site=rack.site.name, name=rack.name, status=RACK_STATUS.get(rack.status, "active"),
                  u_height=rack.height_u, description=f"Row {rack.row}, position {rack.position}")


def _device_type(model) -> NbDeviceType:
    return NbDeviceType(manufacturer=model.vendor, model=model.model, slug=slug_of(model.model, model.part_number),
                        part_number=model.part_number, u_height=model.height_u, is_full_depth=model.is_full_depth)


ROLE_LABELS = dict(DeviceRole.choices)


def _role(role: str) -> NbRole:
    name = str(ROLE_LABELS.get(role, role))
    return NbRole(name=name, slug=slug_of(role.replace("_", "-"), "role"), color=ROLE_COLORS.get(role, "9e9e9e"))


def _device(device: Device, default_site: NbSite | None) -> NbDevice:
    racked = device.rack_id is not None
    # NetBox refuses a position for a zero-U device (a rear PDU): it stays in its rack without one.
    placed = racked and device.hardware_model.height_u > 0
    return NbDevice(
        name=device.name, role=_role(device.role).name, manufacturer=device.hardware_model.vendor,
        device_type=device.hardware_model.model, status=DEVICE_STATUS.get(device.status, "planned"),
        site=device.rack.site.name if racked else (default_site.name if default_site else ""),
        rack=device.rack.name if racked else "", position=device.position_u if placed else None,
        face=device.face if placed else "", serial=device.serial, asset_tag=device.asset_tag,
    )


PORT_FIELDS = ("device__name", "name", "parent__name", "kind", "speed_gbps", "status", "network", "plane",
               "guid_mac", "optic__form_factor", "parent__optic__form_factor")


def interfaces(project: Project, *, lanes: bool | None = None, with_mac_only: bool = False) -> Iterator[NbInterface]:
    """Every port that is a NetBox interface: the physical ports first, then the breakout lanes (a lane
    names its physical port as its parent, which must exist before it); only the lanes with `lanes=True`,
    only the physical ports with False. One query for each, streamed. With `with_mac_only`, only the ports
    whose learned address is a MAC (stored with colons; a GUID has none)."""
    ports = Port.objects.filter(device__project=project, kind__in=INTERFACE_KINDS).order_by("device__name", "id")
    if with_mac_only:
        ports = ports.filter(guid_mac__contains=":")
    for physical in (True, False):
        if lanes is not None and lanes == physical:
            continue
        rows = ports.filter(parent__isnull=physical).values_list(*PORT_FIELDS)
        for row in rows.iterator(chunk_size=CHUNK):
            yield _interface(*row)


def _interface(device, name, parent, kind, speed, status, network, plane, guid_mac, optic_ff, parent_optic_ff):
    return NbInterface(
        device=device, name=name, parent=parent or "",
        type=interface_type(kind, speed, optic_ff or parent_optic_ff or ""),
        speed=speed * 1_000_000, enabled=status != PortStatus.DISABLED, mgmt_only=kind == PortKind.BMC,
        wwn=wwn_of(guid_mac), mac_address=mac_of(guid_mac), description=_network_text(network, plane),
    )


CABLE_STATUS_WORDS = {value: str(label).lower() for value, label in CableStatus.choices}
FORM_FACTOR_LABELS = dict(FormFactor.choices)

END_FIELDS = ("cable_id", "cable__label", "cable__cable_type", "cable__status", "cable__length_m",
              "cable__network", "cable__plane", "cable__part_number", "side", "port__device__name", "port__name",
              "port__kind")


def cables(project: Project) -> Iterator[NbCable]:
    """Every cable between interfaces with its terminations (A, then B in leg order), by label. One query over
    the cable ends, streamed and grouped by cable."""
    ends = (
        CableEnd.objects.filter(cable__project=project)
        .order_by("cable__label", "cable_id", "side", "position")
        .values_list(*END_FIELDS)
        .iterator(chunk_size=CHUNK)
    )
    for _cable_id, rows in groupby(ends, key=lambda row: row[0]):
        rows = list(rows)
        if any(row[11] not in INTERFACE_KINDS for row in rows):
            continue  # a power or console cable: its ends are not interfaces in NetBox
        _, label, cable_type, status, length, network, plane, part_number = rows[0][:8]
        sides = {"A": [], "B": []}
        for row in rows:
            sides[row[8]].append((row[9], row[10]))
        status_label = CABLE_STATUS_WORDS.get(status, status)
        kind = "fiber with transceivers" if cable_type == CableType.FIBER else ""
        yield NbCable(
            label=label, a=tuple(sides["A"]), b=tuple(sides["B"]), type=CABLE_TYPE.get(cable_type, ""),
            status=CABLE_STATUS.get(status, "planned"), length=length, length_unit="m",
            description=_describe(_network_text(network, plane), kind, status_label,
                                  f"part {part_number}" if part_number else ""),
        )


OPTIC_FIELDS = ("port__device__name", "port__name", "vendor", "part_number", "serial", "form_factor", "speed_gbps")


def inventory_items(project: Project) -> Iterator[NbInventoryItem]:
    """Every seated optic, as an inventory item of its device bound to the interface it sits in. Optics on
    the shelf belong to no device, so NetBox has nowhere to put them."""
    optics = (
        Optic.objects.filter(project=project, port__isnull=False)
        .order_by("port__device__name", "port__name", "serial")
        .values_list(*OPTIC_FIELDS)
    )
    for device, port, vendor, part_number, serial, form_factor, speed in optics.iterator(chunk_size=CHUNK):
        shape = FORM_FACTOR_LABELS.get(form_factor, form_factor)
        yield NbInventoryItem(device=device, name=f"Optic {port}", manufacturer=vendor, part_id=part_number,
                              serial=serial, component_name=port, description=f"{shape} {speed}G transceiver")


# --- The CSV files --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CsvFile:
    """One file of the bundle: NetBox's import page it goes to, its columns (NetBox's field names) and how
    one record becomes a row."""

    filename: str
    netbox_page: str  # where NetBox's UI imports it
    headers: tuple[str, ...]
    records: Callable[[AsBuilt], Iterable]
    row: Callable[[object], tuple]
    note: str = ""


def _bool(value: bool) -> str:
    return "true" if value else "false"


def _ends(ends: tuple[tuple[str, str], ...]) -> tuple[str, str]:
    """The device and name columns of one cable side. One termination: its device and name. Several (a
    breakout leg per termination): the names comma-separated, and the device once when every leg is on the
    same device, else one device per name (NetBox 4.7's multi-termination import)."""
    devices = [device for device, _ in ends]
    names = ",".join(name for _, name in ends)
    device = devices[0] if len(set(devices)) == 1 else ",".join(devices)
    return device, names


def _cable_row(cable: NbCable) -> tuple:
    a_device, a_names = _ends(cable.a)
    b_device, b_names = _ends(cable.b)
    return (a_device, "dcim.interface", a_names, b_device, "dcim.interface", b_names, cable.type, cable.status,
            cable.label, cable.length, cable.length_unit, cable.description)


CABLE_HEADERS = ("side_a_device", "side_a_type", "side_a_name", "side_b_device", "side_b_type", "side_b_name",
                 "type", "status", "label", "length", "length_unit", "description")

CSV_FILES: tuple[CsvFile, ...] = (
    CsvFile("01-sites.csv", "Organization > Sites > Import", ("name", "slug", "status", "physical_address"),
            lambda built: built.sites, lambda s: (s.name, s.slug, s.status, s.physical_address)),
    CsvFile("02-racks.csv", "Racks > Racks > Import",
            ("site", "name", "status", "width", "u_height", "description"),
            lambda built: built.racks, lambda r: (r.site, r.name, r.status, r.width, r.u_height, r.description)),
    CsvFile("03-manufacturers.csv", "Devices > Manufacturers > Import", ("name", "slug"),
            lambda built: built.manufacturers, lambda m: (m.name, m.slug)),
    CsvFile("04-device_types.csv", "Devices > Device Types > Import",
            ("manufacturer", "model", "slug", "part_number", "u_height", "is_full_depth"),
            lambda built: built.device_types,
            lambda t: (t.manufacturer, t.model, t.slug, t.part_number, t.u_height, _bool(t.is_full_depth))),
    CsvFile("05-device_roles.csv", "Devices > Device Roles > Import", ("name", "slug", "color"),
            lambda built: built.roles, lambda r: (r.name, r.slug, r.color)),
    CsvFile("06-devices.csv", "Devices > Devices > Import",
            ("name", "role", "manufacturer", "device_type", "status", "site", "rack", "position", "face", "serial",
             "asset_tag"),
            lambda built: built.devices,
            lambda d: (d.name, d.role, d.manufacturer, d.device_type, d.status, d.site, d.rack, d.position, d.face,
                       d.serial, d.asset_tag)),
    CsvFile("07-interfaces.csv", "Devices > Interfaces > Import",
            ("device", "name", "parent", "type", "speed", "enabled", "mgmt_only", "wwn", "description"),
            lambda built: interfaces(built.project),
            lambda i: (i.device, i.name, i.parent, i.type, i.speed, _bool(i.enabled), _bool(i.mgmt_only), i.wwn,
                       i.description),
            note="Physical ports first, then breakout lanes (each names its physical port as parent)."),
    CsvFile("08-mac_addresses.csv", "Devices > MAC Addresses > Import (NetBox 4.2 and later)",
            ("device", "interface", "mac_address"),
            lambda built: (i for i in interfaces(built.project, with_mac_only=True) if i.mac_address),
            lambda i: (i.device, i.name, i.mac_address),
            note="The MACs the fabric reported. NetBox before 4.2 keeps a MAC on the interface instead: skip "
                 "this file there."),
    CsvFile("09-cables.csv", "Connections > Cables > Import", CABLE_HEADERS,
            lambda built: (c for c in cables(built.project) if not c.is_breakout), _cable_row),
    CsvFile("10-cables_breakout.csv", "Connections > Cables > Import (NetBox 4.7 and later)", CABLE_HEADERS,
            lambda built: (c for c in cables(built.project) if c.is_breakout), _cable_row,
            note="Breakout cables: one cable with several terminations on a side, their names comma-separated. "
                 "NetBox's CSV import takes that from 4.7 on; on an older NetBox, use Bringup's push (the REST "
                 "API has taken several terminations per side since 3.3) or connect them by hand."),
    CsvFile("11-inventory_items.csv", "Devices > Inventory Items > Import",
            ("device", "name", "status", "manufacturer", "part_id", "serial", "component_type", "component_name",
             "description"),
            lambda built: inventory_items(built.project),
            lambda o: (o.device, o.name, o.status, o.manufacturer, o.part_id, o.serial, o.component_type,
                       o.component_name, o.description)),
)


def _cell(value) -> object:
    if value is None:
        return ""
    return csv_safe(value)


def write_csv(target: IO[str], spec: CsvFile, built: AsBuilt) -> int:
    """One file into a text stream; how many rows it got."""
    writer = csv.writer(target, lineterminator="\n")
    writer.writerow(spec.headers)
    count = 0
    for record in spec.records(built):
        writer.writerow([_cell(value) for value in spec.row(record)])
        count += 1
    return count


def readme(project: Project, counts: dict[str, int]) -> str:
    """README.txt of the bundle: what it is, and the files in the order NetBox must import them."""
    lines = [
        f"As-built of {project.code} ({project.name}) for NetBox's bulk import",
        "",
        "Import the files in this order, each on the NetBox page named, as CSV (the first row is the header).",
        "A row names the objects it refers to by name, so each file needs the ones before it.",
        "",
    ]
    for spec in CSV_FILES:
        lines.append(f"{spec.filename}  ({counts.get(spec.filename, 0)} rows)  -> {spec.netbox_page}")
        if spec.note:
            lines.append(f"    {spec.note}")
    lines += [
        "",
        "Notes",
        "- Text that a spreadsheet would read as a formula (starting with =, +, -, @) is written with a leading",
        "  apostrophe, so opening a file in a spreadsheet runs nothing; NetBox keeps the apostrophe.",
        "- Interface speeds are in kb/s (NetBox's unit); InfiniBand port GUIDs are in the wwn column.",
        "- Device types carry no interface templates: the interfaces file holds every port of every device as",
        "  built, breakout lanes included (templates would make NetBox create them a second time).",
        "- Devices not in a rack are placed in the first site; a zero-U device keeps its rack without a position.",
        "",
    ]
    return "\n".join(lines)


ZIP_DATE = (2020, 1, 1, 0, 0, 0)  # fixed, so the same as-built gives the same bytes


def write_zip(target: IO[bytes], project: Project) -> dict[str, int]:
    """The bundle: every CSV file and README.txt, into a binary stream. Rows per file."""
    built = as_built(project)
    counts: dict[str, int] = {}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        for spec in CSV_FILES:
            info = zipfile.ZipInfo(f"{project.code}-netbox/{spec.filename}", date_time=ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            with bundle.open(info, "w") as raw, io.TextIOWrapper(raw, encoding="utf-8", newline="") as text:
                counts[spec.filename] = write_csv(text, spec, built)
        info = zipfile.ZipInfo(f"{project.code}-netbox/README.txt", date_time=ZIP_DATE)
        bundle.writestr(info, readme(project, counts), compress_type=zipfile.ZIP_DEFLATED)
    return counts


def write_directory(directory, project: Project) -> dict[str, int]:
    """Every CSV file and README.txt into `directory` (a pathlib.Path that exists). Rows per file."""
    built = as_built(project)
    counts: dict[str, int] = {}
    for spec in CSV_FILES:
        with open(directory / spec.filename, "w", encoding="utf-8", newline="") as text:
            counts[spec.filename] = write_csv(text, spec, built)
    (directory / "README.txt").write_text(readme(project, counts), encoding="utf-8")
    return counts


def zip_filename(project: Project) -> str:
    return f"{project.code}-netbox-import.zip"
