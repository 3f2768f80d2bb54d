"""Redfish resources as a Redfish client receives them (a BMC's JSON, or a DMTF mockup's index.json files):
the node's identity and health as the BMC sees it.

Pure functions on parsed JSON: `read_resource(document)` reads one resource, `read_resources(documents)`
many (a crawl of the tree, a mockup directory loaded by the caller), skipping types this module does not
read. `parse(text)` takes JSON text (one resource, a list of resources, or an object mapping @odata.id to
resources), bounded in size and depth, and refuses a document holding no resource it reads.

Read (by @odata.type):
- ServiceRoot: RedfishVersion, UUID, Product, Vendor (Dell's Oem ServiceTag).
- ComputerSystem: serial, model, manufacturer, SKU, power state, Status (State/Health/HealthRollup),
  BIOS version, host name, processor/memory summary.
- Chassis: the same identity fields, ChassisType, Status.
- Manager: ManagerType, FirmwareVersion, Status. SoftwareInventory: Version (BMC/BIOS firmware).
- EthernetInterface: MACAddress, PermanentMACAddress, LinkStatus, SpeedMbps, Status.
- Thermal (legacy): Temperatures (ReadingCelsius, Upper/LowerThreshold NonCritical/Critical/Fatal), Fans
  (Reading + ReadingUnits, or the older ReadingRPM/FanName), Redundancy.
- Power (legacy): PowerSupplies, Voltages, PowerControl (PowerConsumedWatts), Redundancy.
- ThermalSubsystem/PowerSubsystem (newer): their own Status and redundancy groups; Fan and PowerSupply
  resources; Sensor resources (Reading, ReadingUnits, Thresholds UpperCaution/Critical/Fatal ...).
- Processor, Memory, Drive, Battery, SimpleStorage's devices: name and Status, so a component a BMC marks
  Warning/Critical is seen.

Every sensor-like thing is a RedfishComponent with `kind` ("PowerSupply", "Fan", "Temperature", "Voltage",
"PowerControl", "Sensor", "Redundancy", ...), its Status and, where given, reading, units and thresholds
(keys upper_caution/upper_critical/upper_fatal and lower_*; the legacy NonCritical is "caution"). Values a
BMC sends with the wrong type are None, not errors: BMCs differ, the structure is what is checked.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .base import ParsedResult, ParseError
from .node_common import LineIndex, load_json

TOOL = "redfish"

MAX_JSON_CHARS = 16 * 2**20
MAX_ITEMS = 10_000  # components read from one document

_TYPE = re.compile(r"^#?(?P<type>[A-Za-z]+)(?:\.v[0-9_]+)?\.[A-Za-z]+$")
_LEGACY_THRESHOLDS = {
    "UpperThresholdNonCritical": "upper_caution",
    "UpperThresholdCritical": "upper_critical",
    "UpperThresholdFatal": "upper_fatal",
    "LowerThresholdNonCritical": "lower_caution",
    "LowerThresholdCritical": "lower_critical",
    "LowerThresholdFatal": "lower_fatal",
}
_SENSOR_THRESHOLDS = {
    "UpperCaution": "upper_caution",
    "UpperCritical": "upper_critical",
    "UpperFatal": "upper_fatal",
    "LowerCaution": "lower_caution",
    "LowerCritical": "lower_critical",
    "LowerFatal": "lower_fatal",
}


@dataclass(frozen=True, kw_only=True)
class RedfishServiceRoot(ParsedResult):
    tool: str = TOOL
    kind: str = "ServiceRoot"
    odata_id: str | None = None
    redfish_version: str | None = None
    uuid: str | None = None
    product: str | None = None
    vendor: str | None = None
    service_tag: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class RedfishSystem(ParsedResult):
    tool: str = TOOL
    kind: str = "ComputerSystem"
    odata_id: str | None = None
    id: str | None = None
    name: str | None = None
    manufacturer: str | None = None
    model: str | None = None
    serial_number: str | None = None
    sku: str | None = None
    part_number: str | None = None
    uuid: str | None = None
    host_name: str | None = None
    power_state: str | None = None
    state: str | None = None
    health: str | None = None
    health_rollup: str | None = None
    bios_version: str | None = None
    processor_count: int | None = None
    processor_model: str | None = None
    memory_gib: float | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class RedfishChassis(ParsedResult):
    tool: str = TOOL
    kind: str = "Chassis"
    odata_id: str | None = None
    id: str | None = None
    name: str | None = None
    chassis_type: str | None = None
    manufacturer: str | None = None
    model: str | None = None
    serial_number: str | None = None
    sku: str | None = None
    part_number: str | None = None
    asset_tag: str | None = None
    power_state: str | None = None
    state: str | None = None
    health: str | None = None
    health_rollup: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class RedfishManager(ParsedResult):
    tool: str = TOOL
    kind: str = "Manager"
    odata_id: str | None = None
    id: str | None = None
    name: str | None = None
    manager_type: str | None = None
    model: str | None = None
    firmware_version: str | None = None
    uuid: str | None = None
    state: str | None = None
    health: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class RedfishFirmware(ParsedResult):
    tool: str = TOOL
    kind: str = "SoftwareInventory"
    odata_id: str | None = None
    id: str | None = None
    name: str | None = None
    version: str | None = None
    updateable: bool | None = None
    state: str | None = None
    health: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class RedfishNic(ParsedResult):
    tool: str = TOOL
    kind: str = "EthernetInterface"
    odata_id: str | None = None
    id: str | None = None
    name: str | None = None
    mac_address: str | None = None
    permanent_mac_address: str | None = None
    link_status: str | None = None
    speed_mbps: float | None = None
    interface_enabled: bool | None = None
    state: str | None = None
    health: str | None = None
    line_no: int = 1


@dataclass(frozen=True, kw_only=True)
class RedfishComponent(ParsedResult):
    tool: str = TOOL
    kind: str  # "PowerSupply", "Fan", "Temperature", "Voltage", "PowerControl", "Sensor", "Redundancy", ...
    source: str  # the resource type it was read from: "Thermal", "Power", "Fan", "Sensor", "SimpleStorage" ...
    odata_id: str | None = None
    parent: str | None = None  # @odata.id of the resource holding it (legacy Thermal/Power arrays)
    name: str | None = None
    member_id: str | None = None
    service_label: str | None = None
    state: str | None = None
    health: str | None = None
    health_rollup: str | None = None
    reading: float | None = None
    units: str | None = None  # "Cel", "RPM", "%", "V", "W" as the BMC says (legacy fields: the field's unit)
    thresholds: dict[str, float] = field(default_factory=dict)
    physical_context: str | None = None
    manufacturer: str | None = None
    model: str | None = None
    serial_number: str | None = None
    part_number: str | None = None
    firmware_version: str | None = None
    capacity_watts: float | None = None
    line_no: int = 1

    @property
    def label(self) -> str:
        """How a reason names it: its name, else its service label, member id or @odata.id."""
        return self.name or self.service_label or self.member_id or self.odata_id or self.kind


RedfishResult = (
    RedfishServiceRoot
    | RedfishSystem
    | RedfishChassis
    | RedfishManager
    | RedfishFirmware
    | RedfishNic
    | RedfishComponent
)


def resource_type(document: Mapping[str, Any]) -> str | None:
    """"#Thermal.v1_7_1.Thermal" -> "Thermal"; None when the document names no type."""
    value = document.get("@odata.type")
    if not isinstance(value, str):
        return None
    match = _TYPE.match(value.strip())
    return match["type"] if match else None


def parse(text: str) -> list[RedfishResult]:
    data = load_json(text, what="Redfish", max_chars=MAX_JSON_CHARS)
    if isinstance(data, list):
        documents = data
    elif isinstance(data, dict) and resource_type(data) is None and data and all(
        isinstance(value, dict) for value in data.values()
    ):
        documents = list(data.values())  # {"/redfish/v1/...": {...}, ...}
    else:
        documents = [data]
    if not all(isinstance(document, dict) for document in documents):
        raise ParseError(1, "a Redfish resource is not a JSON object", "Redfish resources (JSON objects)")
    results = read_resources(documents, lines=LineIndex(text))
    if not results:
        types = sorted({resource_type(document) or "no @odata.type" for document in documents})
        raise ParseError(
            1,
            f"no Redfish resource this parser reads ({', '.join(types[:8])})",
            "ServiceRoot, ComputerSystem, Chassis, Thermal, Power, ThermalSubsystem, PowerSubsystem, Fan, "
            "PowerSupply, Sensor, EthernetInterface, Manager, SoftwareInventory ... resources",
        )
    return results


def read_resources(
    documents: Iterable[Mapping[str, Any]], *, lines: LineIndex | None = None
) -> list[RedfishResult]:
    """Every resource this module reads, in order; other types (collections, accounts, ...) are skipped."""
    results: list[RedfishResult] = []
    for document in documents:
        results.extend(read_resource(document, lines=lines))
        if len(results) > MAX_ITEMS:
            raise ParseError(1, f"more than {MAX_ITEMS:,} Redfish items", f"at most {MAX_ITEMS:,} per document")
    return results


def read_resource(document: Mapping[str, Any], *, lines: LineIndex | None = None) -> list[RedfishResult]:
    """One resource's results: one for an identity resource, one per sensor for Thermal/Power..."""
    if not isinstance(document, Mapping):
        return []
    kind = resource_type(document)
    reader = _READERS.get(kind or "")
    if reader is None:
        return []
    return reader(_Doc(document, lines))


class _Doc:
    """A resource and the index of the text it came from (for line numbers, when there is one)."""

    def __init__(self, data: Mapping[str, Any], lines: LineIndex | None):
        self.data = data
        self.lines = lines

    def line(self, *needles: Any) -> int:
        return self.lines.line(*needles) if self.lines else 1


def _str(value: Any) -> str | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int | float):
        return str(value)
    return None


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _bool(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def _obj(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _status(data: Mapping[str, Any]) -> dict[str, str | None]:
    status = _obj(data.get("Status"))
    return {"state": _str(status.get("State")), "health": _str(status.get("Health"))}


def _identity(data: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "odata_id": _str(data.get("@odata.id")),
        "id": _str(data.get("Id")),
        "name": _str(data.get("Name")),
    }


def _service_root(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    dell = _obj(_obj(data.get("Oem")).get("Dell"))
    return [
        RedfishServiceRoot(
            odata_id=_str(data.get("@odata.id")),
            redfish_version=_str(data.get("RedfishVersion")),
            uuid=_str(data.get("UUID")),
            product=_str(data.get("Product")),
            vendor=_str(data.get("Vendor")),
            service_tag=_str(dell.get("ServiceTag")),
            line_no=doc.line("RedfishVersion"),
        )
    ]


def _system(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    status = _obj(data.get("Status"))
    processors = _obj(data.get("ProcessorSummary"))
    memory = _obj(data.get("MemorySummary"))
    count = _num(processors.get("Count"))
    return [
        RedfishSystem(
            **_identity(data),
            manufacturer=_str(data.get("Manufacturer")),
            model=_str(data.get("Model")),
            serial_number=_str(data.get("SerialNumber")),
            sku=_str(data.get("SKU")),
            part_number=_str(data.get("PartNumber")),
            uuid=_str(data.get("UUID")),
            host_name=_str(data.get("HostName")),
            power_state=_str(data.get("PowerState")),
            state=_str(status.get("State")),
            health=_str(status.get("Health")),
            health_rollup=_str(status.get("HealthRollup")),
            bios_version=_str(data.get("BiosVersion")),
            processor_count=int(count) if count is not None else None,
            processor_model=_str(processors.get("Model")),
            memory_gib=_num(memory.get("TotalSystemMemoryGiB")),
            line_no=doc.line("SerialNumber", "@odata.type"),
        )
    ]


def _chassis(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    status = _obj(data.get("Status"))
    return [
        RedfishChassis(
            **_identity(data),
            chassis_type=_str(data.get("ChassisType")),
            manufacturer=_str(data.get("Manufacturer")),
            model=_str(data.get("Model")),
            serial_number=_str(data.get("SerialNumber")),
            sku=_str(data.get("SKU")),
            part_number=_str(data.get("PartNumber")),
            asset_tag=_str(data.get("AssetTag")),
            power_state=_str(data.get("PowerState")),
            state=_str(status.get("State")),
            health=_str(status.get("Health")),
            health_rollup=_str(status.get("HealthRollup")),
            line_no=doc.line("SerialNumber", "@odata.type"),
        )
    ]


def _manager(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    return [
        RedfishManager(
            **_identity(data),
            manager_type=_str(data.get("ManagerType")),
            model=_str(data.get("Model")),
            firmware_version=_str(data.get("FirmwareVersion")),
            uuid=_str(data.get("UUID")),
            **_status(data),
            line_no=doc.line("FirmwareVersion", "@odata.type"),
        )
    ]


def _software(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    return [
        RedfishFirmware(
            **_identity(data),
            version=_str(data.get("Version")),
            updateable=_bool(data.get("Updateable")),
            **_status(data),
            line_no=doc.line("Version", "@odata.type"),
        )
    ]


def _nic(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    return [
        RedfishNic(
            **_identity(data),
            mac_address=_str(data.get("MACAddress")),
            permanent_mac_address=_str(data.get("PermanentMACAddress")),
            link_status=_str(data.get("LinkStatus")),
            speed_mbps=_num(data.get("SpeedMbps")),
            interface_enabled=_bool(data.get("InterfaceEnabled")),
            **_status(data),
            line_no=doc.line("MACAddress", "@odata.type"),
        )
    ]


def _component(doc: _Doc, item: Mapping[str, Any], *, kind: str, source: str, parent: str | None, **extra):
    status = _obj(item.get("Status"))
    location = _obj(_obj(item.get("Location")).get("PartLocation"))
    name = _str(item.get("Name")) or _str(item.get("FanName"))
    return RedfishComponent(
        kind=kind,
        source=source,
        odata_id=_str(item.get("@odata.id")),
        parent=parent,
        name=name,
        member_id=_str(item.get("MemberId")),
        service_label=_str(location.get("ServiceLabel")),
        state=_str(status.get("State")),
        health=_str(status.get("Health")),
        health_rollup=_str(status.get("HealthRollup")),
        physical_context=_str(item.get("PhysicalContext")),
        manufacturer=_str(item.get("Manufacturer")),
        model=_str(item.get("Model")),
        serial_number=_str(item.get("SerialNumber")),
        part_number=_str(item.get("PartNumber")),
        firmware_version=_str(item.get("FirmwareVersion")),
        line_no=doc.line(_str(item.get("@odata.id")), name),
        **extra,
    )


def _legacy_thresholds(item: Mapping[str, Any]) -> dict[str, float]:
    return {key: value for name, key in _LEGACY_THRESHOLDS.items() if (value := _num(item.get(name))) is not None}


def _items(data: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    value = data.get(key)
    return [item for item in value if isinstance(item, Mapping)][:MAX_ITEMS] if isinstance(value, list) else []


def _redundancy(doc: _Doc, data: Mapping[str, Any], key: str, source: str, parent: str | None) -> list:
    results = []
    for index, item in enumerate(_items(data, key)):
        component = _component(doc, item, kind="Redundancy", source=source, parent=parent)
        if component.name is None and component.member_id is None:
            component = _replace_name(component, f"{key}[{index}] {_str(item.get('RedundancyType')) or ''}".strip())
        results.append(component)
    return results


def _replace_name(component: RedfishComponent, name: str) -> RedfishComponent:
    return dataclasses.replace(component, name=name)


def _thermal(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    parent = _str(data.get("@odata.id"))
    results: list[RedfishResult] = []
    for item in _items(data, "Temperatures"):
        results.append(
            _component(doc, item, kind="Temperature", source="Thermal", parent=parent,
                       reading=_num(item.get("ReadingCelsius")), units="Cel",
                       thresholds=_legacy_thresholds(item))  # fmt: skip
        )
    for item in _items(data, "Fans"):
        reading = _num(item.get("Reading"))
        units = _str(item.get("ReadingUnits"))
        if reading is None and _num(item.get("ReadingRPM")) is not None:
            reading, units = _num(item.get("ReadingRPM")), "RPM"
        results.append(
            _component(doc, item, kind="Fan", source="Thermal", parent=parent, reading=reading, units=units,
                       thresholds=_legacy_thresholds(item))  # fmt: skip
        )
    results += _redundancy(doc, data, "Redundancy", "Thermal", parent)
    return results


def _power(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    parent = _str(data.get("@odata.id"))
    results: list[RedfishResult] = []
    for item in _items(data, "PowerControl"):
        results.append(
            _component(doc, item, kind="PowerControl", source="Power", parent=parent,
                       reading=_num(item.get("PowerConsumedWatts")), units="W",
                       capacity_watts=_num(item.get("PowerCapacityWatts")))  # fmt: skip
        )
    for item in _items(data, "Voltages"):
        results.append(
            _component(doc, item, kind="Voltage", source="Power", parent=parent,
                       reading=_num(item.get("ReadingVolts")), units="V", thresholds=_legacy_thresholds(item))
        )  # fmt: skip
    for item in _items(data, "PowerSupplies"):
        results.append(
            _component(doc, item, kind="PowerSupply", source="Power", parent=parent,
                       reading=_num(item.get("LastPowerOutputWatts")), units="W",
                       capacity_watts=_num(item.get("PowerCapacityWatts")))  # fmt: skip
        )
    results += _redundancy(doc, data, "Redundancy", "Power", parent)
    return results


def _subsystem(kind: str, redundancy_key: str):
    def read(doc: _Doc) -> list[RedfishResult]:
        data = doc.data
        parent = _str(data.get("@odata.id"))
        own = _component(doc, data, kind=kind, source=kind, parent=None,
                         capacity_watts=_num(data.get("CapacityWatts")))  # fmt: skip
        return [own, *_redundancy(doc, data, redundancy_key, kind, parent)]

    return read


def _fan(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    speed = _obj(data.get("SpeedPercent"))
    reading, units = _num(speed.get("Reading")), "%"
    if reading is None and _num(speed.get("SpeedRPM")) is not None:
        reading, units = _num(speed.get("SpeedRPM")), "RPM"
    return [_component(doc, data, kind="Fan", source="Fan", parent=None, reading=reading,
                       units=units if reading is not None else None)]  # fmt: skip


def _power_supply(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    return [_component(doc, data, kind="PowerSupply", source="PowerSupply", parent=None,
                       capacity_watts=_num(data.get("PowerCapacityWatts")))]  # fmt: skip


def _sensor(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    thresholds = {}
    for name, key in _SENSOR_THRESHOLDS.items():
        value = _num(_obj(_obj(data.get("Thresholds")).get(name)).get("Reading"))
        if value is not None:
            thresholds[key] = value
    return [
        _component(doc, data, kind="Sensor", source="Sensor", parent=None, reading=_num(data.get("Reading")),
                   units=_str(data.get("ReadingUnits")), thresholds=thresholds)  # fmt: skip
    ]


def _plain(kind: str):
    def read(doc: _Doc) -> list[RedfishResult]:
        return [_component(doc, doc.data, kind=kind, source=kind, parent=None)]

    return read


def _simple_storage(doc: _Doc) -> list[RedfishResult]:
    data = doc.data
    parent = _str(data.get("@odata.id"))
    own = _component(doc, data, kind="StorageController", source="SimpleStorage", parent=None)
    devices = [
        _component(doc, item, kind="StorageDevice", source="SimpleStorage", parent=parent)
        for item in _items(data, "Devices")
    ]
    return [own, *devices]


_READERS = {
    "ServiceRoot": _service_root,
    "ComputerSystem": _system,
    "Chassis": _chassis,
    "Manager": _manager,
    "SoftwareInventory": _software,
    "EthernetInterface": _nic,
    "Thermal": _thermal,
    "Power": _power,
    "ThermalSubsystem": _subsystem("ThermalSubsystem", "FanRedundancy"),
    "PowerSubsystem": _subsystem("PowerSubsystem", "PowerSupplyRedundancy"),
    "Fan": _fan,
    "PowerSupply": _power_supply,
    "Sensor": _sensor,
    "Processor": _plain("Processor"),
    "Memory": _plain("Memory"),
    "Drive": _plain("Drive"),
    "Battery": _plain("Battery"),
    "SimpleStorage": _simple_storage,
}
READ_TYPES = tuple(_READERS)
