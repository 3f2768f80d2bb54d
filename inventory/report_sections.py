"""The inventory's section of the acceptance report (projects.reports), registered in
InventoryConfig.ready(): what was delivered and where it stands.

- Facts: racks, devices per role, NICs, optics per status.
- Devices not yet confirmed in their rack by a scan, when there are any (Device.racked_at, set by
  inventory.services.device_rack), and optics found faulty or sent back (RMA), when there are any.
- Racks (site, row and position, height, power budget against the devices' nameplate load, devices),
  devices (role, manufacturer, model, rack and U, serial, asset tag, status, confirmed in its rack),
  NICs (slot, model, part number, firmware, serial, GUID/MAC, physical ports), optics (the port it sits
  in, serial, part number, vendor, form factor, speed, status, the latest DOM temperature and when it was
  read).

Like a gate, the provider is handed a project and reads it whole: delivery checks who may read the report.
Every table streams: its rows come from one query read in chunks while the snapshot is written, so the
number of queries and the memory held do not grow with the size of the cluster.
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count, F, Q, QuerySet

from projects.reports import Column, Facts, Section, Table, register_report_section

from .choices import DeviceRole, DeviceStatus, FormFactor, OpticStatus, RackStatus
from .models import Device, Nic, Optic, Rack
from .selectors import with_power

KEY, TITLE, ORDER = "inventory", "Inventory", 30
CHUNK = 2000  # rows fetched per round trip while a table streams
ATTENTION_OPTICS = (OpticStatus.FAULTY, OpticStatus.RMA)

ROLE_LABELS = dict(DeviceRole.choices)
DEVICE_STATUS_LABELS = dict(DeviceStatus.choices)
RACK_STATUS_LABELS = dict(RackStatus.choices)
OPTIC_STATUS_LABELS = dict(OpticStatus.choices)
FORM_FACTOR_LABELS = dict(FormFactor.choices)
OPTIC_FACTS = {OpticStatus.IN_STOCK: "Optics in stock", OpticStatus.INSTALLED: "Optics installed",
               OpticStatus.FAULTY: "Optics faulty", OpticStatus.RMA: "Optics in RMA"}

RACK_COLUMNS = [
    Column("name", "Rack", width=8), Column("site", "Site", width=12), Column("row", "Row", width=5),
    Column("position", "Position", kind="int", width=6), Column("height", "Height", unit="U", kind="int", width=6),
    Column("status", "Status", width=8), Column("budget", "Power budget", unit="W", kind="int", width=9),
    Column("load", "Nameplate load", unit="W", kind="int", width=9),
    Column("devices", "Devices", kind="int", width=6),
]
DEVICE_COLUMNS = [
    Column("name", "Device", width=14), Column("role", "Role", width=10),
    Column("manufacturer", "Manufacturer", width=10), Column("model", "Model", width=14),
    Column("rack", "Rack", width=7), Column("position", "U", kind="int", width=4), Column("serial", "Serial", width=12),
    Column("asset_tag", "Asset tag", width=10), Column("status", "Status", width=8),
    Column("racked_at", "Confirmed in rack", kind="datetime", width=14),
]
UNCONFIRMED_COLUMNS = [
    Column("name", "Device", width=14), Column("role", "Role", width=10), Column("rack", "Rack", width=7),
    Column("position", "U", kind="int", width=4), Column("status", "Status", width=8),
]
NIC_COLUMNS = [
    Column("device", "Device", width=14), Column("slot", "Slot", width=6), Column("model", "Model", width=16),
    Column("part_number", "Part number", width=14), Column("firmware", "Firmware", width=10),
    Column("serial", "Serial", width=12), Column("guid_mac", "GUID / MAC", width=16),
    Column("ports", "Ports", kind="int", width=5),
]
OPTIC_COLUMNS = [
    Column("port", "Port", width=16), Column("serial", "Serial", width=12),
    Column("part_number", "Part number", width=14),
    Column("vendor", "Vendor", width=10), Column("form_factor", "Form factor", width=8),
    Column("speed", "Speed", unit="Gb/s", kind="int", width=6), Column("status", "Status", width=8),
    Column("temperature", "Temperature", unit="°C", kind="celsius", width=7),
    Column("dom_read_at", "DOM read", kind="datetime", width=14),
]


def inventory_section(project) -> Section | None:
    """The section, or None for a project with no rack, device or optic yet. Four counting queries, then one
    query per table as it streams."""
    racks = Rack.objects.filter(project=project)
    devices = Device.objects.filter(project=project)
    nics = Nic.objects.filter(device__project=project)
    optics = Optic.objects.filter(project=project)
    device_counts = _device_counts(devices)
    optic_counts = _optic_counts(optics)
    rack_count, nic_count = racks.count(), nics.count()
    if not (rack_count or device_counts["devices"] or optic_counts["optics"]):
        return None
    blocks: list = [_facts(rack_count, device_counts, nic_count, optic_counts)]
    unconfirmed = device_counts["devices"] - device_counts["confirmed"]
    if unconfirmed:
        blocks.append(Table(
            key="devices_unconfirmed", title="Devices not confirmed in their rack", columns=UNCONFIRMED_COLUMNS,
            rows=_unconfirmed_rows(devices), row_count=unconfirmed,
            note="Confirmed means a scan on the floor found the device in its rack and U.",
        ))
    faulty = sum(optic_counts[status] for status in ATTENTION_OPTICS)
    if faulty:
        blocks.append(Table(
            key="optics_faulty", title="Optics faulty or in RMA", columns=OPTIC_COLUMNS,
            rows=_optic_rows(optics.filter(status__in=ATTENTION_OPTICS)), row_count=faulty,
        ))
    blocks += [
        Table(key="racks", title="Racks", columns=RACK_COLUMNS, rows=_rack_rows(racks), row_count=rack_count,
              note="Nameplate load: the sum of the devices' nameplate maximum power."),
        Table(key="devices", title="Devices", columns=DEVICE_COLUMNS, rows=_device_rows(devices),
              row_count=device_counts["devices"]),
        Table(key="nics", title="NICs", columns=NIC_COLUMNS, rows=_nic_rows(nics), row_count=nic_count,
              summary_rows=20, note="Ports: the NIC's physical ports (breakout lanes not counted)."),
        Table(key="optics", title="Optics", columns=OPTIC_COLUMNS, rows=_optic_rows(optics),
              row_count=optic_counts["optics"], summary_rows=20,
              note="Installed optics in device and port order, then those not in a port. Temperature: the "
                   "latest DOM reading stored."),
    ]
    return Section(title=TITLE, blocks=blocks)


# --- Counts ------------------------------------------------------------------------------------


def _device_counts(devices: QuerySet[Device]) -> dict:
    """Devices, those confirmed in their rack, and per role: one aggregate query."""
    return devices.aggregate(
        devices=Count("pk"), confirmed=Count("pk", filter=Q(racked_at__isnull=False)),
        **{f"role_{role}": Count("pk", filter=Q(role=role)) for role in DeviceRole.values},
    )


def _optic_counts(optics: QuerySet[Optic]) -> dict:
    return optics.aggregate(optics=Count("pk"),
                            **{status: Count("pk", filter=Q(status=status)) for status in OpticStatus.values})


def _facts(racks: int, devices: dict, nics: int, optics: dict) -> Facts:
    roles = [(ROLE_LABELS[role], devices[f"role_{role}"]) for role in DeviceRole.values if devices[f"role_{role}"]]
    return Facts(title="Delivered", items=[
        ("Racks", racks),
        ("Devices", devices["devices"]),
        *roles,
        ("Devices confirmed in their rack", devices["confirmed"]),
        ("NICs", nics),
        ("Optics", optics["optics"]),
        *[(OPTIC_FACTS.get(status, f"Optics: {label}"), optics[status]) for status, label in OpticStatus.choices],
    ])


# --- Rows ----------------------------------------------------------------------------------------


def _rack_rows(racks: QuerySet[Rack]) -> Iterator[list]:
    rows = with_power(racks).order_by("row", "position", "name").values_list(
        "name", "site__name", "row", "position", "height_u", "status", "power_budget_w", "power_used_w",
        "device_count")
    for name, site, row, position, height, status, budget, load, count in rows.iterator(chunk_size=CHUNK):
        yield [name, site, row, position, height, RACK_STATUS_LABELS.get(status, status), budget, load, count]


def _device_rows(devices: QuerySet[Device]) -> Iterator[list]:
    rows = devices.order_by("name").values_list(
        "name", "role", "hardware_model__vendor", "hardware_model__model", "rack__name", "position_u", "serial",
        "asset_tag", "status", "racked_at")
    for name, role, vendor, model, rack, position, serial, tag, status, racked_at in rows.iterator(chunk_size=CHUNK):
        yield [name, ROLE_LABELS.get(role, role), vendor, model, rack or "", position, serial, tag,
               DEVICE_STATUS_LABELS.get(status, status), racked_at]


def _unconfirmed_rows(devices: QuerySet[Device]) -> Iterator[list]:
    rows = devices.filter(racked_at__isnull=True).order_by("name").values_list(
        "name", "role", "rack__name", "position_u", "status")
    for name, role, rack, position, status in rows.iterator(chunk_size=CHUNK):
        yield [name, ROLE_LABELS.get(role, role), rack or "", position, DEVICE_STATUS_LABELS.get(status, status)]


def _nic_rows(nics: QuerySet[Nic]) -> Iterator[list]:
    rows = (nics.annotate(physical_ports=Count("ports", filter=Q(ports__parent__isnull=True)))
            .order_by("device__name", "slot")
            .values_list("device__name", "slot", "model", "part_number", "firmware", "serial", "guid_mac",
                         "physical_ports"))
    for row in rows.iterator(chunk_size=CHUNK):
        yield list(row)


def _optic_rows(optics: QuerySet[Optic]) -> Iterator[list]:
    rows = optics.order_by(F("port__device__name").asc(nulls_last=True), F("port_id").asc(nulls_last=True),
                           "serial").values_list(
        "port__device__name", "port__name", "serial", "part_number", "vendor", "form_factor", "speed_gbps",
        "status", "dom_temperature_c", "dom_read_at")
    for device, port, serial, part, vendor, form, speed, status, temperature, read_at in rows.iterator(
            chunk_size=CHUNK):
        yield [f"{device}:{port}" if device else "", serial, part, vendor, FORM_FACTOR_LABELS.get(form, form), speed,
               OPTIC_STATUS_LABELS.get(status, status), temperature, read_at]


def register() -> None:
    register_report_section(KEY, inventory_section, order=ORDER, title=TITLE)
