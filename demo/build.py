"""The demo data of `manage.py seed_demo`: project DEMO-72, modelled on the reference cluster of
DOMAIN.md (72 B300 nodes, 12 Quantum-X800 XDR switches, a 400G storage network, 6 storage servers),
and LAB-8, a small second project whose customer must see nothing of DEMO-72.

Idempotent by construction: every row is looked up by its natural key (part number, project code,
rack name, device name, optic serial, username) and only missing rows are written, so a second run
saves nothing at all, not even a history row. Part numbers and serials are illustrative.

Racks, servers and PDUs are plain data built by pure functions and written through
inventory.services.devices_create_bulk (device_create's rows, for many devices at once). Every switch and
cable comes from the fabric planner: the spec examples/demo-72.yaml (reference fabric 1 plus storage,
in-band and out-of-band networks) is applied with cabling.services (plan_apply), which finds the racks and
servers made here where the spec puts them and adds the switches, their ports and lanes, and the cables.
The optic stock follows the plan's bill of materials (one transceiver per cage: a twin-port OSFP serves
two switch ports), taken in through inventory's bulk intake (inventory.services.optic_stock).

Every write goes through the service that owns it (the hardware models: the shipped catalogue, loaded by
inventory's catalogue service; projects, users and memberships: projects.services; devices and optics:
inventory.services; the fabric and cable statuses: cabling.services), so the demo
holds nothing the app itself could not have made. A cable is verified only by a scan of its ends: the
demo's technician walks the floor once (FLOOR_SCANS), racking the last servers to arrive and verifying a
few of gpu-001's cables through cabling.services.scan_record, like the floor page would, one scan refused
on the way (an end scanned at the wrong port), so the verified cables have their scans behind them. Only
what has no service is written here, validated with full_clean(): sites and racks.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from functools import cache
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from cabling.choices import CableStatus, FabricPlanSource, ScanAction, ScanSource, Side
from cabling.codes import cable_end_code
from cabling.models import Cable, CableEnd, ScanEvent
from cabling.planner import Plan
from cabling.services import cable_status_set, fabric_plan_apply_now, plan_of, scan_record
from core.choices import JobStatus
from delivery.models import ORIGINAL_FILE_KINDS, FileKind, ReportVersion
from delivery.reports.services import report_version_render, report_version_request
from delivery.stages.services import stages_create_from_template
from inventory.choices import (
    DeviceRole,
    DeviceStatus,
    Face,
    FormFactor,
    Network,
    OpticStatus,
    RackStatus,
)
from inventory.models import Device, HardwareModel, Optic, Port, Rack, Site
from inventory.services import device_update, devices_create_bulk, optic_save, optics_stock_bulk
from inventory.services.catalogue import catalogue_load_shipped
from projects.choices import ProjectStatus, Role
from projects.models import Membership, Project
from projects.services import membership_set, project_create, project_creator_grant, user_ensure

DEMO_CODE = "DEMO-72"
LAB_CODE = "LAB-8"
# The bilingual acceptance report prints these beside the English names.
DEMO_NAME_ZH = "72节点 B300 后训练集群"
DEMO_CUSTOMER_NAME_ZH = "示例安全人工智能实验室"
DEMO_PASSWORD = "bringup-demo"  # one fixed password for every demo login; printed by seed_demo

GPU_SERVERS = 72
SERVERS_PER_RACK = 4
STORAGE_SERVERS = 6
STORAGE_PER_RACK = 3
OVER_BUDGET_RACK = "B09"  # the one rack that breaks the 20% headroom rule, on purpose
DEMO_SPEC = Path(__file__).resolve().parents[1] / "examples" / "demo-72.yaml"
DEMO_REASON = "Demo data (seed_demo)"  # what the history of the rows the demo writes in bulk says


# --- the hardware catalogue -------------------------------------------------------------------

# The demo's hardware, by the part numbers of the catalogue Bringup ships (inventory/catalogue/data): the demo
# holds no hardware model of its own, so what it shows is what a new project gets from `load_catalogue`.
DEMO_MODELS = {
    "gpu": "B300-8GPU",  # HGX B300, eight ConnectX-8 in XDR with 4 x 200G plane lanes each
    "xdr": "Q3400-RA",  # Quantum-X800, 144 x 800G XDR
    "storage_switch": "SN5610",  # Spectrum-4, 64 x 800G split 2 x 400G
    "inband_switch": "SN4600C",  # Spectrum-2, 64 x 100G
    "mgmt_switch": "SN2201",  # 48 x 1G + 4 x 100G
    "oob_spine": "SN2700",  # 32 x 100G
    "storage": "STOR-2U24-NVME",
    "pdu": "PDU-3P63A-M",
    "lab_gpu": "H200-8GPU-LC4U",  # LAB-8's liquid-cooled 4U HGX H200
}


def catalogue_ensure() -> dict[str, HardwareModel]:
    """The demo's hardware models by key, from the shipped catalogue: loaded through the catalogue service
    when one is missing (loading it again changes nothing, so a second seed_demo writes no row)."""
    wanted = set(DEMO_MODELS.values())
    if set(HardwareModel.objects.filter(part_number__in=wanted).values_list("part_number", flat=True)) != wanted:
        catalogue_load_shipped()
    models = {model.part_number: model for model in HardwareModel.objects.filter(part_number__in=wanted)}
    return {key: models[part_number] for key, part_number in DEMO_MODELS.items()}


# --- plans: pure data describing what goes where ---------------------------------------------


@dataclass(frozen=True)
class RackPlan:
    name: str
    row: str
    position: int
    power_budget_w: int
    status: str = RackStatus.POWERED
    height_u: int = 48


@dataclass(frozen=True)
class DevicePlan:
    name: str
    model_key: str
    rack: str
    position_u: int
    role: str
    serial: str
    oob_address: str
    status: str = DeviceStatus.POWERED
    face: str = Face.FRONT


def _gpu_rack_names() -> list[str]:
    racks_per_row = GPU_SERVERS // SERVERS_PER_RACK // 2
    return [f"{row}{pos:02d}" for row in "AB" for pos in range(1, racks_per_row + 1)]


@cache
def demo_spec_text() -> str:
    return DEMO_SPEC.read_text(encoding="utf-8")


@cache
def demo_plan() -> Plan:
    """The planner's plan of examples/demo-72.yaml (pure: no database)."""
    return plan_of(spec_text=demo_spec_text())


# Power feeds: four B300s draw 58 kW, so a 75 kW feed leaves 22.7% headroom and the 66 kW one only 12%.
# The planner stacks eleven 6 kW XDR switches in C01 (66 kW): 84 kW leaves 21.4%.
RACK_BUDGET_W = {"A": 75_000, "B": 75_000, "C": 32_000, "S": 20_000}
RACK_BUDGET_OVERRIDES_W = {OVER_BUDGET_RACK: 66_000, "C01": 84_000}


def demo_rack_plans() -> list[RackPlan]:
    """The racks of the demo spec's room, where the spec has them: A01-A09 and B01-B09 for the GPU servers,
    C01-C03 for the network, S01-S02 for the storage servers."""
    return [
        RackPlan(r.name, r.row, r.position, RACK_BUDGET_OVERRIDES_W.get(r.name, RACK_BUDGET_W[r.row]))
        for r in demo_plan().racks
    ]


def _gpu_server_status(number: int) -> str:
    """Racking is nearly done: most nodes are powered, a few racked, the last four just received."""
    if number <= 60:
        return DeviceStatus.POWERED
    return DeviceStatus.RACKED if number <= 68 else DeviceStatus.RECEIVED


def gpu_server_plans() -> list[DevicePlan]:
    """gpu-001..gpu-072, four to a rack at U3, U13, U23, U33."""
    racks = _gpu_rack_names()
    plans = []
    for index in range(GPU_SERVERS):
        number = index + 1
        status = _gpu_server_status(number)
        plans.append(
            DevicePlan(
                name=f"gpu-{number:03d}", model_key="gpu", rack=racks[index // SERVERS_PER_RACK],
                position_u=3 + 10 * (index % SERVERS_PER_RACK), role=DeviceRole.GPU_NODE,
                serial=f"B300X{number:06d}", oob_address=f"10.72.1.{number}", status=status,
            )
        )
    return plans


def storage_server_plans() -> list[DevicePlan]:
    """storage-01..06, three to a rack in S01 and S02 at U10, U14, U18, as the demo spec places them."""
    return [
        DevicePlan(f"storage-{n:02d}", "storage", f"S{(n - 1) // STORAGE_PER_RACK + 1:02d}",
                   10 + 4 * ((n - 1) % STORAGE_PER_RACK), DeviceRole.STORAGE_NODE, f"STG2U{n:06d}", f"10.72.5.{n}")
        for n in range(1, STORAGE_SERVERS + 1)
    ]


def pdu_plans(racks: list[RackPlan], *, subnet: str) -> list[DevicePlan]:
    """Two PDUs per rack on feeds A and B (redundant feeds), mounted at the rear at the top."""
    plans = []
    for rack_index, rack in enumerate(racks):
        for feed_index, feed in enumerate("ab"):
            number = 2 * rack_index + feed_index + 1
            plans.append(
                DevicePlan(f"pdu-{rack.name.lower()}-{feed}", "pdu", rack.name, rack.height_u - feed_index,
                           DeviceRole.PDU, f"PDU3P{subnet.split('.')[1]}{number:05d}", f"{subnet}.{number}",
                           face=Face.REAR)
            )
    return plans


@dataclass(frozen=True)
class OpticStock:
    """A batch of identical optics in stock; serials are prefix + running number."""

    vendor: str
    part_number: str
    form_factor: str
    speed_gbps: int
    serial_prefix: str
    needed: int
    spares: int

    def serials(self) -> list[str]:
        return [f"{self.serial_prefix}{n:05d}" for n in range(1, self.needed + self.spares + 1)]


@dataclass(frozen=True)
class OpticPart:
    vendor: str
    form_factor: str
    speed_gbps: int
    serial_prefix: str
    spares: int


# The transceivers the demo spec names. How many of each is the plan's bill of materials: one per cage
# that takes a fibre (a twin-port OSFP serves two switch ports), plus spares.
DEMO_OPTIC_PARTS = {
    "OSFP-800G-XDR-NODE": OpticPart("NVIDIA", FormFactor.OSFP, 800, "MT2514XN", 24),
    "OSFP-800G-XDR-TWIN": OpticPart("NVIDIA", FormFactor.OSFP, 800, "MT2516XT", 36),
    # Storage: each SN5610 800G cage carries two 400G links (twin-port 2 x 400G); servers take 400G.
    "OSFP-800G-2X400G-TWIN": OpticPart("NVIDIA", FormFactor.OSFP, 800, "MT2518ST", 12),
    "QSFP112-400G-SR4": OpticPart("NVIDIA", FormFactor.QSFP112, 400, "MT2520SQ", 8),
    "QSFP28-100G-SR4": OpticPart("NVIDIA", FormFactor.QSFP28, 100, "MT2522IQ", 8),
}


def demo_optic_stock(plan: Plan) -> list[OpticStock]:
    needed: Counter = Counter()
    for line in plan.bom:
        if line.category == "optic":
            needed[line.item] += line.count
    unknown = sorted(set(needed) - set(DEMO_OPTIC_PARTS))
    assert not unknown, f"examples/demo-72.yaml names optics the demo does not stock: {unknown}"
    return [
        OpticStock(p.vendor, part, p.form_factor, p.speed_gbps, p.serial_prefix, needed[part], p.spares)
        for part, p in DEMO_OPTIC_PARTS.items()
        if needed[part]
    ]


LAB_OPTICS = [OpticStock("NVIDIA", "OSFP-400G-NDR", FormFactor.OSFP, 400, "LB2490N", 16, 4)]

# Optics already seated, with DOM readings: gpu-001's eight XDR ports and the leaf cages facing them
# (rail i of gpu-001 lands on p1 of leaf i + 1; the twin-port transceiver of cage 1 sits in p1).
INSTALLED_OPTICS = [("OSFP-800G-XDR-NODE", "gpu-001", f"ib{i}") for i in range(8)] + [
    ("OSFP-800G-XDR-TWIN", f"ib-leaf-{i:02d}", "p1") for i in range(1, 9)
]
# Its compute cables are installed: both ends hold their optics. Installed, not verified: only a scan of both
# ends verifies a cable (cabling.services.cable_status_set refuses "verified").
INSTALLED_CABLES_OF = "gpu-001"


# --- writes -------------------------------------------------------------------------------------


@dataclass
class DemoLogin:
    username: str
    password: str | None  # None: the user existed with a password of their own, which is kept
    role: str
    project: str


@dataclass
class DemoResult:
    created: dict[str, int] = field(default_factory=dict)
    logins: list[DemoLogin] = field(default_factory=list)
    say: Callable[[str], None] | None = None  # told each step as it ends (seed_demo prints it)
    step_started: float = field(default_factory=time.perf_counter)

    def count(self, what: str, n: int) -> None:
        if n:
            self.created[what] = self.created.get(what, 0) + n

    def step(self, what: str) -> None:
        """Tell `say` that a step of the build ended, with its time, so a first `make run` is seen moving."""
        now = time.perf_counter()
        if self.say:
            self.say(f"  {what} ({now - self.step_started:.1f} s)")
        self.step_started = now


def _project_ensure(*, code: str, name: str, customer_name: str, site: str, description: str, name_zh: str = "",
                    customer_name_zh: str = "", result: DemoResult | None = None) -> Project:
    project = Project.objects.filter(code=code).first()
    if project:
        _project_names_zh_ensure(project=project, name_zh=name_zh, customer_name_zh=customer_name_zh, result=result)
        return project
    today = date.today()
    return project_create(
        code=code, name=name, customer_name=customer_name, site=site, description=description,
        status=ProjectStatus.ACTIVE, start_date=today - timedelta(days=21), target_date=today + timedelta(days=70),
        name_zh=name_zh, customer_name_zh=customer_name_zh,
    )


def _project_names_zh_ensure(*, project: Project, name_zh: str, customer_name_zh: str,
                             result: DemoResult | None) -> None:
    """A demo project made before the projects had Chinese names gets them, once (no service edits a project's
    names: written here, validated with full_clean()); a name someone set is kept."""
    missing = {name: value for name, value in (("name_zh", name_zh), ("customer_name_zh", customer_name_zh))
               if value and not getattr(project, name)}
    if not missing:
        return
    for name, value in missing.items():
        setattr(project, name, value)
    project.full_clean()
    project.save(update_fields=list(missing))
    if result is not None:
        result.count("Chinese project names", len(missing))


def _site_ensure(*, project: Project, name: str, address: str) -> Site:
    site = Site.objects.filter(project=project, name=name).first()
    if site:
        return site
    site = Site(project=project, name=name, address=address)
    site.full_clean()
    site.save()
    return site


def _racks_ensure(
    *, project: Project, site: Site, plans: list[RackPlan], result: DemoResult
) -> dict[str, Rack]:
    racks = {rack.name: rack for rack in Rack.objects.filter(project=project)}
    for plan in plans:
        if plan.name in racks:
            continue
        rack = Rack(
            project=project, site=site, name=plan.name, row=plan.row, position=plan.position,
            height_u=plan.height_u, power_budget_w=plan.power_budget_w, status=plan.status,
        )
        rack.full_clean()
        rack.save()
        racks[rack.name] = rack
        result.count("racks", 1)
    return racks


def _devices_ensure(
    *, project: Project, plans: list[DevicePlan], racks: dict[str, Rack], models: dict[str, HardwareModel],
    result: DemoResult,
) -> None:
    """The planned devices the project lacks, created together through inventory's bulk service (the rows
    device_create writes one by one: NICs, ports, lanes, rack units, history)."""
    existing = set(Device.objects.filter(project=project).values_list("name", flat=True))
    missing = [
        Device(project=project, hardware_model=models[plan.model_key], name=plan.name, rack=racks[plan.rack],
               position_u=plan.position_u, face=plan.face, role=plan.role, serial=plan.serial,
               oob_address=plan.oob_address, status=plan.status)
        for plan in plans if plan.name not in existing
    ]
    devices_create_bulk(project=project, devices=missing, reason=DEMO_REASON)
    result.count("devices", len(missing))


def _optics_ensure(*, project: Project, stock: list[OpticStock], result: DemoResult) -> None:
    """The stock the project lacks, taken in together through inventory's bulk intake of optics."""
    existing = set(Optic.objects.filter(project=project).values_list("serial", flat=True))
    missing = [
        Optic(project=project, vendor=batch.vendor, part_number=batch.part_number, serial=serial,
              form_factor=batch.form_factor, speed_gbps=batch.speed_gbps, status=OpticStatus.IN_STOCK)
        for batch in stock for serial in batch.serials() if serial not in existing
    ]
    optics_stock_bulk(project=project, optics=missing, reason=DEMO_REASON)
    result.count("optics", len(missing))


def _dom_readings(rng: random.Random, lanes: int = 8) -> dict:
    """Plausible healthy DOM values of an 800G OSFP (8 x 100G PAM4 lanes)."""
    return {
        "dom_temperature_c": round(rng.uniform(41.0, 54.0), 1),
        "dom_voltage_v": round(rng.uniform(3.27, 3.34), 3),
        "dom_tx_power_dbm": [round(rng.uniform(0.8, 2.6), 2) for _ in range(lanes)],
        "dom_rx_power_dbm": [round(rng.uniform(-0.9, 2.1), 2) for _ in range(lanes)],
        "dom_bias_ma": [round(rng.uniform(6.5, 8.8), 2) for _ in range(lanes)],
    }


def _optics_install_samples(*, project: Project, result: DemoResult) -> None:
    rng = random.Random(72)  # fixed seed: the same demo every time
    for part_number, device_name, port_name in INSTALLED_OPTICS:
        readings = _dom_readings(rng)
        port = Port.objects.select_related("device").filter(
            device__project=project, device__name=device_name, name=port_name
        ).first()
        if port is None or Optic.objects.filter(port=port).exists():
            continue
        optic = (
            Optic.objects.filter(project=project, part_number=part_number, status=OpticStatus.IN_STOCK)
            .order_by("serial")
            .first()
        )
        if optic is None:  # the stock of this part ran out (someone installed them all)
            continue
        optic_save(optic=optic, port=port, dom_read_at=timezone.now(), **readings)
        result.count("optics installed", 1)


@dataclass(frozen=True)
class UserPlan:
    username: str
    first_name: str
    last_name: str
    project: str | None
    role: str | None
    is_superuser: bool = False


DEMO_USERS = [
    UserPlan("manager", "Mei", "Lin", DEMO_CODE, Role.MANAGER),
    UserPlan("technician", "Tomas", "Ruiz", DEMO_CODE, Role.TECHNICIAN),
    UserPlan("customer", "Claire", "Dubois", DEMO_CODE, Role.CUSTOMER),
    UserPlan("other-customer", "Omar", "Haddad", LAB_CODE, Role.CUSTOMER),
    UserPlan("admin", "", "", None, None, is_superuser=True),
]


def _users_ensure(*, projects: dict[str, Project], result: DemoResult) -> None:
    User = get_user_model()
    for plan in DEMO_USERS:
        is_new = not User.objects.filter(username=plan.username).exists()
        user = user_ensure(username=plan.username, password=DEMO_PASSWORD, first_name=plan.first_name,
                           last_name=plan.last_name, superuser=plan.is_superuser)
        if plan.project:
            project = projects[plan.project]
            memberships = Membership.objects.filter(user=user, project=project)
            current = memberships.values_list("role", flat=True).first()
            if current != plan.role:
                membership_set(project=project, user=user, role=plan.role)
                result.count("memberships", 1)
            # The demo's managers start projects too (/projects/new/): a granted permission, asked once.
            if plan.role == Role.MANAGER and not user.has_perm("projects.add_project"):
                project_creator_grant(user=user)
        result.count("users", int(is_new))
        role = "staff superuser" if plan.is_superuser else plan.role
        # Asked every run, so a second `make run` still prints the logins that work.
        password = DEMO_PASSWORD if is_new or user.check_password(DEMO_PASSWORD) else None
        result.logins.append(DemoLogin(plan.username, password, role, plan.project or "all projects"))


def _fabric_ensure(*, project: Project, result: DemoResult) -> None:
    """Switches, their ports and lanes, and every cable, from the demo spec through plan_apply (recorded as a
    FabricPlan when it changed anything; a second run finds nothing to change)."""
    _, applied = fabric_plan_apply_now(project=project, spec_text=demo_spec_text(), source=FabricPlanSource.DEMO)
    counts = applied.diff.counts()
    result.count("switches", counts["switches_added"])
    result.count("cables", counts["cables_added"])


SWITCH_SERIAL_PREFIX = {
    "Q3400-RA": "Q3400X", "SN5610": "SN5610X", "SN4600C": "SN4600X", "SN2201": "SN2201X", "SN2700": "SN2700X",
}


def _switches_commission(*, project: Project, result: DemoResult) -> None:
    """The planner's switches arrive planned and anonymous; in the demo they are racked and powered, with a
    serial and an out-of-band address. Only switches without a serial are touched, so it runs once."""
    switches = list(
        Device.objects.filter(project=project, role__in=[DeviceRole.LEAF, DeviceRole.SPINE, DeviceRole.SUPER_SPINE])
        .select_related("hardware_model")
        .order_by("id")
    )
    for number, device in enumerate(switches, start=1):
        if device.serial:
            continue
        prefix = SWITCH_SERIAL_PREFIX.get(device.hardware_model.part_number, "SW")
        device_update(device=device, serial=f"{prefix}{number:05d}", oob_address=f"10.72.2.{number}",
                      status=DeviceStatus.POWERED)
        result.count("switches commissioned", 1)


def _cables_install_samples(*, project: Project, result: DemoResult) -> None:
    """The compute cables of INSTALLED_CABLES_OF are on the floor; the planned ones among them become
    installed (a second run finds none planned)."""
    cables = Cable.objects.filter(project=project, status=CableStatus.PLANNED, network=Network.COMPUTE,
                                  ends__port__device__name=INSTALLED_CABLES_OF)
    result.count("cables installed", cable_status_set(cables=cables, status=CableStatus.INSTALLED))


def _build_demo72(models: dict[str, HardwareModel], result: DemoResult) -> Project:
    project = _project_ensure(
        code=DEMO_CODE, name="72-node B300 post-training cluster", customer_name="Example Security AI Lab",
        site="DC1 Hall 3",
        description="72 B300 nodes (576 GPUs) on a 4-plane 800G XDR fabric of 12 Quantum-X800 switches, "
        "400G RoCE storage network with 6 storage servers (1 PB), in-band and out-of-band networks.",
        name_zh=DEMO_NAME_ZH, customer_name_zh=DEMO_CUSTOMER_NAME_ZH, result=result,
    )
    site = _site_ensure(project=project, name="DC1 Hall 3", address="Example Data Centre 1, Hall 3")
    rack_plans = demo_rack_plans()
    racks = _racks_ensure(project=project, site=site, plans=rack_plans, result=result)
    pdus = pdu_plans(rack_plans, subnet="10.72.6")
    plans = [*gpu_server_plans(), *storage_server_plans(), *pdus]
    _devices_ensure(project=project, plans=plans, racks=racks, models=models, result=result)
    result.step(f"{DEMO_CODE}: {len(rack_plans)} racks, {len(plans)} servers and PDUs")
    _fabric_ensure(project=project, result=result)
    _switches_commission(project=project, result=result)
    result.step(f"{DEMO_CODE}: the fabric from examples/demo-72.yaml ({len(demo_plan().cables):,} cables)")
    _optics_ensure(project=project, stock=demo_optic_stock(demo_plan()), result=result)
    _optics_install_samples(project=project, result=result)
    _cables_install_samples(project=project, result=result)
    result.step(f"{DEMO_CODE}: optics in stock and the first installed")
    return project


def _build_lab8(models: dict[str, HardwareModel], result: DemoResult) -> Project:
    project = _project_ensure(
        code=LAB_CODE, name="8-node lab cluster", customer_name="Other Research Co", site="Lab building 2",
        description="A small second project: its customer must see nothing of DEMO-72.",
    )
    site = _site_ensure(project=project, name="Lab building 2", address="Other Research Co campus")
    rack_plans = [RackPlan("L01", "L", 1, 84_000)]  # 8 x 8 kW = 64 kW: 23.8% headroom
    racks = _racks_ensure(project=project, site=site, plans=rack_plans, result=result)
    servers = [
        DevicePlan(f"lab-gpu-{n:02d}", "lab_gpu", "L01", 3 + 4 * (n - 1), DeviceRole.GPU_NODE, f"LC4U{n:06d}",
                   f"10.8.1.{n}", status=DeviceStatus.READY)
        for n in range(1, 9)
    ]
    plans = servers + pdu_plans(rack_plans, subnet="10.8.6")
    _devices_ensure(project=project, plans=plans, racks=racks, models=models, result=result)
    _optics_ensure(project=project, stock=LAB_OPTICS, result=result)
    return project


# --- the technician's walk: scans, through the one scan service ------------------------------------

FLOOR_TECHNICIAN = "technician"
RACKED_BY_SCAN = ("gpu-071", "gpu-072")  # the last servers to arrive, racked by scanning their serials
VERIFIED_BY_SCAN = 3  # the first cables of INSTALLED_CABLES_OF verified by scanning both ends
MISPLACED_PORT = "p2"  # the next cable's leaf end is scanned at this port of its leaf: refused


@dataclass(frozen=True)
class FloorScan:
    key: str  # its idempotency key: a second seed_demo finds it recorded and scans nothing again
    action: str
    code: str
    port_code: str | None = None


def floor_scans(project: Project) -> list[FloorScan]:
    """What the demo's technician scans, in order: two servers racked by serial; both ends of the first
    VERIFIED_BY_SCAN compute cables of INSTALLED_CABLES_OF (the server end, then the leaf end); and the next
    cable's leaf end scanned at the wrong port of its leaf."""
    scans = [
        FloorScan(f"demo72-rack-{name}", ScanAction.RACK, serial)
        for name, serial in Device.objects.filter(project=project, name__in=RACKED_BY_SCAN)
        .order_by("name").values_list("name", "serial")
    ]
    cables = list(
        Cable.objects.filter(project=project, network=Network.COMPUTE, ends__port__device__name=INSTALLED_CABLES_OF)
        .order_by("label")[: VERIFIED_BY_SCAN + 1]
    )
    ends = CableEnd.objects.filter(cable__in=cables).select_related("cable", "port__device").order_by("side")
    by_cable: dict[int, list[CableEnd]] = {}
    for end in ends:
        by_cable.setdefault(end.cable_id, []).append(end)
    for index, cable in enumerate(cables):
        legs = by_cable.get(cable.pk, [])
        b_ends = sum(1 for end in legs if end.side == Side.B)
        for end in legs:
            code = cable_end_code(cable.label, end.side, end.position, b_ends=b_ends)
            where = f"{end.port.device.name}:{end.port.name}"
            if index < VERIFIED_BY_SCAN:
                scans.append(FloorScan(f"demo72-{cable.label}-{end.side}{end.position}", ScanAction.CABLE_END,
                                       code, where))
            elif end.side == Side.B:
                wrong = f"{end.port.device.name}:{MISPLACED_PORT}"
                scans.append(FloorScan(f"demo72-{cable.label}-wrong-port", ScanAction.CABLE_END, code, wrong))
    return scans


def _floor_scans_ensure(*, project: Project, result: DemoResult) -> None:
    """The technician's walk, each scan through scan_record; scans already recorded are not sent again."""
    technician = get_user_model().objects.get(username=FLOOR_TECHNICIAN)
    recorded = set(ScanEvent.objects.filter(project=project, idempotency_key__startswith="demo72-")
                   .values_list("idempotency_key", flat=True))
    for scan in floor_scans(project):
        if scan.key in recorded:
            continue
        scan_record(user=technician, project=project, action=scan.action, code=scan.code,
                    port_code=scan.port_code, idempotency_key=scan.key, source=ScanSource.PAGE)
        result.count("scans", 1)


@transaction.atomic
def build_demo(*, say: Callable[[str], None] | None = None) -> DemoResult:
    """Create whatever of the demo is missing; return what was created and the demo logins. `say` is told
    each step as it ends."""
    result = DemoResult(say=say)
    models = catalogue_ensure()
    projects = {DEMO_CODE: _build_demo72(models, result), LAB_CODE: _build_lab8(models, result)}
    result.step(f"{LAB_CODE}: its rack, servers and optics")
    _users_ensure(projects=projects, result=result)
    # After the users: the scans are the technician's, who must be a member to resolve the codes.
    _floor_scans_ensure(project=projects[DEMO_CODE], result=result)
    for project in projects.values():  # the delivery stages; their gates are computed once this commits
        result.count("stages", len(stages_create_from_template(project=project)))
    result.step("users, the technician's scans and the delivery stages")
    return result


# --- the acceptance report ---------------------------------------------------------------------------------

REPORT_MANAGER = "manager"  # who asks for the demo's report: the demo's manager, as the reports page would


def demo_report_ensure(project: Project) -> ReportVersion | None:
    """Version 1 of the project's acceptance report, asked for by the demo manager through the service the
    reports page's button calls, so a newcomer downloads it right after `make run`. Rendered here, in this
    process, like the demo's check runs (as `build_report` does): not left to a task sent after commit, which
    a seed run inside a transaction (the PostgreSQL tests) would never send. None when the project has a
    version already (a second seed_demo asks for nothing)."""
    if ReportVersion.objects.filter(project=project).exists():
        return None
    manager = get_user_model().objects.get(username=REPORT_MANAGER)
    version = report_version_request(project=project, user=manager, enqueue=False)
    report_version_render(version_id=version.pk)
    return version


def demo_report_line(version: ReportVersion, *, seconds: float) -> str:
    """What seed_demo prints about the report it asked for: where to download it, or where it stands."""
    version.refresh_from_db()
    where = f"{version.project.code}: acceptance report v{version.number}"
    if version.status == JobStatus.DONE:
        files = ", ".join(f"{FileKind(kind).label} {filesizeformat(version.size_of(kind))}"
                          for kind in ORIGINAL_FILE_KINDS)
        return f"{where} rendered ({files}) in {seconds:.1f} s: /p/{version.project.code}/reports/v{version.number}/"
    if version.status == JobStatus.FAILED:
        return f"{where} failed: {' '.join(version.errors)}"
    return f"{where} {version.get_status_display().lower()}: a worker renders it (/p/{version.project.code}/reports/)."
