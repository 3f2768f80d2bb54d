"""Time, queries and peak memory of the fabric view (issue 11: "fabric view (HTML / SVG): at most 300 ms")
at 72 and 1,024 servers: the page with every network and plane, and one plane's SVG download.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_fabric_view.py \
        [--sizes 72,1024] [--repeat N]

On the kept reference projects of bench/harness.py (read only: nothing is written). The pages are fetched
through Django's test client as the project's manager (not staff: the membership joins are in every
query). The view reads every link of the fabric in one query (cabling.selectors.fabric_link_rows) and folds
it in Python (cabling.exports.fabric_svg.fabric_views_of), so its query count is the same at both sizes.
Times on a shared 2-core machine are upper bounds.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import arguments, bench_project, client_for, measure_page  # noqa: E402

GOAL_MS = 300


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    for servers in args.sizes:
        with bench_project(servers) as bench:
            from django.urls import reverse

            from cabling.exports.fabric_svg import fabric_views
            from cabling.models import CableEnd

            client = client_for(bench.manager)
            code = bench.project.code
            links = CableEnd.objects.filter(cable__project=bench.project, side="B").count()
            measure_page("fabric view (HTML)", servers, client, reverse("cabling:fabric", args=[code]),
                        repeat=args.repeat, goal_ms=GOAL_MS, extra=f"{links:,} links")
            # The first compute view: plane 0 of the dual-plane 1,024 fabric, the shared planes of the XDR 72.
            plane = fabric_views(user=bench.manager, project=bench.project, network="compute")[0].plane_param
            svg = reverse("cabling:fabric-svg", args=[code]) + f"?network=compute&plane={plane}"
            measure_page(f"fabric view (SVG, compute plane {plane})", servers, client, svg, repeat=args.repeat,
                        goal_ms=GOAL_MS)


if __name__ == "__main__":
    main()
