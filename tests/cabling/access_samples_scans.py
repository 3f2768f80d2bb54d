"""The floor API's objects for the access matrix (tests/test_access_matrix.py): a cable between a server
and a leaf in their own rack, and one scan of it recorded through scan_record; `QUERIES` gives the search
its project and code (the world's project is ACME-72; the outsider's own is another, where the search
finds nothing of ACME-72)."""

from __future__ import annotations

from cabling.choices import CableType, ScanAction
from cabling.services import scan_record
from inventory.choices import DeviceRole
from inventory.services import device_create
from projects.choices import Role
from tests.factories import MembershipFactory, RackFactory, UserFactory, gpu_server_model

from .conftest import connect, ports_of, switch_model

QUERIES = {"api:search-list": {"project": "ACME-72", "q": "SC0001"}}


def samples(project) -> dict[str, dict]:
    rack = RackFactory(project=project, name="SC1")
    server = device_create(project=project, hardware_model=gpu_server_model(), name="scan-gpu", rack=rack,
                           position_u=1, role=DeviceRole.GPU_NODE)
    leaf = device_create(project=project, hardware_model=switch_model(), name="scan-leaf", rack=rack,
                         position_u=20, role=DeviceRole.LEAF)
    cable = connect(project, "SC0001", ports_of(server)["ib0/0"], ports_of(leaf)["p1"], plane=0,
                    cable_type=CableType.FIBER)
    technician = UserFactory()
    MembershipFactory(user=technician, project=project, role=Role.TECHNICIAN)
    scan = scan_record(user=technician, project=project, action=ScanAction.LOOKUP, code="SC0001").event
    return {
        "api:cable-list": {},
        "api:cable-detail": {"pk": cable.pk},
        "api:cable-scan": {"pk": cable.pk},
        "api:cable-status": {"pk": cable.pk},
        "api:scan-list": {},
        "api:scan-detail": {"pk": scan.pk},
        "api:search-list": {},
    }
