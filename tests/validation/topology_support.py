"""Small fabrics for the topology tests, built through the inventory service (ports and lanes from the
hardware models' templates) with cables written as plan_apply writes them (one A end, B ends)."""

from __future__ import annotations

from decimal import Decimal

from cabling.choices import CableStatus, CableType
from cabling.models import Cable, CableEnd
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, HardwareModel, Port, PortTemplate
from inventory.services import device_create


def switch_model(part_number: str, *, ports: int, speed: int, kind: str = HardwareKind.IB_SWITCH,
                 port_kind: str = PortKind.INFINIBAND, os_port_format: str = "", lanes: dict[int, int] | None = None,
                 speeds: dict[int, int] | None = None, mgmt: str = "mgmt0", network: str = Network.COMPUTE
                 ) -> HardwareModel:
    """A switch of `ports` ports p1.. (`lanes` {port: lane count} splits some, `speeds` overrides some) and a
    management port."""
    model, created = HardwareModel.objects.get_or_create(
        part_number=part_number,
        defaults=dict(vendor="Example", model=part_number, kind=kind, height_u=1, max_power_w=500,
                      os_port_format=os_port_format),
    )
    if created:
        for n in range(1, ports + 1):
            port_speed = (speeds or {}).get(n, speed)
            count = (lanes or {}).get(n, 1)
            PortTemplate.objects.create(hardware_model=model, name=f"p{n}", kind=port_kind, speed_gbps=port_speed,
                                        network=network, breakout_lanes=count,
                                        lane_speed_gbps=port_speed // count if count > 1 else None)
        if mgmt:
            PortTemplate.objects.create(hardware_model=model, name=mgmt, kind=PortKind.BMC, speed_gbps=1,
                                        network=Network.OOB)
    return model


def host_model(part_number: str, *, ports: list[str], speed: int, port_kind: str = PortKind.INFINIBAND,
               network: str = Network.COMPUTE, lanes: int = 1) -> HardwareModel:
    model, created = HardwareModel.objects.get_or_create(
        part_number=part_number,
        defaults=dict(vendor="Example", model=part_number, kind=HardwareKind.GPU_SERVER, height_u=2, max_power_w=900),
    )
    if created:
        for name in ports:
            PortTemplate.objects.create(hardware_model=model, name=name, kind=port_kind, speed_gbps=speed,
                                        network=network, breakout_lanes=lanes,
                                        lane_speed_gbps=speed // lanes if lanes > 1 else None,
                                        planes_per_lane=lanes > 1)
    return model


def devices(project, model: HardwareModel, *names: str, role: str = DeviceRole.OTHER) -> list[Device]:
    return [device_create(project=project, hardware_model=model, name=name, role=role) for name in names]


def port(project, text: str) -> Port:
    """`device:port` of the project."""
    device, _, name = text.rpartition(":")
    return Port.objects.get(device__project=project, device__name=device, name=name)


def cable(project, label: str, a: str, *b: str, network: str = Network.COMPUTE, speed: int = 100,
          status: str = CableStatus.INSTALLED) -> Cable:
    row = Cable.objects.create(project=project, label=label, network=network, cable_type=CableType.FIBER,
                               length_m=Decimal("5.0"), speed_gbps=speed, status=status)
    CableEnd.objects.create(cable=row, side="A", position=0, port=port(project, a))
    for position, end in enumerate(b):
        CableEnd.objects.create(cable=row, side="B", position=position, port=port(project, end))
    return row


def sb7700_fabric(project) -> dict[str, Cable]:
    """What iblinkinfo_02 (an EDR SB7700 with n01, n02 and mgt) shows, as a plan: n02 on port 17, n01 on
    18, mgt on 36, and n03 on port 1 (Down/Polling in the output)."""
    switch = switch_model("TEST-SB7700", ports=36, speed=100)
    host = host_model("TEST-EDR-HOST", ports=["ib0"], speed=100)
    devices(project, switch, "SB7700", role=DeviceRole.LEAF)
    devices(project, host, "n01", "n02", "n03", "mgt", role=DeviceRole.GPU_NODE)
    return {
        "C1": cable(project, "C1", "n02:ib0", "SB7700:p17"),
        "C2": cable(project, "C2", "n01:ib0", "SB7700:p18"),
        "C3": cable(project, "C3", "mgt:ib0", "SB7700:p36"),
        "C4": cable(project, "C4", "n03:ib0", "SB7700:p1"),
    }
