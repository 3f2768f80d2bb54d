"""The acceptance report's validation sections: written with the real snapshot writer and read back, on
results made the way the app makes them (simulated runs through the service, real tool outputs from
tests/fixtures uploaded through the upload service, a real topology comparison); every figure equal to what
the database holds, failures first, BER "no errors" kept as mlxlink's number, an empty project saying each
check was not run, a query count that does not grow with the project, and the chart drawers drawing each
section's chart data with text of 9 pt at least."""

from __future__ import annotations

import io
import json
import math
import statistics
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import call_command
from reportlab.graphics import renderPDF
from reportlab.graphics.shapes import Drawing, Group, String

from core.choices import JobStatus
from projects.reports import Chart, Facts, Paragraph, TableRecord, report_registry
from tests.report_support import sections_written
from tests.support import count_queries
from validation import charts, soak, tasks
from validation.choices import CheckKind, LinkState, ResultStatus, Verdict
from validation.models import CheckResult, CheckRun, SoakSample, TopologyComparison
from validation.report_sections import MATRIX_BLOCKS, MatrixGrid
from validation.uploads.services import tool_upload_create, tool_upload_process

from .conftest import FIXTURES, fixture_text, make_gpu_nodes
from .test_topology_fixtures import cumulus_fabric
from .topology_support import sb7700_fabric

pytestmark = pytest.mark.django_db

OURS = ("topology_comparison", "link_health", "bandwidth", "nccl", "soak")
SEVERITY = {"fail": 0, "warn": 1, "error": 2, "pass": 3}
BER_ZERO = 1.5e-254  # what mlxlink prints for a port that counted no errors
T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


# -- writing and reading the sections -----------------------------------------------------------------------


def written(project, keys=OURS) -> dict[str, list]:
    return sections_written(project, keys)


def table(blocks, key: str) -> tuple[TableRecord, list[dict]]:
    return next(b for b in blocks if isinstance(b, tuple) and b[0].key == key)


def facts(blocks, title_start: str) -> dict:
    return dict(next(b for b in blocks if isinstance(b, Facts) and b.title.startswith(title_start)).items)


def charts_of(blocks, kind: str) -> list[Chart]:
    return [b for b in blocks if isinstance(b, Chart) and b.kind == kind]


def paragraphs(blocks) -> list[str]:
    return [b.text for b in blocks if isinstance(b, Paragraph)]


def latest_per_port(project, kind: str) -> dict[str, CheckResult]:
    """The newest finished result of each port, computed the slow way: what the section must show."""
    newest = {}
    results = CheckResult.objects.filter(run__project=project, run__kind=kind, port__isnull=False,
                                         status__in=[ResultStatus.DONE, ResultStatus.ERROR])
    for result in results.select_related("device", "port", "cable"):
        label = f"{result.device.name}:{result.port.name}"
        if label not in newest or (result.finished_at, result.pk) > (newest[label].finished_at, newest[label].pk):
            newest[label] = result
    return newest


def in_severity_order(rows) -> bool:
    ranks = [SEVERITY[row["verdict"]] for row in rows]
    return ranks == sorted(ranks)


@pytest.fixture
def upload(project, technician):
    """A real tool output uploaded for `host` through the upload service and parsed (as its task does)."""

    def send(name: str, host: str):
        made = tool_upload_create(project=project, user=technician, host=host, data=fixture_text(name).encode(),
                                  filename=name)
        done = tool_upload_process(upload_id=made.pk)
        assert done.status == JobStatus.DONE, done.errors
        return done

    return send


# -- an empty project ---------------------------------------------------------------------------------------


def test_a_project_without_results_says_each_check_was_not_run(project):
    sections = written(project)
    assert list(sections) == list(OURS)  # in report order: 45, 50, 60, 70, 80
    for key in ("topology_comparison", "link_health", "nccl", "soak"):
        [text] = paragraphs(sections[key])
        assert text.startswith("No ") and "not" in text and len(sections[key]) == 1
    cpu, gpu, matrix = paragraphs(sections["bandwidth"])
    assert cpu.startswith("No CPU-path bandwidth results yet") and gpu.startswith("No GPU RDMA bandwidth results")
    assert matrix.startswith("No bandwidth matrix yet")


# -- link health --------------------------------------------------------------------------------------------


@pytest.fixture
def link_health_project(project, start, upload):
    """Three nodes: two simulated link-health runs (the seed's faults), then gpu-002's real mlxlink loop
    (an HDR cluster's output, judged against this XDR plan: it fails) uploaded after them."""
    make_gpu_nodes(project, 3)
    start(CheckKind.LINK_HEALTH)
    start(CheckKind.LINK_HEALTH, seed=7)
    upload("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt", "gpu-002")
    return project


def test_link_health_shows_the_latest_reading_of_each_port_with_the_databases_figures(link_health_project):
    project = link_health_project
    blocks = written(project, ["link_health"])["link_health"]
    expected = latest_per_port(project, CheckKind.LINK_HEALTH)
    record, rows = table(blocks, "link_health")
    assert record.row_count == len(rows) == len(expected) == 24 and record.verdict_column == "verdict"
    assert {row["port"] for row in rows} == set(expected)
    uploaded = CheckRun.objects.get(project=project, runner="upload")
    assert all(expected[f"gpu-002:ib{i}"].run_id == uploaded.pk for i in range(8))  # the newest across runs
    for row in rows:
        result = expected[row["port"]]
        metrics, counters = result.metrics, result.metrics["counters"]
        assert row["verdict"] == result.verdict
        assert row["cable"] == (result.cable.label if result.cable else None)
        assert (row["speed"], row["width"], row["fec"]) == (metrics["speed"], metrics["width"], metrics["fec"])
        assert row["state"] == f"{metrics['state']} ({metrics['physical_state']})"
        assert (row["effective_ber"], row["raw_ber"]) == (counters["effective_ber"], counters["raw_ber"])
        assert (row["symbol_errors"], row["effective_errors"], row["link_down"], row["recovery"]) == (
            counters["symbol_errors"], counters["effective_physical_errors"], counters["link_down"],
            counters["link_error_recovery"])
        assert row["checked"] == result.finished_at.isoformat()
        if result.verdict != Verdict.PASS:
            assert row["reason"] and row["reason"] in [r["text"] for r in result.reasons]
    assert in_severity_order(rows)
    assert rows[0]["verdict"] == Verdict.FAIL and rows[-1]["verdict"] == Verdict.PASS
    # HDR at 2x on a port planned XDR at 4x: the uploaded loop's reasons, read from the real output
    hdr = next(row for row in rows if row["port"] == "gpu-002:ib0")
    assert (hdr["speed"], hdr["width"], hdr["verdict"]) == ("IB-HDR", "2x", Verdict.FAIL)


def test_a_port_without_errors_keeps_mlxlinks_number_in_the_snapshot(link_health_project):
    blocks = written(link_health_project, ["link_health"])["link_health"]
    _, rows = table(blocks, "link_health")
    clean = [row for row in rows if row["effective_ber"] == BER_ZERO]
    assert clean and all(row["verdict"] == Verdict.PASS for row in clean[:1])
    assert isinstance(clean[0]["effective_ber"], float)  # the number, not text: the renderers print "< 1e-20"


def test_link_health_optics_carry_dom_min_max_and_every_lane(link_health_project):
    blocks = written(link_health_project, ["link_health"])["link_health"]
    expected = latest_per_port(link_health_project, CheckKind.LINK_HEALTH)
    record, rows = table(blocks, "link_optics")
    assert record.row_count == len(rows) == 24 and in_severity_order(rows)
    checked = 0
    for row in rows:
        module = expected[row["port"]].metrics.get("module") or {}
        if module.get("is_passive_copper") or not module.get("rx_power_dbm"):
            assert row["rx_min"] is None and row["temperature"] is None
            continue
        rx, tx = module["rx_power_dbm"], module["tx_power_dbm"]
        assert (row["rx_min"], row["rx_max"], row["tx_min"], row["tx_max"]) == (min(rx), max(rx), min(tx), max(tx))
        assert row["rx_lanes"] == ", ".join(charts.fmt_num(v, 2) for v in rx)
        assert row["temperature"] == module["temperature_c"]
        assert row["voltage"] == pytest.approx(module["voltage_mv"] / 1000)
        assert row["serial"] == module["serial"]
        checked += 1
    assert checked >= 8


def test_link_health_facts_and_the_ber_histogram_count_every_port_once(link_health_project):
    blocks = written(link_health_project, ["link_health"])["link_health"]
    expected = latest_per_port(link_health_project, CheckKind.LINK_HEALTH).values()
    ports = facts(blocks, "Ports")
    for verdict in Verdict:
        assert ports[verdict.label] == sum(1 for r in expected if r.verdict == verdict)
    assert ports["Ports read"] == 24 and ports["Runs and uploads read"] == len({r.run_id for r in expected})
    with_ber = [r.metrics["counters"]["effective_ber"] for r in expected
                if r.metrics.get("counters", {}).get("effective_ber") is not None]
    assert ports["Ports without a BER reading"] == 24 - len(with_ber)
    assert ports["Ports without errors (effective BER < 1e-20)"] == sum(1 for v in with_ber if v < 1e-20)
    [ber] = charts_of(blocks, "validation.ber_decades")
    effective = ber.data["series"][0]
    assert effective["name"] == "effective BER" and effective["below_floor"] == sum(1 for v in with_ber if v < 1e-20)
    assert effective["below_floor"] + sum(effective["counts"]) == len(with_ber)
    assert ber.data["decades"][0] == -20 and len(ber.data["decades"]) <= 20  # decades, not a bar per port
    for value in with_ber:
        if value >= 1e-20:
            assert effective["counts"][ber.data["decades"].index(math.floor(math.log10(value) + 1e-12))] >= 1
    [temperature] = charts_of(blocks, "validation.histogram")
    optical = [r for r in expected if (r.metrics.get("module") or {}).get("temperature_c") is not None
               and not r.metrics["module"].get("is_passive_copper")]
    assert sum(count for _, _, count in temperature.data["bins"]) == len(optical)


def test_an_older_failure_does_not_hide_behind_or_override_the_newest_reading(project, start):
    make_gpu_nodes(project, 2)
    first = start(CheckKind.LINK_HEALTH)
    failed = first.results.filter(verdict=Verdict.FAIL).first()
    assert failed is not None  # the seed plants faults
    second = start(CheckKind.LINK_HEALTH, seed=99)
    # a third reading of one port, taken later but filed earlier: the time decides, not the id
    later = second.results.get(port=failed.port)
    later.finished_at = later.finished_at + timedelta(hours=1)
    later.save(update_fields=["finished_at"])
    rows = {row["port"]: row for row in table(written(project, ["link_health"])["link_health"], "link_health")[1]}
    label = f"{failed.device.name}:{failed.port.name}"
    assert rows[label]["verdict"] == later.verdict and rows[label]["checked"] == later.finished_at.isoformat()


# -- bandwidth ----------------------------------------------------------------------------------------------


@pytest.fixture
def bandwidth_project(project, start, upload):
    make_gpu_nodes(project, 4)
    start(CheckKind.CPU_BANDWIDTH)
    start(CheckKind.GPU_RDMA)
    start(CheckKind.BANDWIDTH_MATRIX)
    upload("ib_write_bw_01_ndr_gbits.txt", "gpu-001")  # a real NDR ib_write_bw on gpu-001's rail 0
    return project


@pytest.mark.parametrize("kind", [CheckKind.CPU_BANDWIDTH, CheckKind.GPU_RDMA])
def test_each_bandwidth_kind_lists_each_links_latest_result_with_its_spread_and_histogram(bandwidth_project, kind):
    blocks = written(bandwidth_project, ["bandwidth"])["bandwidth"]
    expected = latest_per_port(bandwidth_project, kind)
    record, rows = table(blocks, f"{kind}_links")
    # a pair test is filed on its client's port: each port a run measured from
    assert record.row_count == len(rows) == len(expected) == 16 and in_severity_order(rows)
    for row in rows:
        result = expected[row["link"]]
        assert row["verdict"] == result.verdict
        assert row["bandwidth"] == result.metrics.get("bw_avg_gbps")
        assert row["line_rate"] == result.metrics.get("line_rate_gbps")
        if row["bandwidth"] is not None:
            assert row["share"] == pytest.approx(100 * row["bandwidth"] / row["line_rate"])
        assert row["peer"] == (f"{result.peer_device.name}:{result.peer_port.name}" if result.peer_device_id else "")
    values = [r.metrics["bw_avg_gbps"] for r in expected.values() if r.metrics.get("bw_avg_gbps") is not None]
    name = "CPU-path bandwidth" if kind == CheckKind.CPU_BANDWIDTH else "GPU RDMA bandwidth"
    spread = facts(blocks, name)
    assert (spread["Slowest (Gb/s)"], spread["Median (Gb/s)"], spread["Fastest (Gb/s)"]) == (
        round(min(values), 2), round(statistics.median(values), 2), round(max(values), 2))
    assert spread["Links measured"] == 16
    [histogram] = [c for c in charts_of(blocks, "validation.histogram") if c.title.startswith(name)]
    assert sum(count for _, _, count in histogram.data["bins"]) == len(values)
    assert ["line", "line rate"] == histogram.data["thresholds"][-1][1:]


def test_the_uploaded_ib_write_bw_is_the_latest_reading_of_its_link(bandwidth_project):
    _, rows = table(written(bandwidth_project, ["bandwidth"])["bandwidth"], "cpu_bw_links")
    uploaded = CheckResult.objects.get(run__runner="upload", run__project=bandwidth_project)
    row = next(row for row in rows if row["link"] == "gpu-001:ib0")
    assert (row["bandwidth"], row["peer"], row["verdict"]) == (uploaded.metrics["bw_avg_gbps"], "", uploaded.verdict)


def test_the_matrix_heat_map_holds_each_pairs_slowest_rail(bandwidth_project):
    blocks = written(bandwidth_project, ["bandwidth"])["bandwidth"]
    run = CheckRun.objects.get(project=bandwidth_project, kind=CheckKind.BANDWIDTH_MATRIX)
    [heat] = charts_of(blocks, "validation.heatmap")
    nodes = ["gpu-001", "gpu-002", "gpu-003", "gpu-004"]
    assert heat.data["labels"] == nodes and heat.data["block_size"] == 1
    for result in run.results.select_related("device", "peer_device"):
        i, j = nodes.index(result.device.name), nodes.index(result.peer_device.name)
        assert heat.data["values"][max(i, j)][min(i, j)] == result.metrics["min_gbps"]
        level = heat.data["levels"][max(i, j)][min(i, j)]
        assert level == {"pass": 0, "warn": 1, "fail": 2, "error": 2}[result.verdict]
    matrix = facts(blocks, "Bandwidth matrix")
    assert matrix["Node pairs measured"] == run.results.count() == 6
    record, rows = table(blocks, "bw_matrix_flagged")
    assert record.row_count == run.results.exclude(verdict=Verdict.PASS).count() == len(rows)


def test_a_matrix_of_1024_nodes_is_drawn_as_64_blocks_holding_the_slowest_pair():
    nodes = [f"gpu-{i:04d}" for i in range(1, 1025)]
    grid = MatrixGrid(nodes=nodes, block=math.ceil(len(nodes) / MATRIX_BLOCKS))
    assert grid.block == 16 and len(grid.labels) == 64 and grid.labels[1] == "gpu-0017"
    grid.add("gpu-0001", "gpu-0020", 780.0, Verdict.PASS)  # blocks 0 and 1
    grid.add("gpu-0017", "gpu-0016", 610.5, Verdict.WARN)  # blocks 1 and 0, given the other way round
    grid.add("gpu-1024", "gpu-0003", 799.0, Verdict.FAIL)
    assert grid.values[1][0] == 610.5 and grid.levels[1][0] == 1
    assert grid.values[63][0] == 799.0 and grid.levels[63][0] == 2
    assert len(grid.values) == 64 and all(len(row) == i + 1 for i, row in enumerate(grid.values))
    data = {"labels": grid.labels, "values": grid.values, "levels": grid.levels, "block_size": 16}
    assert len(json.dumps(data)) < 20_000  # the snapshot holds blocks, not 523,776 pairs


# -- NCCL ---------------------------------------------------------------------------------------------------


def test_nccl_lists_every_size_of_the_real_output_with_its_wrong_values(project, upload):
    make_gpu_nodes(project, 2)
    upload("nccl_allreduce_03_wrong_failed.txt", "gpu-001")
    result = CheckResult.objects.get(run__project=project, run__kind=CheckKind.NCCL)
    blocks = written(project, ["nccl"])["nccl"]
    record, rows = table(blocks, "nccl_sizes")
    parsed = result.metrics["rows"]
    assert record.row_count == len(rows) == len(parsed) > 0
    for row, size in zip(rows, parsed, strict=True):
        assert (row["size"], row["count"], row["type"], row["redop"]) == (
            size["size_bytes"], size["count"], size["type"], size["redop"])
        for half, key in (("oop", "out_of_place"), ("ip", "in_place")):
            figures = size[key] or {}
            assert (row[f"{half}_time"], row[f"{half}_algbw"], row[f"{half}_busbw"], row[f"{half}_wrong"]) == (
                figures.get("time_us"), figures.get("algbw_gbps"), figures.get("busbw_gbps"), figures.get("wrong"))
    summary = facts(blocks, "NCCL")
    wrong = sum(int(s[h]["wrong"] or 0) for s in parsed for h in ("out_of_place", "in_place") if s[h])
    assert summary["Wrong values (#wrong)"] == wrong > 0
    assert summary["Out of bounds values"] == result.metrics["out_of_bounds"]
    assert summary["Fail"] == 1
    assert summary["Average bus bandwidth (GB/s)"] == round(result.metrics["avg_busbw_gbps"], 2)
    [curve] = charts_of(blocks, "validation.nccl_curve")
    assert curve.data["series"][0]["points"] == [[p["size_bytes"], p["busbw_gbs"]] for p in sorted(
        result.metrics["curve"], key=lambda p: p["size_bytes"])]


def test_nccl_in_groups_has_a_row_per_group_and_a_curve_per_group(project, start):
    make_gpu_nodes(project, 4)
    run = start(CheckKind.NCCL, group_size=2)
    blocks = written(project, ["nccl"])["nccl"]
    results = list(run.results.order_by("target_key", "id"))
    record, groups = table(blocks, "nccl_groups")
    assert record.row_count == len(groups) == len(results) == 2
    for row, result in zip(groups, results, strict=True):
        assert (row["verdict"], row["average"], row["ranks"]) == (
            result.verdict, result.metrics["avg_busbw_gbps"], result.metrics["n_ranks"])
    _, sizes = table(blocks, "nccl_sizes")
    assert len(sizes) == sum(len(r.metrics["rows"]) for r in results)
    [curve] = charts_of(blocks, "validation.nccl_curve")
    assert len(curve.data["series"]) == 2


# -- soak ---------------------------------------------------------------------------------------------------


def test_soak_gives_each_ports_counter_growth_across_the_window(project, technician,
                                                               django_capture_on_commit_callbacks):
    make_gpu_nodes(project, 2)
    with django_capture_on_commit_callbacks(execute=True):
        window = soak.soak_window_start(project=project, user=technician, now=T0, duration=timedelta(hours=1),
                                        options={"seed": 1, "growing_ports": ["gpu-002:mlx5_3"], "grow_from_sample": 2})
    for minutes in (15, 30, 45, 61):
        with django_capture_on_commit_callbacks(execute=True):
            tasks.soak_tick.delay(now=(T0 + timedelta(minutes=minutes)).isoformat())
    window.refresh_from_db()
    blocks = written(project, ["soak"])["soak"]
    record, rows = table(blocks, "soak_ports")
    assert record.row_count == len(rows) == 16 and in_severity_order(rows)
    assert rows[0]["port"] == "gpu-002:ib3" and rows[0]["verdict"] == Verdict.FAIL
    assert rows[0]["first_growth"].endswith("at sample 2")
    assert rows[0]["reason"].startswith(rows[0]["first_growth"].removesuffix(" at sample 2") + " grew")
    for row in rows:
        result = window.run.results.get(target_key=row["port"])
        samples = SoakSample.objects.filter(result=result, error="").order_by("sweep")
        first, last = samples.first(), samples.last()
        assert row["symbol_errors"] == last.symbol_errors - first.symbol_errors
        assert row["link_down"] == last.link_down - first.link_down
        assert row["samples"] == f"{first.sweep}–{last.sweep}"
    assert rows[0]["symbol_errors"] > 0 and all(row["symbol_errors"] == 0 for row in rows[1:])
    window_facts = facts(blocks, "Soak")
    assert (window_facts["Samples taken"], window_facts["Ports"], window_facts["Fail"]) == (window.sweeps, 16, 1)
    assert window_facts["Status"] == window.run.status_label


def test_an_open_soak_says_so_and_lists_its_ports_not_yet_judged(project, technician,
                                                                 django_capture_on_commit_callbacks):
    make_gpu_nodes(project, 2)
    with django_capture_on_commit_callbacks(execute=True):
        soak.soak_window_start(project=project, user=technician, now=T0, options={"seed": 1})
    blocks = written(project, ["soak"])["soak"]
    assert any("still open" in text for text in paragraphs(blocks))
    _, rows = table(blocks, "soak_ports")
    assert len(rows) == 16 and all(row["verdict"] is None for row in rows)  # not judged until it closes


# -- topology comparison -----------------------------------------------------------------------------------


def test_the_latest_topology_comparison_with_its_counts_files_and_faulty_links(project):
    cumulus_fabric(project)
    sb7700_fabric(project)
    lldp = FIXTURES / "lldpcli_show_neighbors_01_cumulus41_doc.txt"
    ib = FIXTURES / "iblinkinfo_02_edr_sb7700_down_polling.txt"
    call_command("compare_topology", "--project", project.code, f"TORC-1-1={lldp}", str(ib), stdout=io.StringIO())
    comparison = TopologyComparison.objects.get()
    blocks = written(project, ["topology_comparison"])["topology_comparison"]
    counts = facts(blocks, f"Topology comparison #{comparison.pk}")
    for state in LinkState:
        assert counts[state.label] == comparison.counts[state.value]
    assert (counts["Ok"], counts["Missing (down or absent)"], counts["Miswired"]) == (7, 2, 2)
    record, rows = table(blocks, "topology_faults")
    links = comparison.links.exclude(state=LinkState.OK)
    assert record.row_count == len(rows) == links.count() == 5
    states = [row["state"] for row in rows]
    assert states[:2] == ["Miswired", "Miswired"] and states[-1] == "Unplanned"  # worst first
    swapped = next(row for row in rows if row["cable"] == "T3")
    assert (swapped["planned_b"], swapped["observed_b"], swapped["advice"]) == (
        "MSP-2:p2", "MSP-2:p1", "Swap the cables in MSP-2 ports p1 and p2.")
    _, files = table(blocks, "topology_files")
    assert sorted((f["name"], f["tool"], f["sha256"]) for f in files) == sorted(
        comparison.files.values_list("original_name", "tool", "sha256"))


# -- size and queries ---------------------------------------------------------------------------------------


def _every_kind(project, start, technician, capture, nodes: int, link_runs: int) -> None:
    make_gpu_nodes(project, nodes)
    for seed in range(link_runs):
        start(CheckKind.LINK_HEALTH, seed=seed + 1)
    for kind in (CheckKind.CPU_BANDWIDTH, CheckKind.GPU_RDMA, CheckKind.BANDWIDTH_MATRIX, CheckKind.NCCL):
        start(kind)
    with capture(execute=True):
        soak.soak_window_start(project=project, user=technician, now=T0, options={"seed": 1})
    with capture(execute=True):
        tasks.soak_tick.delay(now=(T0 + timedelta(minutes=16)).isoformat())


def test_the_query_count_does_not_grow_with_ports_runs_or_pairs(project, other_project, start, technician,
                                                                 django_capture_on_commit_callbacks):
    from tests.factories import MembershipFactory
    from validation import services

    _every_kind(project, start, technician, django_capture_on_commit_callbacks, nodes=2, link_runs=1)
    small = count_queries(lambda: written(project))
    MembershipFactory(project=other_project, user=technician)

    def start_other(kind, **options):
        options.setdefault("seed", 1)
        with django_capture_on_commit_callbacks(execute=True):
            run = services.check_run_start(project=other_project, kind=kind, options=options)
        return run

    _every_kind(other_project, start_other, technician, django_capture_on_commit_callbacks, nodes=5, link_runs=3)
    assert CheckResult.objects.filter(run__project=other_project).count() > 3 * CheckResult.objects.filter(
        run__project=project).count()
    large = count_queries(lambda: written(other_project))
    assert large == small <= 30


# -- the chart drawers ----------------------------------------------------------------------------------------


def _strings(node) -> list[String]:
    found = []
    for item in getattr(node, "contents", []):
        if isinstance(item, String):
            found.append(item)
        elif isinstance(item, Group | Drawing):
            found += _strings(item)
    return found


def test_every_chart_is_drawn_by_its_registered_drawer_with_text_of_9_pt_at_least(link_health_project, start):
    make_gpu_nodes(link_health_project, 1, prefix="gpx")  # a fourth node for the pairs
    for kind in (CheckKind.CPU_BANDWIDTH, CheckKind.BANDWIDTH_MATRIX, CheckKind.NCCL):
        start(kind)
    sections = written(link_health_project)
    drawn = set()
    for blocks in sections.values():
        for chart in (b for b in blocks if isinstance(b, Chart)):
            json.dumps(chart.data, allow_nan=False)  # plain numbers and labels
            drawer = report_registry.chart_drawer(chart.kind)
            assert drawer is not None, chart.kind
            for width, height in ((480, 260), (720, 300)):
                drawing = drawer(chart.data, width=width, height=height)
                assert (drawing.width, drawing.height) == (width, height)
                texts = _strings(drawing)
                assert texts and min(t.fontSize for t in texts) >= 9, chart.kind
                assert renderPDF.drawToString(drawing).startswith(b"%PDF")
            drawn.add(chart.kind)
    assert drawn == {"validation.ber_decades", "validation.histogram", "validation.heatmap", "validation.nccl_curve"}


def test_a_drawer_draws_an_old_or_partial_snapshots_chart_rather_than_fail():
    for kind, drawer in charts.REPORT_CHARTS.items():
        assert report_registry.chart_drawer(kind) is drawer
        assert isinstance(drawer({}, width=400, height=200), Drawing)


def test_the_heat_map_of_64_blocks_fits_a_reports_box_and_names_every_few_rows_at_9_pt():
    labels = [f"gpu-{i * 16 + 1:04d}" for i in range(64)]
    values = [[700.0 + (i * j) % 100 for j in range(i + 1)] for i in range(64)]
    levels = [[2 if (i, j) == (40, 3) else 0 for j in range(i + 1)] for i in range(64)]
    width, height = 760, 319  # a landscape page's chart box
    drawing = charts.report_heatmap({"labels": labels, "values": values, "levels": levels, "block_size": 16},
                                    width=width, height=height)
    cells = [shape for shape in drawing.contents if getattr(shape, "_svgAttrs", {}).get("class") == "cell"]
    assert len(cells) == 64 * 65 // 2
    assert all(0 <= c.x and c.x + c.width <= width and 0 <= c.y and c.y + c.height <= height for c in cells)
    assert max(c.y + c.height for c in cells) - min(c.y for c in cells) > 0.9 * height  # as tall as the box
    failed = next(c for c in cells if (c._svgAttrs["data-row"], c._svgAttrs["data-col"]) == (labels[40], labels[3]))
    assert failed._svgAttrs["data-flag"] == "fail"
    texts = _strings(drawing)
    assert min(t.fontSize for t in texts) >= 9
    named = [t for t in texts if t.text in labels]
    assert 8 < len(named) < 64 and named[0].text == labels[0]  # every n-th: 9 pt text does not fit 64 rows
    assert all(t.x + 0.56 * 9 * len(t.text) <= width for t in named)


# -- hostile input ------------------------------------------------------------------------------------------


def test_results_whose_metrics_are_not_what_the_parsers_write_are_shown_blank_not_a_crash(project):
    """A result's metrics are JSON: an old row, a hand-made upload or a parser's future shape may hold
    anything. The sections show what they can read and leave the rest blank."""
    [node] = make_gpu_nodes(project, 1)
    port = node.ports.filter(parent__isnull=True, network="compute").order_by("id").first()
    for kind, metrics in (
        (CheckKind.LINK_HEALTH, {"counters": "x", "module": [1, 2], "state": {"a": 1}, "speed": 400}),
        (CheckKind.CPU_BANDWIDTH, {"bw_avg_gbps": "fast", "line_rate_gbps": [800]}),
        (CheckKind.NCCL, {"rows": [None, "x", {"size_bytes": "big", "out_of_place": [1]}], "curve": [1, {"a": 2}],
                          "hosts": "gpu-001", "avg_busbw_gbps": "nan"}),
    ):
        run = CheckRun.objects.create(project=project, kind=kind, status=JobStatus.DONE, finished_at=T0)
        CheckResult.objects.create(run=run, target_key="odd", status=ResultStatus.DONE, device=node, port=port,
                                   metrics=metrics, verdict=Verdict.WARN, reasons=[{"level": ["warn"]}, "x"],
                                   finished_at=T0)
    sections = written(project, ["link_health", "bandwidth", "nccl"])
    _, [link] = table(sections["link_health"], "link_health")
    assert (link["effective_ber"], link["speed"], link["reason"]) == (None, 400, "")
    _, [optic] = table(sections["link_health"], "link_optics")
    assert optic["rx_lanes"] == "" and optic["rx_min"] is None
    _, [bandwidth] = table(sections["bandwidth"], "cpu_bw_links")
    assert bandwidth["bandwidth"] is None and bandwidth["share"] is None
    _, [size] = table(sections["nccl"], "nccl_sizes")
    assert size["size"] is None and size["oop_busbw"] is None
