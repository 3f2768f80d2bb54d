"""Time, queries and peak memory of a leaf switch's page (issue 11: "leaf switch page (721 ports): at most
200 ms") at 72 and 1,024 servers: the project's leaf with the most ports (at 72 servers an XDR Q3400-RA,
721 ports with its lanes; at 1,024 a Spectrum-4 SN5600, 194), its first page of ports and a later one.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_leaf_page.py \
        [--sizes 72,1024] [--repeat N]

On the kept reference projects of bench/harness.py (read only). Fetched through Django's test client as
the project's manager (not staff). The ports panel (cabling.selectors.device_ports_page) shows 16 physical
ports a page with their lanes, each with its cable and far ends, in a constant number of queries. Times on
a shared 2-core machine are upper bounds.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import arguments, bench_project, client_for, measure_page  # noqa: E402

GOAL_MS = 200


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    for servers in args.sizes:
        with bench_project(servers) as bench:
            from django.db.models import Count
            from django.urls import reverse

            from inventory.choices import DeviceRole
            from inventory.models import Device

            client = client_for(bench.manager)
            leaf = (Device.objects.filter(project=bench.project, role=DeviceRole.LEAF)
                    .annotate(port_total=Count("ports")).order_by("-port_total", "name").first())
            page = reverse("inventory:device-detail", args=[bench.project.code, leaf.pk])
            what = f"{leaf.name}, {leaf.port_total} ports"
            measure_page("leaf switch page", servers, client, page, repeat=args.repeat, goal_ms=GOAL_MS, extra=what)
            measure_page("  its ports, page 5", servers, client, f"{page}?ports_page=5", repeat=args.repeat,
                        goal_ms=GOAL_MS)


if __name__ == "__main__":
    main()
