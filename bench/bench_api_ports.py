"""Time, queries and peak memory of the API's ports list (issue 11: "API ports list: at most 150 ms at any
page depth") at 72 and 1,024 servers: the first page, a page 90% deep in the list by cursor, and a first
page of 500 rows (the largest `page_size`); the cables list beside it, for comparison.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bringup .venv/bin/python bench/bench_api_ports.py \
        [--sizes 72,1024] [--repeat N]

On the kept reference projects of bench/harness.py (read only). Fetched through Django's test client as
the project's manager (not staff: the membership joins are in every query). The deep page's cursor is the
one a client holds after following `next` that far (DRF writes the position of the last row seen, here a
port id, base64-encoded); making it directly saves walking a thousand pages. Before the cursor
(core.api.pagination.BigListPagination) the list was numbered pages of a fixed 100 rows: an OFFSET that
grew with the depth, and a COUNT of every port on every page. Times on a shared 2-core machine are upper
bounds.
"""

from __future__ import annotations

import sys
from base64 import b64encode
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from harness import arguments, bench_project, client_for, measure_page  # noqa: E402

GOAL_MS = 150


def cursor_after(position: int) -> str:
    """The cursor of a `next` link whose last row seen has this id."""
    return b64encode(f"p={position}".encode()).decode()


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    for servers in args.sizes:
        with bench_project(servers) as bench:
            from inventory.models import Port

            client = client_for(bench.manager)
            ids = Port.objects.filter(device__project=bench.project).order_by("id").values_list("id", flat=True)
            total = ids.count()
            deep = ids[int(total * 0.9)]
            measure_page("API ports list, first page", servers, client, "/api/ports/", repeat=args.repeat,
                        goal_ms=GOAL_MS, extra=f"{total:,} ports")
            measure_page("API ports list, 90% deep by cursor", servers, client,
                        f"/api/ports/?cursor={cursor_after(deep)}", repeat=args.repeat, goal_ms=GOAL_MS)
            measure_page("API ports list, page_size=500", servers, client, "/api/ports/?page_size=500",
                        repeat=args.repeat, goal_ms=GOAL_MS)
            measure_page("API cables list, first page", servers, client, "/api/cables/", repeat=args.repeat,
                        goal_ms=None)


if __name__ == "__main__":
    main()
