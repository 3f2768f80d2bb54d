"""Objects of `project` for the access matrix to walk the cabling pages and endpoints with.

`samples(project)` creates a minimal set (a rack, a server and a leaf with one compute cable in plane 0,
a fabric plan, a rendered label sheet export) and returns, for every URL name of the `cabling:` and
`plans:` namespaces and of the cabling API ("api:<router name>"), the URL kwargs besides `code`.
`QUERIES` holds the query string a URL needs to answer 200 to a member (without it, a 400 naming
what is missing)."""

from __future__ import annotations

from cabling.choices import CableType
from cabling.services import fabric_plan_preview, label_sheet_export_run, label_sheet_export_start
from inventory.choices import DeviceRole, Network
from inventory.services import device_create
from tests.factories import RackFactory, UserFactory, gpu_server_model

from .conftest import connect, ports_of, switch_model
from .test_plan_apply import small_spec

QUERIES = {
    "cabling:fabric-svg": {"network": Network.COMPUTE, "plane": "0"},
    "cabling:search": {"q": "S00001"},  # one match: members are sent on to the cable's page
}


def samples(project) -> dict[str, dict]:
    rack = RackFactory(project=project, name="S01")
    server = device_create(project=project, hardware_model=gpu_server_model(), name="sample-gpu", rack=rack,
                           position_u=1, role=DeviceRole.GPU_NODE)
    leaf = device_create(project=project, hardware_model=switch_model(), name="sample-leaf", rack=rack,
                         position_u=20, role=DeviceRole.LEAF)
    gpu_lane = ports_of(server)["ib0/0"]
    cable = connect(project, "S00001", gpu_lane, ports_of(leaf)["p1"], plane=0, cable_type=CableType.FIBER)
    someone = UserFactory()
    # No catalogue entry for the spec's hardware: the preview is stored as failed, so confirming it does
    # nothing (a refusal), whoever tries.
    plan = fabric_plan_preview(project=project, user=someone, spec_text=small_spec(2))
    export = label_sheet_export_run(export_id=label_sheet_export_start(project=project, user=someone).pk)
    return {
        "cabling:cable-list": {},
        "cabling:cable-detail": {"pk": cable.pk},
        "cabling:cutsheet": {},
        "cabling:labels": {},
        "cabling:label-exports": {},
        "cabling:label-export-download": {"pk": export.pk},
        "cabling:fabric": {},
        "cabling:fabric-svg": {},
        "cabling:port-trace": {"pk": gpu_lane.pk},
        "cabling:search": {},
        "cabling:progress": {},
        "plans:page": {},
        "plans:example": {"name": "fabric-72"},
        "plans:detail": {"pk": plan.pk},
        "plans:confirm": {"pk": plan.pk},
        "api:fabric-plan-list": {},
        "api:fabric-plan-preview": {},
        "api:fabric-plan-detail": {"pk": plan.pk},
        "api:fabric-plan-apply": {"pk": plan.pk},
        # The list holds the cabled ports: the sample port carries S00001's A end.
        "api:port-trace-list": {},
        "api:port-trace-detail": {"pk": gpu_lane.pk},
    }
