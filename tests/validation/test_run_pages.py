"""A run's page at scale (issue 11): the link-health BER chart as ports per decade ("< 1e-20" for the ports
that counted no errors) linking to the filtered results, the results paginated and filtered (a bounded page
whatever the query string says), the end of the log, and a large bandwidth matrix drawn as an image by its
own view with the worst pairs listed. Same queries for a small and a larger run; members only.

The runs are made in bulk (the helpers first, also used by the browser test): rows written directly,
nothing executes, so a run of thousands of results takes a moment and does not depend on the simulated
cluster."""

from __future__ import annotations

import io
import re
from xml.etree import ElementTree

import pytest
from django.urls import reverse
from django.utils import timezone
from PIL import Image
from reportlab.lib import colors

from core.choices import JobStatus
from inventory.choices import DeviceRole
from inventory.models import Device
from tests.factories import gpu_server_model
from tests.support import count_queries
from validation import services
from validation.charts import FAIL_COLOUR, PASS_COLOUR, WARN_COLOUR
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun
from validation.services.progress import count_finished

NO_ERRORS = 1.5e-254  # what mlxlink prints for a port that counted no errors
SVG = "{http://www.w3.org/2000/svg}"
XLINK = "{http://www.w3.org/1999/xlink}"


def bare_nodes(project, count: int, *, prefix: str = "gpu") -> list[Device]:
    """`count` GPU nodes without ports (a run's results need only the devices), in one statement."""
    model = gpu_server_model(nics=1, part_number="TEST-RUN-PAGES", bmc=False, model_name="run pages")
    Device.objects.bulk_create(
        Device(project=project, hardware_model=model, name=f"{prefix}-{i:04d}", role=DeviceRole.GPU_NODE)
        for i in range(1, count + 1)
    )
    return list(Device.objects.filter(project=project, name__startswith=f"{prefix}-").order_by("name"))


def finished_run(project, kind: str, total: int, log: str = "") -> CheckRun:
    now = timezone.now()
    return CheckRun.objects.create(project=project, kind=kind, runner=RunnerKind.SIMULATED, status=JobStatus.DONE,
                                   progress_total=total, progress_done=total, started_at=now, finished_at=now,
                                   log=log)


def link_run_of(project, node: Device, bers: list[float | None], *, log: str = "") -> CheckRun:
    """A finished link-health run with one result per BER in `bers` (None: no reading), judged by the
    default profile's levels (warn 1e-13, fail 1e-12)."""
    run = finished_run(project, CheckKind.LINK_HEALTH, len(bers), log=log)
    now = timezone.now()

    def verdict(ber):
        if ber is None:
            return Verdict.ERROR
        return Verdict.FAIL if ber > 1e-12 else Verdict.WARN if ber > 1e-13 else Verdict.PASS

    CheckResult.objects.bulk_create(
        (CheckResult(run=run, target_key=f"{node.name}:p{n}", host=node.name, device=node, status=ResultStatus.DONE,
                     finished_at=now, verdict=verdict(ber),
                     metrics={"counters": {"effective_ber": ber, "raw_ber": 1e-12, "symbol_errors": 0}},
                     reasons=[{"level": "fail", "text": f"effective BER {ber}"}] if verdict(ber) == Verdict.FAIL
                     else [])
         for n, ber in enumerate(bers)),
        batch_size=2000,
    )
    services.check_run_summary_store(run=run)  # as the engine closes a run
    return run


def matrix_run_of(project, nodes: list[Device], *, slow: Device | None = None, failing: tuple = ()) -> CheckRun:
    """A finished bandwidth-matrix run: every pair of `nodes` once, about 390 Gb/s on the slowest rail; pairs
    with `slow` warn at 200 Gb/s; the pairs of names in `failing` fail at 12 Gb/s."""
    pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]]
    run = finished_run(project, CheckKind.BANDWIDTH_MATRIX, len(pairs))
    now = timezone.now()
    rows = []
    for n, (a, b) in enumerate(pairs):
        if (a.name, b.name) in failing:
            figure, verdict = 12.0, Verdict.FAIL
        elif slow is not None and slow in (a, b):
            figure, verdict = 200.0, Verdict.WARN
        else:
            figure, verdict = 385.0 + n % 11, Verdict.PASS
        rows.append(CheckResult(run=run, target_key=f"{a.name}~{b.name}", host=a.name, device=a, peer_device=b,
                                status=ResultStatus.DONE, finished_at=now, verdict=verdict,
                                metrics={"min_gbps": figure, "mean_gbps": figure + 2, "rails": []}))
    CheckResult.objects.bulk_create(rows, batch_size=2000)
    services.check_run_summary_store(run=run)  # as the engine closes a run
    return run


# ---------------------------------------------------------------------------------------------------------
# The tests

pytestmark = pytest.mark.django_db


def url(name, project, *args):
    return reverse(f"validation:{name}", args=[project.code, *args])


def page_of(client, path: str, **query) -> str:
    response = client.get(path, query)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def the_svg(page: str, css_class: str) -> ElementTree.Element:
    (svg,) = re.findall(rf'<svg [^>]*class="chart {css_class}".*?</svg>', page, re.S)
    return ElementTree.fromstring(svg)


def bars_with_links(svg: ElementTree.Element) -> dict[str, tuple[int, str]]:
    """bucket label -> (count, link) of every bar (reportlab wraps a linked mark in <a xlink:href>)."""
    found = {}
    for link in svg.iter(f"{SVG}a"):
        for bar in link.iter(f"{SVG}rect"):
            if bar.get("class") == "bar":
                found[bar.get("data-bucket")] = (int(bar.get("data-count")), link.get(f"{XLINK}href"))
    return found


def listed(page: str) -> list[str]:
    return re.findall(r'<tr class="result [^"]*"[^>]*data-target="([^"]+)"', page)


@pytest.fixture
def node(project):
    (node,) = bare_nodes(project, 1, prefix="node")
    return node


@pytest.fixture
def mixed_run(project, node):
    """10 ports without errors, 3 warning (2e-13), 2 failing (3.2e-9), 1 without a reading."""
    return link_run_of(project, node, [NO_ERRORS] * 10 + [2e-13] * 3 + [3.2e-9] * 2 + [None])


# -- the BER chart --------------------------------------------------------------------------------------------


def test_ber_chart_counts_ports_per_decade_with_the_ports_without_errors_in_one_bucket(
    client_for, customer, project, mixed_run
):
    page = page_of(client_for(customer), url("run-detail", project, mixed_run.pk))
    chart = the_svg(page, "ber-decades")
    bars = bars_with_links(chart)
    assert bars == {
        "< 1e-20": (10, "?ber=below#results"),
        "1e-13": (3, "?ber=-13#results"),
        "1e-9": (2, "?ber=-9#results"),
    }
    texts = [t.text for t in chart.iter(f"{SVG}text")]
    assert "< 1e-20" in texts and not any("e-254" in (t or "") for t in texts)
    colours = {b.get("data-bucket"): b.get("style") for b in chart.iter(f"{SVG}rect") if b.get("class") == "bar"}
    assert _rgb(FAIL_COLOUR) in colours["1e-9"] and _rgb(PASS_COLOUR) in colours["< 1e-20"]
    assert {t.get("data-level") for t in chart.iter(f"{SVG}rect") if t.get("class") == "threshold"} == {"warn", "fail"}
    # The table beside it: the same counts, the port without a reading too.
    table = dict(re.findall(r'<tr class="verdict-row-\w+" data-bucket="([^"]+)" data-count="(\d+)">', page))
    assert table == {"below": "10", "-13": "3", "-9": "2", "none": "1"}


def _rgb(hex_colour: str) -> str:
    """A colour the way reportlab writes it into SVG styles."""
    c = colors.HexColor(hex_colour)
    return "rgb({:d}%,{:d}%,{:d}%)".format(*(int(v * 100) for v in (c.red, c.green, c.blue)))


@pytest.mark.parametrize(("bucket", "count", "verdict"), [
    ("below", 10, Verdict.PASS), ("-13", 3, Verdict.WARN), ("-9", 2, Verdict.FAIL), ("none", 1, Verdict.ERROR),
    ("-5", 0, None),
])
def test_a_bars_link_lists_the_ports_of_its_decade(client_for, technician, project, mixed_run, bucket, count,
                                                  verdict):
    page = page_of(client_for(technician), url("run-detail", project, mixed_run.pk), ber=bucket)
    rows = re.findall(r'<tr class="result [^"]*"[^>]*data-verdict="(\w*)"', page)
    assert len(rows) == count and set(rows) <= {verdict}
    assert 'name="ber"' in page  # the filter the chart set is shown, so it can be cleared


def test_a_run_of_thousands_of_ports_draws_one_bar_per_decade_not_per_port(client_for, manager, project, node):
    bers = [NO_ERRORS] * 2400 + [(1 + n % 9) * 10.0 ** -(14 - n % 4) for n in range(100)] + [3.2e-9] * 3
    run = link_run_of(project, node, bers)
    page = page_of(client_for(manager), url("run-detail", project, run.pk))
    chart = the_svg(page, "ber-decades")
    bars = bars_with_links(chart)
    assert sum(count for count, _ in bars.values()) == len(bers) and len(bars) <= 8
    assert bars["< 1e-20"][0] == 2400 and bars["1e-9"][0] == 3
    assert len(listed(page)) == 50  # one page of results
    assert len(page.encode()) < 300_000


def test_a_text_ber_is_no_reading_in_the_chart_and_in_its_filter(client_for, technician, project, mixed_run):
    """An effective BER stored as text ("N/A", from an upload or an older parser) is "no reading" in the chart
    and in `?ber=` alike: never a cast error (PostgreSQL: a 500), never a silent 0.0 (SQLite: "below")."""
    now = timezone.now()
    CheckResult.objects.bulk_create(
        CheckResult(run=mixed_run, target_key=f"node-0001:text{n}", host="node-0001", status=ResultStatus.DONE,
                    finished_at=now, verdict=Verdict.ERROR, metrics={"counters": {"effective_ber": text}})
        for n, text in enumerate(["N/A", "1e-5", ""])
    )
    client = client_for(technician)
    page = page_of(client, url("run-detail", project, mixed_run.pk))
    table = dict(re.findall(r'<tr class="verdict-row-\w+" data-bucket="([^"]+)" data-count="(\d+)">', page))
    assert table == {"below": "10", "-13": "3", "-9": "2", "none": "4"}
    for bucket, count in table.items():
        assert len(listed(page_of(client, url("run-detail", project, mixed_run.pk), ber=bucket))) == int(count)


def test_a_result_not_measured_yet_is_in_no_bucket_of_the_chart_or_the_filter(client_for, manager, project,
                                                                              mixed_run):
    CheckResult.objects.create(run=mixed_run, target_key="node-0001:waiting", status=ResultStatus.PENDING)
    page = page_of(client_for(manager), url("run-detail", project, mixed_run.pk))
    assert 'data-bucket="none" data-count="1"' in page
    assert listed(page_of(client_for(manager), url("run-detail", project, mixed_run.pk), ber="none")) == [
        "node-0001:p15"]


# -- the results: worst first, paginated, filtered --------------------------------------------------------------


def test_results_come_worst_first_in_bounded_pages(client_for, manager, project, mixed_run):
    client = client_for(manager)
    first = page_of(client, url("run-detail", project, mixed_run.pk), page_size=10)
    verdicts = re.findall(r'<tr class="result [^"]*"[^>]*data-verdict="(\w*)"', first)
    assert verdicts == ["fail", "fail", "error", "warn", "warn", "warn", "pass", "pass", "pass", "pass"]
    assert "page 1 of 2" in first
    second = page_of(client, url("run-detail", project, mixed_run.pk), page_size=10, page=2)
    assert len(listed(second)) == 6 and not set(listed(first)) & set(listed(second))
    failures = page_of(client, url("run-detail", project, mixed_run.pk), verdict="fail")
    assert len(listed(failures)) == 2 and 'href="?verdict=fail#results">failed (2)' in failures


@pytest.mark.parametrize("query", [
    {"page": "-1"}, {"page": str(10**30)}, {"page": "abc"}, {"page": "9" * 5000}, {"page_size": "100000"},
    {"page_size": "-5"}, {"page_size": "1e9"}, {"verdict": "bogus"}, {"ber": "-400"}, {"ber": "1e-5"},
    {"pair": "no pair here"}, {"pair": "~"}, {"pair": "x" * 300}, {"plane": str(10**30)},
])
def test_hostile_query_strings_get_a_bounded_page_never_an_error(client_for, manager, project, node, query):
    run = link_run_of(project, node, [NO_ERRORS] * 230 + [3.2e-9] * 2)
    response = client_for(manager).get(url("run-detail", project, run.pk), query)
    assert response.status_code == 200
    page = response.content.decode()
    assert len(listed(page)) <= 200
    if "page" in query:
        number = 1 if query["page"] in ("-1", "abc") else 5  # 232 results in pages of 50: clamped to the last
        assert f"page {number} of 5" in page
    if "page_size" in query:
        assert len(listed(page)) in (10, 50, 200)  # brought within [10, 200], or the default for "1e9"
    if set(query) & {"verdict", "ber", "plane"} or query.get("pair") == "x" * 300:
        assert "Some filters were ignored" in page


def test_a_pairs_link_lists_that_pair_whichever_way_round(client_for, customer, project):
    nodes = bare_nodes(project, 4)
    run = matrix_run_of(project, nodes, failing=(("gpu-0002", "gpu-0004"),))
    client = client_for(customer)
    for pair in ("gpu-0002~gpu-0004", "gpu-0004~gpu-0002"):
        assert listed(page_of(client, url("run-detail", project, run.pk), pair=pair)) == ["gpu-0002~gpu-0004"]


def test_the_page_costs_the_same_queries_for_a_small_and_a_larger_run(client_for, manager, project, node,
                                                                     django_assert_num_queries):
    client = client_for(manager)
    small = link_run_of(project, node, [NO_ERRORS] * 15 + [3.2e-9])
    large = link_run_of(project, node, [NO_ERRORS] * 1500 + [2e-13] * 40 + [3.2e-9] * 60 + [None] * 3)
    page_of(client, url("run-detail", project, small.pk))  # warm: the session, the content types
    counted = count_queries(lambda: page_of(client, url("run-detail", project, small.pk)))
    with django_assert_num_queries(counted):
        page_of(client, url("run-detail", project, large.pk))
    # A filtered list counts its rows (one query more than the stored count of the whole run), as few
    # for the larger run.
    filtered = count_queries(lambda: page_of(client, url("run-detail", project, small.pk), ber="below", page=3))
    assert filtered == counted + 1
    with django_assert_num_queries(filtered):
        page_of(client, url("run-detail", project, large.pk), ber="below", page=3)


# -- the log -----------------------------------------------------------------------------------------------------


def test_the_page_shows_the_end_of_a_long_log_and_links_the_whole_of_it(client_for, customer, project, node):
    log = "\n".join(f"line {n}" for n in range(1, 1001))
    run = link_run_of(project, node, [NO_ERRORS], log=log)
    client = client_for(customer)
    page = page_of(client, url("run-detail", project, run.pk))
    shown = re.search(r'<pre class="log">(.*?)</pre>', page, re.S).group(1).splitlines()
    assert shown[0] == "line 801" and shown[-1] == "line 1000"
    assert "800 earlier lines" in page and url("run-log", project, run.pk) in page
    whole = client.get(url("run-log", project, run.pk))
    assert whole.status_code == 200 and whole["Content-Type"].startswith("text/plain")
    assert whole.content.decode() == log


# -- the bandwidth matrix --------------------------------------------------------------------------------------


def test_a_small_matrix_keeps_its_svg_with_each_cell_linking_to_its_result(client_for, manager, project):
    nodes = bare_nodes(project, 5)
    run = matrix_run_of(project, nodes, failing=(("gpu-0001", "gpu-0003"),))
    page = page_of(client_for(manager), url("run-detail", project, run.pk))
    chart = the_svg(page, "heatmap")
    links = {rect.get("data-row") + "~" + rect.get("data-col"): link.get(f"{XLINK}href")
             for link in chart.iter(f"{SVG}a") for rect in link.iter(f"{SVG}rect")}
    assert len(links) == 10
    failing = run.results.get(target_key="gpu-0001~gpu-0003")
    assert links["gpu-0003~gpu-0001"] == url("result-detail", project, failing.pk)
    assert "matrix.png" not in page


@pytest.fixture
def large_matrix(project):
    """50 nodes, 1,225 pairs (beyond the SVG's limit): gpu-0007's pairs slow, one pair failing."""
    nodes = bare_nodes(project, 50)
    return matrix_run_of(project, nodes, slow=nodes[6], failing=(("gpu-0010", "gpu-0042"),))


def test_a_large_matrix_page_shows_an_image_its_scale_and_the_worst_pairs_first(client_for, customer, project,
                                                                               large_matrix):
    client = client_for(customer)
    page = page_of(client, url("run-detail", project, large_matrix.pk))
    assert 'class="chart heatmap"' not in page  # no SVG cell per pair
    image = url("run-matrix-image", project, large_matrix.pk)
    assert f'<img src="{image}" id="matrix-image"' in page
    assert f'data-nodes-url="{url("run-matrix-nodes", project, large_matrix.pk)}"' in page
    assert "12 to 395 Gb/s" in page  # the scale: the slowest and the fastest pair
    # The worst pairs are the first page of the results: the failure, then gpu-0007's slow pairs.
    first = listed(page)
    assert first[0] == "gpu-0010~gpu-0042" and all("gpu-0007" in pair for pair in first[1:50])
    failing = large_matrix.results.get(target_key="gpu-0010~gpu-0042")
    assert url("result-detail", project, failing.pk) in page
    assert "validation/matrix.js" in page
    nodes = client.get(url("run-matrix-nodes", project, large_matrix.pk)).json()["nodes"]
    assert nodes[:2] == ["gpu-0001", "gpu-0002"] and len(nodes) == 50


def test_a_large_matrixs_passing_pairs_come_slowest_first(client_for, manager, project):
    nodes = bare_nodes(project, 50)
    run = matrix_run_of(project, nodes)
    page = page_of(client_for(manager), url("run-detail", project, run.pk), page_size=10)
    figures = [float(f) for f in re.findall(r'<td class="figure">slowest rail ([\d.]+)', page)]
    assert figures == sorted(figures) and figures[0] == 385.0


def test_a_pair_whose_figure_is_text_is_saved_and_listed_as_a_pair_without_a_figure(client_for, manager,
                                                                                     project, large_matrix):
    """The worst-pairs index reads every result's min_gbps as it is written: a text figure ("n/a") is no
    figure (PostgreSQL would refuse to cast it, failing the write and the engine's whole batch)."""
    pair = large_matrix.results.get(target_key="gpu-0001~gpu-0002")
    pair.metrics = {"min_gbps": "n/a", "rails": []}
    pair.verdict = Verdict.FAIL
    pair.save()  # no error: the index holds NULL for it
    CheckResult.objects.create(run=large_matrix, target_key="gpu-0001~gpu-0003x", device=pair.device,
                               peer_device=pair.peer_device, status=ResultStatus.DONE, verdict=Verdict.PASS,
                               metrics={"min_gbps": "fast"})
    services.check_run_summary_store(run=large_matrix)
    large_matrix.refresh_from_db()
    assert (large_matrix.summary_figure_lo, large_matrix.summary_figure_hi) == (12.0, 395.0)  # text: no figure
    client = client_for(manager)
    page = page_of(client, url("run-detail", project, large_matrix.pk))
    # Failures first, the one without a figure before the one with 12 Gb/s, as the index orders them.
    assert listed(page)[:2] == ["gpu-0001~gpu-0002", "gpu-0010~gpu-0042"]
    assert "12 to 395 Gb/s" in page
    assert client.get(url("run-matrix-image", project, large_matrix.pk)).status_code == 200


def test_the_matrix_image_is_a_png_with_a_square_per_pair_in_its_levels_colour(client_for, customer, project,
                                                                              large_matrix):
    response = client_for(customer).get(url("run-matrix-image", project, large_matrix.pk))
    assert response.status_code == 200 and response["Content-Type"] == "image/png"
    assert "private" in response["Cache-Control"] and response["ETag"]
    assert len(response.content) < 200_000
    image = Image.open(io.BytesIO(response.content)).convert("RGB")
    side = 1024 // 50
    assert image.size == (50 * side, 50 * side)

    def colour(row: int, col: int) -> str:
        return "#{:02x}{:02x}{:02x}".format(*image.getpixel((col * side + side // 2, row * side + side // 2)))

    assert colour(9, 41) == colour(41, 9) == FAIL_COLOUR.lower()  # gpu-0010 ~ gpu-0042, both triangles
    assert colour(6, 20) == WARN_COLOUR.lower()  # gpu-0007's pairs are slow
    assert colour(0, 0) == "#ffffff"  # the diagonal
    assert colour(1, 2) not in (FAIL_COLOUR.lower(), WARN_COLOUR.lower(), "#ffffff")
    again = client_for(customer).get(url("run-matrix-image", project, large_matrix.pk),
                                     HTTP_IF_NONE_MATCH=response["ETag"])
    assert again.status_code == 304


@pytest.mark.parametrize("name", ["run-matrix-image", "run-matrix-nodes"])
def test_a_matrix_image_and_its_nodes_are_kept_only_while_their_stored_figures_stand(client_for, customer,
                                                                                      project, name):
    """Kept a day under an ETag of the stored figures (their time, the results counted); a 304 says so again
    (ETag and Cache-Control). Without stored figures (a result recorded after a cancel clears them: the
    matrix changed) nothing is kept and an old ETag gets the new image; a new summary is a new ETag."""
    run = matrix_run_of(project, bare_nodes(project, 4))
    client = client_for(customer)
    address = url(name, project, run.pk)
    first = client.get(address)
    assert first.status_code == 200 and first["Cache-Control"] == "private, max-age=86400"
    etag = first["ETag"]
    again = client.get(address, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304
    assert (again["ETag"], again["Cache-Control"]) == (etag, "private, max-age=86400")

    # A result recorded after the run closed (a cancelled run's last target) counts and clears the figures.
    CheckRun.objects.filter(pk=run.pk).update(progress_total=run.progress_total + 1)
    count_finished(run.pk, 1)
    stale = client.get(address, HTTP_IF_NONE_MATCH=etag)
    assert stale.status_code == 200 and stale["Cache-Control"] == "no-store" and not stale.has_header("ETag")

    run.refresh_from_db()
    services.check_run_summary_store(run=run)
    renewed = client.get(address, HTTP_IF_NONE_MATCH=etag)
    assert renewed.status_code == 200 and renewed["ETag"] != etag
    assert renewed["Cache-Control"] == "private, max-age=86400"


def test_a_running_matrix_is_never_kept(client_for, manager, project):
    run = matrix_run_of(project, bare_nodes(project, 4))
    CheckRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, summarised_at=None)
    response = client_for(manager).get(url("run-matrix-image", project, run.pk))
    assert response.status_code == 200 and response["Cache-Control"] == "no-store"
    assert not response.has_header("ETag")


def test_the_matrix_image_is_the_projects_members_only(client, client_for, outsider, project, other_project,
                                                      large_matrix, mixed_run):
    image = url("run-matrix-image", project, large_matrix.pk)
    assert client.get(image).status_code == 302  # anonymous: to the login page
    assert client_for(outsider).get(image).status_code == 404  # a customer of another project
    assert client_for(outsider).get(url("run-log", project, large_matrix.pk)).status_code == 404
    assert client_for(outsider).get(url("run-matrix-nodes", project, large_matrix.pk)).status_code == 404
    assert client_for(outsider).get(url("run-detail", project, large_matrix.pk)).status_code == 404
    # The other project's own address for the run does not lead to it either.
    assert client_for(outsider).get(url("run-matrix-image", other_project, large_matrix.pk)).status_code == 404


def test_only_a_matrix_run_has_a_matrix_image(client_for, manager, project, mixed_run):
    assert client_for(manager).get(url("run-matrix-image", project, mixed_run.pk)).status_code == 404
    assert client_for(manager).get(url("run-matrix-nodes", project, mixed_run.pk)).status_code == 404


def test_a_large_matrix_page_costs_the_same_queries_as_a_smaller_large_one(client_for, manager, project,
                                                                          django_assert_num_queries):
    client = client_for(manager)
    first = matrix_run_of(project, bare_nodes(project, 50, prefix="a"))
    second = matrix_run_of(project, bare_nodes(project, 70, prefix="b"))
    page_of(client, url("run-detail", project, first.pk))
    counted = count_queries(lambda: page_of(client, url("run-detail", project, first.pk)))
    with django_assert_num_queries(counted):
        page_of(client, url("run-detail", project, second.pk))
