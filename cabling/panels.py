"""What cabling adds to inventory's pages (core.panels): a device's ports, each with its cable and far end;
and the swaps of a cable or an optic, on its page (cabling.swaps.panels).

Inventory may not import cabling, yet a port's far end is cabling's business: the device page asks
core.panels for its panels and this one, registered in CablingConfig.ready(), shows the ports one page
at a time (a 721-port leaf in pages of PORTS_PER_PAGE physical ports with their lanes), each port and
lane with its optic, its cable and where the cable's other end lands, and a link to the port's trace.
Its own query parameters (`ports_page`, `ports_q`, `ports_plane`) leave the device page's others alone. On a
device whose ports are split into lanes, each port's lanes are folded under it (a tap opens them), unless one
plane is chosen: then each port shows its lane of that plane, so a leaf of 144 ports in four planes reads as
one plane at a time instead of a wall of 720 rows.
"""

from __future__ import annotations

from cabling.swaps.panels import register as register_swap_panels
from core.panels import Panel, register_panel

from .selectors import device_planes, device_ports_page

PAGE_PARAM, QUERY_PARAM, PLANE_PARAM = "ports_page", "ports_q", "ports_plane"  # as the panel's template writes them


def device_ports(request, device, project) -> dict:
    query = request.GET.get(QUERY_PARAM, "")[:100]
    planes = device_planes(device=device)
    asked = request.GET.get(PLANE_PARAM, "")
    plane = int(asked) if asked.isdigit() and int(asked) in planes else None  # anything else: every plane
    page = device_ports_page(user=request.user, device=device, number=request.GET.get(PAGE_PARAM), query=query,
                             plane=plane)
    return {"page": page, "query": query.strip(), "planes": planes, "plane": plane,
            "fold_lanes": plane is None and not query.strip()}


def register() -> None:
    register_swap_panels()  # the swaps of a cable (its page) and of an optic (inventory's optic page)
    register_panel("inventory.device", Panel(
        key="ports", title="Ports and cables", template="cabling/panels/device_ports.html", context=device_ports,
        order=10,
    ))
