"""A small fabric built directly in the database, the way plan_apply leaves it: three GPU servers in rack
A01, two leaves (plane 0 and plane 1) and a spine in rack N01, and cables between them, one of them a
breakout (A on a whole node port, B1 and B2 on the two leaves). One out-of-band cable, and a cable of
another project that no page of `project` may show.

    label   net      plane type  len A end                      B end(s)
    C00001  compute  0     fiber 5   gpu-001:ib0/0 (A01 U10)    leaf-01:p1 (N01 U01)
    C00002  compute  1     fiber 5   gpu-001:ib0/1              leaf-02:p1 (N01 U02)
    C00003  compute  0     fiber 5   gpu-002:ib0/0 (A01 U20)    leaf-01:p2
    C00004  compute  1     fiber 5   gpu-002:ib0/1              leaf-02:p2
    C00005  compute  -     fiber 7   gpu-003:ib0   (A01 U30)    B1 leaf-01:p3, B2 leaf-02:p3
    C00006  compute  0     aoc   3   leaf-01:p7                 spine-01:p1 (N01 U10)
    C00007  compute  1     aoc   3   leaf-02:p7                 spine-01:p2
    O00001  oob      -     cat6  3   gpu-001:bmc                leaf-01:mgmt
"""

from decimal import Decimal
from types import SimpleNamespace

import pytest

from cabling.choices import CableStatus, CableType
from cabling.models import Cable, CableEnd
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import HardwareModel, Port, PortTemplate
from inventory.services import device_create
from tests.factories import RackFactory, SiteFactory, gpu_server_model

NODE_OPTIC, SWITCH_OPTIC = "OPT-NODE-800", "OPT-SW-2x400"


def switch_model(*, ports: int = 8, part_number: str = "TEST-SW-8") -> HardwareModel:
    """A 1U switch with `ports` 800G ports p1.. and an out-of-band management port."""
    model, created = HardwareModel.objects.get_or_create(
        part_number=part_number,
        defaults=dict(vendor="Example", model=f"Switch {ports}x800G", kind=HardwareKind.IB_SWITCH, height_u=1,
                      max_power_w=1500),
    )
    if created:
        PortTemplate.objects.bulk_create(
            PortTemplate(hardware_model=model, name=f"p{i}", kind=PortKind.INFINIBAND, speed_gbps=800,
                         network=Network.COMPUTE)
            for i in range(1, ports + 1)
        )
        PortTemplate.objects.create(hardware_model=model, name="mgmt", kind=PortKind.BMC, speed_gbps=1,
                                    network=Network.OOB)
    return model


def connect(project, label, a, *b, network=Network.COMPUTE, plane=None, cable_type=CableType.FIBER, length="5.0",
            speed=200, optic_a="", optic_b="", status=CableStatus.PLANNED) -> Cable:
    """A cable with its ends; `a` and each of `b` are Port rows."""
    cable = Cable.objects.create(
        project=project, label=label, network=network, plane=plane, cable_type=cable_type,
        length_m=Decimal(length), speed_gbps=speed, optic_part_a=optic_a, optic_part_b=optic_b, status=status,
    )
    CableEnd.objects.create(cable=cable, side="A", position=0, port=a)
    for position, port in enumerate(b):
        CableEnd.objects.create(cable=cable, side="B", position=position, port=port)
    return cable


def ports_of(device) -> dict[str, Port]:
    return {p.name: p for p in Port.objects.filter(device=device)}


@pytest.fixture
def fabric(project, other_project):
    site = SiteFactory(project=project, name="Hall 1")
    servers_rack = RackFactory(project=project, site=site, name="A01", row="A", position=1)
    network_rack = RackFactory(project=project, site=site, name="N01", row="N", position=1)
    gpu, switch = gpu_server_model(), switch_model()

    def server(name, u):
        return device_create(project=project, hardware_model=gpu, name=name, rack=servers_rack, position_u=u,
                             role=DeviceRole.GPU_NODE)

    def switch_at(name, u, role, plane):
        device = device_create(project=project, hardware_model=switch, name=name, rack=network_rack,
                               position_u=u, role=role)
        if plane is not None:  # as plan_apply records it: every fabric port of a per-plane switch
            Port.objects.filter(device=device, name__startswith="p").update(plane=plane)
        return device

    ns = SimpleNamespace(project=project, servers_rack=servers_rack, network_rack=network_rack,
                         gpu_model=gpu, switch_model=switch)
    ns.gpu1, ns.gpu2, ns.gpu3 = server("gpu-001", 1), server("gpu-002", 11), server("gpu-003", 21)
    ns.leaf1 = switch_at("leaf-01", 1, DeviceRole.LEAF, 0)
    ns.leaf2 = switch_at("leaf-02", 2, DeviceRole.LEAF, 1)
    ns.spine = switch_at("spine-01", 10, DeviceRole.SPINE, None)
    g1, g2, g3 = ports_of(ns.gpu1), ports_of(ns.gpu2), ports_of(ns.gpu3)
    l1, l2, s1 = ports_of(ns.leaf1), ports_of(ns.leaf2), ports_of(ns.spine)
    fibre = dict(optic_a=NODE_OPTIC, optic_b=SWITCH_OPTIC)
    ns.c1 = connect(project, "C00001", g1["ib0/0"], l1["p1"], plane=0, **fibre)
    ns.c2 = connect(project, "C00002", g1["ib0/1"], l2["p1"], plane=1, **fibre)
    ns.c3 = connect(project, "C00003", g2["ib0/0"], l1["p2"], plane=0, **fibre)
    ns.c4 = connect(project, "C00004", g2["ib0/1"], l2["p2"], plane=1, **fibre)
    ns.breakout = connect(project, "C00005", g3["ib0"], l1["p3"], l2["p3"], length="7.0", speed=400, **fibre)
    aoc = dict(cable_type=CableType.AOC, length="3.0", speed=800)
    ns.c6 = connect(project, "C00006", l1["p7"], s1["p1"], plane=0, **aoc)
    ns.c7 = connect(project, "C00007", l2["p7"], s1["p2"], plane=1, **aoc)
    ns.oob = connect(project, "O00001", g1["bmc"], l1["mgmt"], network=Network.OOB, cable_type=CableType.CAT6,
                     length="3.0", speed=1)
    # Another project's cable, with a label that would match any search.
    foreign_rack = RackFactory(project=other_project, name="X01")
    foreign_sw = device_create(project=other_project, hardware_model=switch, name="foreign-sw", rack=foreign_rack,
                               position_u=1, role=DeviceRole.LEAF)
    fp = ports_of(foreign_sw)
    ns.foreign = connect(other_project, "C00001-FOREIGN", fp["p1"], fp["p2"])
    return ns


@pytest.fixture
def add_cables():
    """add_cables(project, count, start): `count` simple node-to-leaf cables (bulk inserted), with their own
    rack, node and leaf, labelled Q00000...; call it again with a new `start` to add more."""

    def add(project, count, start=0):
        site = SiteFactory(project=project)
        rack = RackFactory(project=project, site=site, name=f"Q{start:03d}", row="Q", position=start + 1)
        model = switch_model(ports=64, part_number="TEST-SW-64")
        a = device_create(project=project, hardware_model=model, name=f"qa-{start:03d}", rack=rack, position_u=1,
                          role=DeviceRole.STORAGE_NODE)
        b = device_create(project=project, hardware_model=model, name=f"qb-{start:03d}", rack=rack, position_u=2,
                          role=DeviceRole.LEAF)
        pa, pb = ports_of(a), ports_of(b)
        cables = Cable.objects.bulk_create(
            Cable(project=project, label=f"Q{start + i:05d}", network=Network.COMPUTE, plane=(start + i) % 2,
                  cable_type=CableType.DAC, length_m=Decimal("1.0"), speed_gbps=800)
            for i in range(count)
        )
        CableEnd.objects.bulk_create(
            end
            for i, cable in enumerate(cables)
            for end in (CableEnd(cable=cable, side="A", port=pa[f"p{i + 1}"]),
                        CableEnd(cable=cable, side="B", port=pb[f"p{i + 1}"]))
        )
        return cables

    return add
