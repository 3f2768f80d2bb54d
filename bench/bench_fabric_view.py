"""Time, queries and peak memory of the fabric view (issue 11: "fabric view (HTML / SVG): at most 300 ms")
at 72 and 1,024 servers: the page with every network and plane, and one plane's SVG download.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_fabric_view.py \
        [--sizes 72,1024] [--repeat N]

On the kept reference projects of bench/harness.py (read only: nothing is written). The pages are fetched
through Django's test client as the project's manager (not staff: the membership joins are in every
query). The view reads every link of the fabric in one query (cabling.selectors.fabric_link_rows) and folds
it in Python (cabling.exports.fabric_svg.fabric_views_of), so its query count is the same at both sizes.
Times on a shared 2-core machine are upper bounds.

Also home of `measure_get`, which the page benches of issue 11 share (bench_api_ports, bench_leaf_page):
harness.measure counts the queries of one more call, but a request's request_started signal empties the
connection's query log first, so a page's queries are counted here instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import arguments, bench_project, client_for, measure, report  # noqa: E402

GOAL_MS = 300


def allow_test_client() -> None:
    """harness.client_for's test client calls itself "testserver", which the settings do not allow."""
    from django.conf import settings

    if "testserver" not in settings.ALLOWED_HOSTS:
        settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "testserver"]


def measure_get(row: str, servers: int, client, url: str, *, repeat: int, goal_ms: float | None,
                extra: str = "") -> None:
    """GET `url` with harness.measure, count its queries, and print the line with the answer's size."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    sizes: list[int] = []

    def step():
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code, response.content[:200])
        sizes.append(len(response.content))

    figures = measure(step, repeat=repeat)
    with CaptureQueriesContext(connection) as captured:
        step()
    figures.queries = len(captured.captured_queries)
    figures.extra = f"{sizes[-1] / 1000:8.1f} KB" + (f"  {extra}" if extra else "")
    report(row, servers, figures, goal_ms=goal_ms)


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    for servers in args.sizes:
        with bench_project(servers) as bench:
            from django.urls import reverse

            from cabling.exports.fabric_svg import fabric_views
            from cabling.models import CableEnd

            allow_test_client()
            client = client_for(bench.manager)
            code = bench.project.code
            links = CableEnd.objects.filter(cable__project=bench.project, side="B").count()
            measure_get("fabric view (HTML)", servers, client, reverse("cabling:fabric", args=[code]),
                        repeat=args.repeat, goal_ms=GOAL_MS, extra=f"{links:,} links")
            # The first compute view: plane 0 of the dual-plane 1,024 fabric, the shared planes of the XDR 72.
            plane = fabric_views(user=bench.manager, project=bench.project, network="compute")[0].plane_param
            svg = reverse("cabling:fabric-svg", args=[code]) + f"?network=compute&plane={plane}"
            measure_get(f"fabric view (SVG, compute plane {plane})", servers, client, svg, repeat=args.repeat,
                        goal_ms=GOAL_MS)


if __name__ == "__main__":
    main()
