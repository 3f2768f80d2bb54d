"""Swaps for the access matrix (tests/test_access_matrix.py): an optic seated in a server's port and swapped
through the service, with a cable that can be replaced, so every swap page and endpoint has its object."""

from __future__ import annotations

from cabling.choices import CableType
from cabling.swaps.services import optic_swap
from inventory.choices import DeviceRole
from inventory.services import device_create, optic_install
from projects.choices import Role
from tests.factories import MembershipFactory, OpticFactory, RackFactory, UserFactory, gpu_server_model

from .conftest import connect, ports_of, switch_model


def samples(project) -> dict[str, dict]:
    rack = RackFactory(project=project, name="SW1")
    server = device_create(project=project, hardware_model=gpu_server_model(), name="swap-gpu", rack=rack,
                           position_u=1, role=DeviceRole.GPU_NODE)
    leaf = device_create(project=project, hardware_model=switch_model(), name="swap-leaf", rack=rack,
                         position_u=20, role=DeviceRole.LEAF)
    cage = ports_of(server)["ib0"]
    cable = connect(project, "SW0001", ports_of(server)["ib0/0"], ports_of(leaf)["p1"], plane=0,
                    cable_type=CableType.FIBER)
    technician = UserFactory()
    MembershipFactory(user=technician, project=project, role=Role.TECHNICIAN)
    optic = optic_install(optic=OpticFactory(project=project, serial="SWAP-OPT-1"), port=cage, user=technician)
    swap = optic_swap(optic=optic, new_serial="SWAP-OPT-2", reason="Rx power low", user=technician)
    return {
        "cabling:swap-list": {},
        "cabling:swap-detail": {"pk": swap.pk},
        "cabling:swap-optic": {"pk": swap.new_optic_id},
        "cabling:swap-cable": {"pk": cable.pk},
        "api:swap-list": {},
        "api:swap-detail": {"pk": swap.pk},
    }
