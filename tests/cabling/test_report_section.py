"""The acceptance report's topology section (cabling.report_sections), written through the real snapshot
writer and read back: the cable map and the "not verified" table say what the database holds (a breakout's
B ends, a formula-like label kept as it is, verified by scan, by the fabric or both), the per-plane and
per-switch link counts, the fabric chart's figures and its drawing, another project's rows nowhere, and a
query count that does not grow with the cables."""

import gzip
import io
from datetime import UTC, datetime, timedelta

import pytest
from reportlab.graphics import renderPDF
from reportlab.graphics.shapes import Drawing, String

from cabling.choices import CableStatus, FabricState
from cabling.exports.fabric_drawing import fabric_drawing
from cabling.models import Cable
from cabling.report_sections import CHART_KIND, REMOVED_NOTE, how_verified, topology_section
from projects.reports import Chart, Facts, SnapshotWriter, report_registry
from tests.factories import UserFactory
from tests.report_support import section_titles, sections_snapshot, sections_written
from tests.support import count_queries

from .conftest import connect, ports_of

pytestmark = pytest.mark.django_db
FORMULA = "=cmd|' /C calc'!A0"
SCANNED_AT = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
COMPARED_AT = datetime(2026, 11, 21, 8, 30, tzinfo=UTC)


def snapshot_of(project) -> bytes:
    return sections_snapshot(project, ["topology"])


def blocks_of(project) -> dict:
    """Tables by key (record and rows as dicts), plus the facts and the chart, read back from the snapshot."""
    assert section_titles(project, ["topology"]) == [("topology", "Topology and cable plan", 40)]
    blocks = sections_written(project, ["topology"])["topology"]
    found: dict = {"tables": {table.key: (table, rows) for table, rows in (b for b in blocks if isinstance(b, tuple))}}
    for block in blocks:
        if isinstance(block, Facts):
            found["facts"] = dict(block.items)
        elif isinstance(block, Chart):
            found["chart"] = block
    return found


def rows_of(project, key: str) -> list[dict]:
    return blocks_of(project)["tables"][key][1]


@pytest.fixture
def evidence(fabric):
    """The fabric with what the floor and the fabric said: C00001 scanned, C00002 seen ok by a comparison,
    C00003 both, C00004 found miswired, the breakout C00005 installed, and a cable labelled like a formula."""
    tess = UserFactory(username="tess", first_name="Tess", last_name="Tech")
    Cable.objects.filter(pk=fabric.c1.pk).update(status=CableStatus.VERIFIED, verified_at=SCANNED_AT, verified_by=tess)
    Cable.objects.filter(pk=fabric.c2.pk).update(status=CableStatus.VERIFIED, fabric_state=FabricState.OK,
                                                 fabric_verified_at=COMPARED_AT - timedelta(days=2),
                                                 fabric_checked_at=COMPARED_AT)
    Cable.objects.filter(pk=fabric.c3.pk).update(status=CableStatus.VERIFIED, verified_at=SCANNED_AT,
                                                 verified_by=tess, fabric_state=FabricState.OK,
                                                 fabric_checked_at=COMPARED_AT)
    Cable.objects.filter(pk=fabric.c4.pk).update(status=CableStatus.FAULTY, fabric_state=FabricState.MISWIRED,
                                                 fabric_checked_at=COMPARED_AT, status_cause="Miswired: =1+1")
    Cable.objects.filter(pk=fabric.breakout.pk).update(status=CableStatus.INSTALLED)
    fabric.formula = connect(fabric.project, FORMULA, ports_of(fabric.gpu3)["ib1/0"], ports_of(fabric.leaf1)["p4"],
                             plane=0)
    fabric.tess = tess
    return fabric


def expected_cable_map(project) -> list[dict]:
    """The cable map as the ORM's model instances tell it, in label order."""
    rows = []
    for cable in Cable.objects.filter(project=project).order_by("label").prefetch_related("ends__port__device"):
        ends = sorted(cable.ends.all(), key=lambda e: (e.side, e.position))
        scanned, seen = cable.verified_at is not None, cable.fabric_state == FabricState.OK
        how = how_verified(status=cable.status, scanned=scanned, seen_ok=seen)
        at = {"scan": cable.verified_at, "both": cable.verified_at, "fabric": cable.fabric_verified_at}.get(how)
        rows.append({
            "label": cable.label,
            "a_end": ", ".join(f"{e.port.device.name}:{e.port.name}" for e in ends if e.side == "A"),
            "b_end": ", ".join(f"{e.port.device.name}:{e.port.name}" for e in ends if e.side == "B"),
            "type": {"fiber": "Fiber", "aoc": "AOC", "cat6": "Cat6"}[cable.cable_type],
            "length": float(cable.length_m),
            "status": cable.get_status_display() + (REMOVED_NOTE if cable.removed_from_plan else ""),
            "verified_at": at.isoformat() if at else None,
            "verified_by": cable.verified_by.get_full_name() if how in ("scan", "both") else "",
            "how": how,
        })
    return rows


def test_both_sections_are_registered_with_the_fabric_drawer():
    keys = [(s.key, s.order, s.title) for s in report_registry.sections()]
    assert ("inventory", 30, "Inventory") in keys and ("topology", 40, "Topology and cable plan") in keys
    assert keys.index(("inventory", 30, "Inventory")) < keys.index(("topology", 40, "Topology and cable plan"))
    assert report_registry.chart_drawer(CHART_KIND) is fabric_drawing


def test_cable_map_rows_are_the_database_in_label_order(evidence):
    rows = rows_of(evidence.project, "cables")
    assert rows == expected_cable_map(evidence.project)
    by_label = {row["label"]: row for row in rows}
    assert [row["label"] for row in rows] == [FORMULA, "C00001", "C00002", "C00003", "C00004", "C00005", "C00006",
                                              "C00007", "O00001"]
    # Spelled out, so that the test does not only agree with itself.
    assert by_label["C00005"] == {
        "label": "C00005", "a_end": "gpu-003:ib0", "b_end": "leaf-01:p3, leaf-02:p3", "type": "Fiber",
        "length": 7.0, "status": "Installed", "verified_at": None, "verified_by": "", "how": "",
    }
    assert (by_label["C00001"]["how"], by_label["C00001"]["verified_by"]) == ("scan", "Tess Tech")
    assert by_label["C00001"]["verified_at"] == SCANNED_AT.isoformat()
    assert (by_label["C00002"]["how"], by_label["C00002"]["verified_by"]) == ("fabric", "")
    # dated by the comparison that first verified it, not the latest one that saw it again
    assert by_label["C00002"]["verified_at"] == (COMPARED_AT - timedelta(days=2)).isoformat()
    assert (by_label["C00003"]["how"], by_label["C00003"]["verified_at"]) == ("both", SCANNED_AT.isoformat())
    assert by_label["C00004"]["how"] == "" and by_label["C00004"]["status"] == "Faulty"
    assert by_label[FORMULA]["a_end"] == "gpu-003:ib1/0"  # stored as it is: the renderers guard formulas


def test_a_user_without_a_name_is_named_by_username(evidence):
    Cable.objects.filter(pk=evidence.c1.pk).update(verified_by=UserFactory(username="scanner7"))
    assert {r["label"]: r for r in rows_of(evidence.project, "cables")}["C00001"]["verified_by"] == "scanner7"


def test_a_verified_cable_the_fabric_later_finds_miswired_is_no_longer_verified(evidence):
    Cable.objects.filter(pk=evidence.c1.pk).update(status=CableStatus.FAULTY, fabric_state=FabricState.MISWIRED)
    row = {r["label"]: r for r in rows_of(evidence.project, "cables")}["C00001"]
    assert (row["status"], row["how"], row["verified_at"], row["verified_by"]) == ("Faulty", "", None, "")


def test_a_cable_dropped_by_a_re_plan_says_so_on_its_row(evidence):
    Cable.objects.filter(pk=evidence.c1.pk).update(removed_from_plan=True)
    rows = rows_of(evidence.project, "cables")
    assert rows == expected_cable_map(evidence.project)
    assert {r["label"]: r for r in rows}["C00001"]["status"] == "Verified (removed from the plan: to take out)"


def test_not_verified_table_lists_faulty_then_installed_then_planned(evidence):
    rows = rows_of(evidence.project, "cables_not_verified")
    assert [(r["label"], r["status"]) for r in rows] == [
        ("C00004", "Faulty"), ("C00005", "Installed"), (FORMULA, "Planned"), ("C00006", "Planned"),
        ("C00007", "Planned"), ("O00001", "Planned"),
    ]
    assert rows[0] == {"label": "C00004", "a_end": "gpu-002:ib0/1", "b_end": "leaf-02:p2", "status": "Faulty",
                       "fabric": "Miswired", "why": "Miswired: =1+1"}
    assert rows[1]["b_end"] == "leaf-01:p3, leaf-02:p3" and rows[1]["fabric"] == "Not compared yet"


def test_no_not_verified_table_once_every_cable_is_verified(evidence):
    Cable.objects.filter(project=evidence.project).update(status=CableStatus.VERIFIED)
    tables = blocks_of(evidence.project)["tables"]
    assert "cables_not_verified" not in tables and tables["cables"][0].row_count == 9


def test_facts_count_cables_per_status_and_per_way_of_verifying(evidence):
    facts = blocks_of(evidence.project)["facts"]
    assert facts == {
        "Cables": 9, "Planned": 4, "Installed": 1, "Verified": 3, "Faulty": 1,
        "Verified by a scan of every end": 1, "Verified by the fabric comparison": 1, "Verified by both": 1,
    }


def test_links_per_plane_and_per_switch(evidence):
    planes = rows_of(evidence.project, "planes")
    assert [(r["network"], r["plane"]) for r in planes] == [
        ("Compute (training fabric)", "plane 0"), ("Compute (training fabric)", "plane 1"),
        ("Out-of-band management", "planes shared")]
    plane0 = planes[0]
    # Plane 0: C00001 (verified), C00003 (verified), leg B1 of C00005 (installed), the formula cable (planned)
    # into leaf-01, and C00006 (planned) from leaf-01 to the spine.
    assert plane0 == {"network": "Compute (training fabric)", "plane": "plane 0",
                      "tiers": "1 spine · 1 leaf · 3 nodes", "switches": 2, "links": 5, "planned": 2,
                      "installed": 1, "verified": 2, "faulty": 0}
    switches = rows_of(evidence.project, "switches_compute_0")
    # leaf-01 has 3 of its 5 links not verified (its uplink among them), the spine 1: more not verified first.
    assert switches == [
        {"switch": "leaf-01", "tier": "leaf", "rack": "N01", "model": "Example Switch 8x800G", "links": 5,
         "planned": 2, "installed": 1, "verified": 2, "faulty": 0},
        {"switch": "spine-01", "tier": "spine", "rack": "N01", "model": "Example Switch 8x800G", "links": 1,
         "planned": 1, "installed": 0, "verified": 0, "faulty": 0},
    ]
    plane1 = rows_of(evidence.project, "switches_compute_1")
    assert plane1[0]["switch"] == "leaf-02" and plane1[0]["faulty"] == 1  # C00004, miswired
    # leaf-01's management port is B end of O00001: in the oob network it is the switch the node plugs into.
    assert [r["switch"] for r in rows_of(evidence.project, "switches_oob_shared")] == ["leaf-01"]
    titles = {key: table.title for key, (table, _) in blocks_of(evidence.project)["tables"].items()}
    assert [titles[key] for key in ("switches_compute_0", "switches_compute_1", "switches_oob_shared")] == [
        "Compute plane 0 switches", "Compute plane 1 switches", "Out-of-band switches"]


def test_chart_data_are_plain_figures_and_identical_planes_share_a_panel(fabric):
    chart = blocks_of(fabric.project)["chart"]
    assert chart.kind == CHART_KIND
    views = chart.data["views"]
    # Nothing compared yet: planes 0 and 1 have the same figures and share one panel.
    assert [(v["title"], v["planes"]) for v in views] == [("Compute · planes 0–1", [0, 1]),
                                                          ("Out-of-band · planes shared", [None])]
    compute = views[0]
    assert compute["tiers"] == [
        {"tier": "node", "count": 3, "label": "3 nodes in 1 unit"},
        {"tier": "leaf", "count": 1, "label": "1 leaf"},
        {"tier": "spine", "count": 1, "label": "1 spine"},
    ]
    assert compute["links"] == [
        {"lower": "node", "upper": "leaf", "links": 3, "cables": 3, "states": {"unknown": 3}},
        {"lower": "leaf", "upper": "spine", "links": 1, "cables": 1, "states": {"unknown": 1}},
    ]
    Cable.objects.filter(pk=fabric.c1.pk).update(fabric_state=FabricState.OK)
    views = blocks_of(fabric.project)["chart"].data["views"]
    assert [v["title"] for v in views] == ["Compute · plane 0", "Compute · plane 1", "Out-of-band · planes shared"]
    assert views[0]["links"][0]["states"] == {"ok": 1, "unknown": 2}


def texts(drawing: Drawing) -> list[str]:
    found = []

    def walk(node):
        for child in getattr(node, "contents", []):
            if isinstance(child, String):
                found.append(child.text)
            walk(child)

    walk(drawing)
    return found


def test_the_drawer_returns_a_drawing_renderpdf_can_draw(evidence):
    data = blocks_of(evidence.project)["chart"].data
    drawing = fabric_drawing(data, width=480, height=260)
    assert isinstance(drawing, Drawing) and (drawing.width, drawing.height) == (480, 260)
    words = texts(drawing)
    assert "Compute · plane 0" in words and "3 nodes in 1 unit" in words and "4 links" in words
    assert "Seen ok" in words and "Not compared yet" in words
    assert renderPDF.drawToString(drawing).startswith(b"%PDF")


def test_the_drawing_stays_small_for_a_large_fabric_and_empty_data_draw_a_line():
    view = {"title": "Compute · plane 0", "tiers": [
        {"tier": "node", "count": 1024, "label": "1,024 nodes in 16 units"},
        {"tier": "leaf", "count": 128, "label": "128 leaves"}, {"tier": "spine", "count": 64, "label": "64 spines"}],
        "links": [
            {"lower": "node", "upper": "leaf", "links": 8192, "cables": 8192, "states": {"ok": 8000, "missing": 192}},
            {"lower": "leaf", "upper": "spine", "links": 8192, "cables": 8192, "states": {"ok": 8192}}]}
    many = {"views": [dict(view, title=f"Compute · plane {i}") for i in range(12)]}
    drawing = fabric_drawing(many, width=500, height=400)
    assert len(texts(drawing)) < 12 * 8 + 10  # a title, 3 tiers and 2 link counts per panel, the legend
    assert "8,192 links" in texts(drawing)
    assert renderPDF.drawToString(drawing).startswith(b"%PDF")
    empty = fabric_drawing({"views": []}, width=300, height=100)
    assert texts(empty) == ["No cables in the plan yet."]
    assert renderPDF.drawToString(empty).startswith(b"%PDF")


def test_another_projects_cables_are_nowhere_and_a_project_without_cables_has_no_section(evidence, other_project):
    text = gzip.decompress(snapshot_of(evidence.project)).decode()
    assert "C00001-FOREIGN" not in text and "foreign-sw" not in text
    Cable.objects.filter(project=other_project).delete()
    assert topology_section(other_project) is None


def consume(project) -> int:
    """Queries made while the section is built and every row of every table written."""
    def write():
        writer = SnapshotWriter(io.BytesIO())
        writer.meta({})
        writer.section("topology", "Topology", 40, topology_section(project))
        writer.close()

    return count_queries(write)


def test_query_count_does_not_grow_with_the_cables(evidence, add_cables):
    small = consume(evidence.project)
    add_cables(evidence.project, 40)
    Cable.objects.filter(project=evidence.project, label__startswith="Q").update(status=CableStatus.INSTALLED)
    bigger = consume(evidence.project)
    assert Cable.objects.filter(project=evidence.project).count() == 49
    assert small == bigger
