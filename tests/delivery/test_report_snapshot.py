"""The acceptance report's snapshot as delivery writes it (delivery/reports/snapshot.py and sections.py):
the meta record with the project's names in both languages and the cluster's counts, every registered
section in order (a provider with nothing to say left out, one that breaks named), and delivery's own
sections: the summary's figures from the latest runs only, the punch list the customer may see, the
statement to sign. The figures cost the same queries however many punch items there are."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.utils import timezone

from core.choices import JobStatus
from delivery.choices import PunchSeverity, PunchStatus, StageStatus
from delivery.models import PunchItem, ReportVersion, Stage
from delivery.reports import sections as delivery_sections
from delivery.reports import snapshot as snapshot_module
from delivery.reports.sections import NOT_READY, READY, summary_figures
from delivery.reports.snapshot import SectionFailed, snapshot_write
from projects.reports import Facts, Paragraph, ReportRegistry, Section, TableRecord, read_snapshot, report_registry
from tests.factories import OpticFactory
from tests.support import count_queries
from validation.choices import CheckKind, ResultStatus, Verdict
from validation.models import CheckResult, CheckRun

from .stages_world import build_world

pytestmark = pytest.mark.django_db

PROJECT_NAME_ZH = "上海智算中心一期"
CUSTOMER_NAME_ZH = "星河人工智能有限公司"


# --- a small project with results, punch items and stages (shared with the other report tests) ------------


def report_world(project):
    """The stage tests' two-node world, with Chinese names, a seated optic, a finished link-health run with
    one pass and one fail, and a customer-visible and an internal punch item."""
    project.name_zh, project.customer_name_zh = PROJECT_NAME_ZH, CUSTOMER_NAME_ZH
    project.save(update_fields=["name_zh", "customer_name_zh"])
    world = build_world(project)
    port = world.c1.ends.get(side="A").port
    OpticFactory(project=project, port=port, status="installed")
    world.run = link_health_run(world, {world.c1: Verdict.FAIL, world.c2: Verdict.PASS})
    world.visible_item = PunchItem.objects.create(
        project=project, title="Replace the optic of C00001", severity=PunchSeverity.CRITICAL,
        customer_visible=True, opened_at=timezone.now(), object_label="C00001")
    world.internal_item = PunchItem.objects.create(
        project=project, title="Internal: re-label rack N01", customer_visible=False, opened_at=timezone.now())
    return world


def link_health_run(world, verdicts: dict, *, at=None) -> CheckRun:
    at = at or timezone.now()
    run = CheckRun.objects.create(project=world.project, kind=CheckKind.LINK_HEALTH, status=JobStatus.DONE,
                                  progress_total=len(verdicts), progress_done=len(verdicts), finished_at=at,
                                  created_at=at)
    for cable, verdict in verdicts.items():
        end = cable.ends.select_related("port__device").order_by("side").first()
        CheckResult.objects.create(run=run, target_key=f"{end.port.device.name}:{end.port.name}",
                                   status=ResultStatus.DONE, device=end.port.device, port=end.port, cable=cable,
                                   verdict=verdict, finished_at=at)
    return run


def satisfy_stages_before_acceptance(project) -> None:
    """Every stage before acceptance skipped: satisfied, and no recompute reopens it (a done one whose gate
    fails in this small world would be)."""
    Stage.objects.filter(project=project).exclude(key="acceptance").update(
        status=StageStatus.SKIPPED, skipped_reason="Not part of this test.", completed_at=timezone.now())


def new_version(project, user=None, number: int = 1) -> ReportVersion:
    return ReportVersion.objects.create(project=project, number=number, requested_by=user,
                                        generated_at=timezone.now())


def written(project, version) -> bytes:
    buffer = io.BytesIO()
    snapshot_write(project=project, version=version, target=buffer)
    return buffer.getvalue()


def sections_of(data: bytes) -> dict[str, list]:
    """{section key: its blocks}, tables with their rows read."""
    records = read_snapshot(io.BytesIO(data))
    found = {}
    for section in records.sections:
        blocks = []
        for block in section.blocks:
            if isinstance(block, TableRecord):
                blocks.append((block, list(block.rows)))
            else:
                blocks.append(block)
        found[section.key] = blocks
    return found


def table(blocks, key: str):
    return next((rows, record) for item in blocks if isinstance(item, tuple)
                for record, rows in [item] if record.key == key)


@pytest.fixture
def world(project, manager, technician, customer):
    return report_world(project)


@pytest.fixture
def delivery_only(monkeypatch):
    """The registry with delivery's three sections only (the domain apps' sections are their own tests')."""
    registry = ReportRegistry()
    for key, provider in delivery_sections.PROVIDERS.items():
        registry.register_section(key, provider, order=delivery_sections.SECTION_ORDERS[key],
                                  title=delivery_sections.SECTION_TITLES[key])
    monkeypatch.setattr(snapshot_module, "report_registry", registry)
    return registry


# --- the meta record ---------------------------------------------------------------------------------------


def test_the_meta_record_names_the_report_the_project_in_both_languages_and_the_cluster(world, manager, settings):
    settings.INTEGRATOR_NAME, settings.INTEGRATOR_NAME_ZH = "Beichen Systems", "北辰系统集成"
    manager.first_name, manager.last_name = "Pat", "Manager"
    manager.save()
    version = new_version(world.project, manager, number=3)
    meta = read_snapshot(io.BytesIO(written(world.project, version))).meta
    assert meta["schema"] == 1
    assert meta["report"] == {"id": str(version.report_id), "version": 3,
                              "generated_at": version.generated_at.isoformat(), "generated_by": "Pat Manager"}
    assert meta["project"]["code"] == "ACME-72"
    assert (meta["project"]["name_zh"], meta["project"]["customer_name_zh"]) == (PROJECT_NAME_ZH, CUSTOMER_NAME_ZH)
    assert set(meta["project"]) == {"code", "name", "name_zh", "customer_name", "customer_name_zh", "site", "status",
                                    "start_date", "target_date"}
    assert meta["integrator"] == {"name": "Beichen Systems", "name_zh": "北辰系统集成"}
    # Two nodes of eight compute ports (GPUs, rail-optimised), one leaf, two racks, two cables, one optic seated.
    assert meta["cluster"] == {"racks": 2, "servers": 2, "gpus": 16, "switches": 1, "cables": 2, "optics": 1}


# --- sections in order -------------------------------------------------------------------------------------


def test_every_registered_section_is_written_in_order_delivery_s_own_among_them(world):
    keys = list(sections_of(written(world.project, new_version(world.project))))
    registered = [s.key for s in report_registry.sections()]
    assert keys == [key for key in registered if key in keys]  # in the registry's order, None ones left out
    assert {"summary", "punch", "signoff"} <= set(keys)
    assert keys.index("summary") < keys.index("punch") < keys.index("signoff") == len(keys) - 1


def test_a_provider_with_nothing_to_say_is_left_out_and_one_that_breaks_is_named(world, delivery_only):
    delivery_only.register_section("nothing", lambda project: None, order=50, title="Nothing here")
    keys = list(sections_of(written(world.project, new_version(world.project))))
    assert keys == ["summary", "punch", "signoff"]

    def broken(project):
        raise KeyError("plane")

    delivery_only.register_section("broken", broken, order=60, title="Broken bits")
    with pytest.raises(SectionFailed, match=r"Broken bits section \(broken\).*KeyError"):
        written(world.project, new_version(world.project, number=2))


# --- delivery's sections -----------------------------------------------------------------------------------


def test_the_summary_counts_the_latest_run_of_each_kind_only_and_says_why_it_is_not_ready(world, delivery_only):
    # An older run failing both cables is not the state of the cluster: the newer one is.
    link_health_run(world, {world.c1: Verdict.FAIL, world.c2: Verdict.FAIL}, at=timezone.now() - timedelta(days=1))
    CheckRun.objects.filter(pk=world.run.pk).update(created_at=timezone.now())
    summary = sections_of(written(world.project, new_version(world.project)))["summary"]
    paragraph, facts = summary[0], summary[1]
    assert isinstance(paragraph, Paragraph) and isinstance(facts, Facts)
    figures = dict(facts.items)
    assert (figures["Pass"], figures["Fail"], figures["Open punch items"]) == (1, 1, 1)  # the internal item is not
    assert "not yet ready for acceptance" in paragraph.text
    assert "1 failing result" in paragraph.text and "1 punch item still open" in paragraph.text
    stage_rows, stages = table(summary, "stages")
    assert [row[0] for row in stage_rows][0] == "Site readiness" and len(stage_rows) == 9
    assert stages.verdict_column == "gate"
    run_rows, _ = table(summary, "latest_runs")
    assert run_rows == [["Link health (mlxlink)", world.run.finished_at.isoformat(), 1, 0, 1, 0]]


def test_the_verdict_is_ready_when_stages_results_and_punch_list_allow_it(world):
    assert summary_figures(world.project).verdict == NOT_READY
    satisfy_stages_before_acceptance(world.project)
    link_health_run(world, {world.c1: Verdict.PASS, world.c2: Verdict.WARN}, at=timezone.now() + timedelta(minutes=1))
    PunchItem.objects.filter(pk=world.visible_item.pk).update(status=PunchStatus.VERIFIED)
    figures = summary_figures(world.project)
    assert figures.verdict == READY, figures
    assert (figures.passed, figures.warned, figures.failed) == (1, 1, 0)
    text = delivery_sections.verdict_text(world.project, figures)
    assert text.startswith("ACME 72-node cluster is ready for acceptance") and "1 warning" in text
    # The internal item is still open: the customer's report neither counts nor lists it.
    assert PunchItem.objects.get(pk=world.internal_item.pk).status == PunchStatus.OPEN


def test_the_punch_section_lists_what_the_customer_may_see_open_first_and_the_waivers(world, delivery_only, manager):
    from delivery.models import Waiver

    PunchItem.objects.create(project=world.project, title="Tidy the cable tray", severity=PunchSeverity.MINOR,
                             status=PunchStatus.VERIFIED, customer_visible=True, opened_at=timezone.now(),
                             fixed_at=timezone.now(), verified_at=timezone.now(), resolution_note="Tidied.")
    Waiver.objects.create(stage=world.stages["soak"], reason="Customer agreed to a 24-hour soak.",
                          all_items=True, missing_count=1, recorded_by=manager, recorded_at=timezone.now())
    punch = sections_of(written(world.project, new_version(world.project)))["punch"]
    rows, record = table(punch, "punch_items")
    assert record.row_count == 2
    assert [row[1] for row in rows] == ["Replace the optic of C00001", "Tidy the cable tray"]  # open one first
    assert rows[0][2:4] == ["Critical", "Open"] and rows[1][-1] == "Tidied."
    assert all("Internal" not in row[1] for row in rows)
    waivers, _ = table(punch, "waivers")
    assert waivers[0][:3] == ["Soak", "all 1 missing", "Customer agreed to a 24-hour soak."]


def test_the_signoff_section_holds_the_statement_in_both_languages(world, delivery_only, settings):
    settings.INTEGRATOR_NAME_ZH = "北辰系统集成"
    signoff = sections_of(written(world.project, new_version(world.project)))["signoff"]
    texts = [block.text for block in signoff if isinstance(block, Paragraph)]
    assert "On behalf of Example AI Lab" in texts[0] and settings.INTEGRATOR_NAME in texts[0]
    assert CUSTOMER_NAME_ZH in texts[1] and "北辰系统集成" in texts[1]


def test_a_project_without_chinese_names_gets_the_english_statement_only(project, delivery_only):
    signoff = sections_of(written(project, new_version(project)))["signoff"]
    assert len([block for block in signoff if isinstance(block, Paragraph)]) == 1


def test_the_delivery_sections_cost_the_same_queries_for_three_punch_items_as_for_thirty(world, delivery_only):
    def punch_items(count):
        PunchItem.objects.bulk_create(PunchItem(project=world.project, title=f"Item {n}", customer_visible=True,
                                                opened_at=timezone.now()) for n in range(count))

    punch_items(2)
    few = count_queries(lambda: written(world.project, new_version(world.project, number=1)))
    punch_items(27)
    many = count_queries(lambda: written(world.project, new_version(world.project, number=2)))
    assert few == many


def test_a_section_is_a_section(world):
    """The providers hand the writer Sections (the registry's contract)."""
    for key, provider in delivery_sections.PROVIDERS.items():
        assert isinstance(provider(world.project), Section), key
