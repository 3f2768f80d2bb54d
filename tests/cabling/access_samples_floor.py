"""The floor pages' objects for the access matrix (tests/test_access_matrix.py): a rack with a server and a
leaf joined by one cable, so the rack's worklist, its data, a device's worklist and the compute network's
worklist each have something to show. Every floor page is a read: customers see it (and are told they
cannot scan), outsiders get 404."""

from __future__ import annotations

from cabling.choices import CableType
from inventory.choices import DeviceRole, Network
from inventory.services import device_create
from tests.factories import RackFactory, gpu_server_model

from .conftest import connect, ports_of, switch_model


def samples(project) -> dict[str, dict]:
    rack = RackFactory(project=project, name="FL1")
    server = device_create(project=project, hardware_model=gpu_server_model(), name="floor-gpu", rack=rack,
                           position_u=1, role=DeviceRole.GPU_NODE)
    leaf = device_create(project=project, hardware_model=switch_model(), name="floor-leaf", rack=rack,
                         position_u=20, role=DeviceRole.LEAF)
    connect(project, "FL0001", ports_of(server)["ib0/0"], ports_of(leaf)["p1"], plane=0, cable_type=CableType.FIBER)
    return {
        "floor:home": {},
        "floor:scan": {},
        "floor:row": {"row": rack.row},
        "floor:rack": {"pk": rack.pk},
        "floor:rack-data": {"pk": rack.pk},
        "floor:device": {"pk": server.pk},
        "floor:network": {"network": Network.COMPUTE},
        "floor:service-worker": {},
    }
