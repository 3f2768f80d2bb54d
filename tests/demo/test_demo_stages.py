"""DEMO-72 as seed_demo leaves it (mid-delivery: delivery/demo_delivery.py), then walked through every
stage to the customer's signature on a version issued once every gate passes or is waived: each gate that
does not pass refuses completion naming and counting what it misses, waivers let a stage complete, and a
regression (a verified cable found faulty, a link failing again) reopens exactly the stages it affects, saying
why.

The recompute task's body is called here where the task would run after commit (tests run inside a
transaction): `gates_recompute`, the service the task calls."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus
from cabling.models import Cable
from cabling.services import cable_status_set
from cabling.services.fabric_states import cables_fabric_record
from delivery.choices import PunchSource, ReportDecision, ReportState, StageStatus
from delivery.dashboard.selectors import cables_verified_series, project_dashboard
from delivery.models import PunchItem, ReportVersion, Stage, Waiver
from delivery.punch.selectors import punch_item_list
from delivery.reports.services import (
    report_version_issue,
    report_version_render,
    report_version_request,
    report_version_sign,
)
from delivery.stages.services import (
    checklist_item_confirm,
    gates_recompute,
    stage_complete,
    stage_start,
    waiver_record,
)
from demo.build import DEMO_CODE, OVER_BUDGET_RACK
from demo.workflow import HISTORY_DAYS, MANUAL_ITEMS, blocked_stages
from inventory.models import Rack
from projects.gates import MISSING_EXAMPLES, ref_of
from projects.models import Project
from validation.choices import CheckKind, LinkState, Verdict
from validation.gates import latest_link_verdicts
from validation.models import CheckResult, CheckRun, TopologyComparison

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_db")]

STAGE_KEYS = ["site_readiness", "racking", "cabling", "os_drivers", "network_config", "link_checks", "benchmarks",
              "soak", "acceptance"]


@pytest.fixture
def demo():
    return Project.objects.get(code=DEMO_CODE)


def _user(username: str):
    return get_user_model().objects.get(username=username)


@pytest.fixture
def manager():
    return _user("manager")


@pytest.fixture
def technician():
    return _user("technician")


@pytest.fixture
def customer():
    return _user("customer")


def stage(project, key: str) -> Stage:
    return Stage.objects.select_related("project").get(project=project, key=key)


def statuses(project) -> dict[str, str]:
    return dict(Stage.objects.filter(project=project).values_list("key", "status"))


def refs(current: Stage) -> list[str]:
    return [item["ref"] for item in current.gate_missing]


def labels(current: Stage) -> list[str]:
    return [item["label"] for item in current.gate_missing]


def refused(current: Stage, manager) -> str:
    """The refusal of completing `current`, as the manager reads it."""
    with pytest.raises(ValidationError) as refusal:
        stage_complete(stage=current, user=manager)
    return " ".join(refusal.value.messages)


def not_verified(project) -> list[str]:
    return sorted(Cable.objects.filter(project=project, removed_from_plan=False)
                  .exclude(status=CableStatus.VERIFIED).values_list("label", flat=True))


def failing_links(project) -> list[str]:
    verdicts = latest_link_verdicts(project)
    failing = [pk for pk, verdict in verdicts.items() if verdict not in (Verdict.PASS, Verdict.WARN)]
    return sorted(Cable.objects.filter(pk__in=failing).values_list("label", flat=True))


# --- the demo as seed_demo leaves it --------------------------------------------------------------------


def test_the_demo_is_mid_delivery_two_stages_done_cabling_blocked_with_its_reasons(demo):
    assert statuses(demo) == {
        "site_readiness": StageStatus.DONE, "racking": StageStatus.DONE, "cabling": StageStatus.IN_PROGRESS,
        **{key: StageStatus.NOT_STARTED for key in STAGE_KEYS[3:]},
    }
    # Site readiness is done under a waiver naming the rack short of headroom, and nothing else.
    site = stage(demo, "site_readiness")
    b09 = Rack.objects.get(project=demo, name=OVER_BUDGET_RACK)
    assert (site.gate_passed, site.gate_missing_count, refs(site)) == (False, 1, [ref_of(b09)])
    [waiver] = site.waivers.all()
    assert (waiver.items, waiver.recorded_by.username) == ([ref_of(b09)], "manager") and "B09" in waiver.reason
    # Racking passed on its own: every device confirmed in its rack, by the technician.
    racking = stage(demo, "racking")
    assert racking.gate_passed and not racking.waivers.exists() and racking.completed_by.username == "manager"
    # Cabling is the one blocked stage: the cables not verified and the comparison's faults, named and counted.
    cabling = stage(demo, "cabling")
    assert list(blocked_stages(demo)) == [cabling]
    unverified = not_verified(demo)
    assert len(unverified) == 5
    comparison = TopologyComparison.objects.filter(project=demo).latest("created_at")
    assert cabling.gate_missing_count == len(unverified) + 1
    assert labels(cabling) == [f"Topology comparison #{comparison.pk}", *unverified]
    assert cabling.gate_summary == "5 of 1711 cables not verified; not clean: 1 missing, 3 miswired, 1 degraded."
    assert cabling.started_at < timezone.now() - timedelta(days=7)  # backdated with the history


def test_the_demo_cabling_stage_started_its_comparison_and_the_seeded_one_is_the_evidence(demo):
    from demo.checks import DEMO_SEED, demo_run

    cabling = stage(demo, "cabling")
    [(job_type, run_id)] = cabling.jobs
    latest = TopologyComparison.objects.filter(project=demo).latest("created_at")
    assert job_type == "validation.checkrun" and latest.run_id == demo_run(demo, CheckKind.TOPOLOGY).pk != run_id
    assert latest.run.options["seed"] == DEMO_SEED


def test_the_demo_punch_list_has_the_planted_faults_once_each_and_two_items_by_hand(demo, customer):
    comparison = TopologyComparison.objects.filter(project=demo).latest("created_at")
    faults = comparison.links.exclude(state=LinkState.OK).count()
    miswires = PunchItem.objects.filter(project=demo, source=PunchSource.TOPOLOGY)
    assert miswires.count() == faults == 5
    assert {(item.assignee.username, item.due_date is not None) for item in miswires} == {("technician", True)}
    links = PunchItem.objects.filter(project=demo, source=PunchSource.CHECK_RESULT,
                                     fingerprint__startswith=CheckKind.LINK_HEALTH)
    assert sorted(item.object_label for item in links) == failing_links(demo)
    by_hand = PunchItem.objects.filter(project=demo, source=PunchSource.MANUAL).order_by("id")
    assert [(i.title, i.customer_visible) for i in by_hand] == [(m.title, m.customer_visible) for m in MANUAL_ITEMS]
    assert all(item.assignee and item.due_date for item in by_hand)
    assert {True, False} == {item.customer_visible for item in by_hand}
    # The customer sees the customer-visible item, not the internal one.
    seen = set(punch_item_list(user=customer, project=demo).values_list("title", flat=True))
    assert {m.title for m in MANUAL_ITEMS if m.customer_visible} <= seen
    assert not {m.title for m in MANUAL_ITEMS if not m.customer_visible} & seen


def test_the_demo_burn_up_has_weeks_of_history_a_slope_and_a_forecast(demo, manager):
    today = timezone.localdate()
    series = cables_verified_series(user=manager, project=demo)
    days = sorted(series.by_day)
    assert len(days) == HISTORY_DAYS and days[0] == today - timedelta(days=HISTORY_DAYS) and days[-1] < today
    assert series.done == 1706 and series.total == 1711
    running = series.cumulative(days)
    assert running == sorted(running) and running[len(days) // 2] < running[-1]  # a slope, not one jump
    dashboard = project_dashboard(user=manager, project=demo)
    assert dashboard.first_day == days[0]
    assert dashboard.forecasts["cables verified"] is not None
    assert dashboard.headline.stage.key == "cabling"  # blocked mid-delivery, with its own pace
    assert dashboard.headline.forecast == dashboard.forecasts["cables verified"] <= demo.target_date


def test_the_demo_burn_up_keeps_its_history_when_the_fabric_is_compared_again(demo, manager):
    """A new comparison seeing the fabric as the demo's did moves every cable's fabric_checked_at to now; the
    burn-up dates the cables verified by the fabric's word by the comparison that verified them, so it keeps
    its weeks of history."""
    before = cables_verified_series(user=manager, project=demo)
    seen = dict(Cable.objects.filter(project=demo).exclude(fabric_state="").values_list("pk", "fabric_state"))
    now = timezone.now()
    assert cables_fabric_record(project=demo, observations=seen, checked_at=now, cause="again") == 0
    assert set(Cable.objects.filter(pk__in=seen).values_list("fabric_checked_at", flat=True)) == {now}
    after = cables_verified_series(user=manager, project=demo)
    assert (after.by_day, after.done, after.total) == (before.by_day, before.done, before.total)


def test_seed_demo_says_where_the_delivery_stands(demo_db):
    printed = re.search(r"DEMO-72: mid-delivery: Site readiness, Racking done \(1 waiver\); Cabling blocked "
                        r"\(5 of 1711 cables not verified; [^)]*\); (\d+) punch items: /p/DEMO-72/dashboard/ "
                        r"\([\d.]+ s\)", demo_db)
    assert printed, demo_db
    assert int(printed.group(1)) == PunchItem.objects.filter(project__code=DEMO_CODE).count()


def test_the_manager_sees_cabling_blocked_with_its_reasons_on_the_stages_page_and_the_portfolio(
        demo, client_for, manager):
    client = client_for(manager)
    stages_page = client.get(reverse("stages:list", args=[DEMO_CODE])).content.decode()
    assert "5 of 1711 cables not verified; not clean: 1 missing, 3 miswired, 1 degraded." in stages_page
    assert "Cabling: 6 missing" in client.get(reverse("delivery:portfolio")).content.decode()


# --- from there, through every stage ----------------------------------------------------------------------


def _complete_cabling_under_a_waiver(demo, manager) -> Waiver:
    cabling = stage(demo, "cabling")
    waiver = waiver_record(stage=cabling, user=manager, items=refs(cabling),
                           reason="The three miswires, the missing and the degraded link are re-cabled next week; "
                                  "link checks re-test them.")
    stage_complete(stage=stage(demo, "cabling"), user=manager)
    return waiver


def _complete_network_config(demo, manager, technician) -> None:
    network = stage_start(stage=stage(demo, "network_config"), user=manager)
    for item in network.checklist.all():
        checklist_item_confirm(item=item, user=technician)
    gates_recompute(project=demo)
    stage_complete(stage=stage(demo, "network_config"), user=manager)


def _complete_os_drivers(demo, manager) -> None:
    stage_start(stage=stage(demo, "os_drivers"), user=manager)
    _complete_os_drivers_after_start(demo, manager)


def _complete_os_drivers_after_start(demo, manager) -> None:
    os_drivers = stage(demo, "os_drivers")
    assert refs(os_drivers) == ["gate:no-pinned-versions"]
    waiver_record(stage=os_drivers, user=manager, items=refs(os_drivers),
                  reason="The customer pins the versions at acceptance.")
    stage_complete(stage=stage(demo, "os_drivers"), user=manager)


def _complete_link_checks(demo, manager) -> None:
    stage_start(stage=stage(demo, "link_checks"), user=manager)
    gates_recompute(project=demo)
    links = stage(demo, "link_checks")
    waiver_record(stage=links, user=manager, items=refs(links), reason="Both links are re-cabled with cabling.")
    stage_complete(stage=stage(demo, "link_checks"), user=manager)


def test_the_demo_walks_through_every_stage_to_the_customers_signature(demo, manager, technician, customer):
    # Cabling: refused, naming the comparison and every cable not verified, counted.
    cabling = stage(demo, "cabling")
    refusal = refused(cabling, manager)
    assert "(6 missing" in refusal and all(label in refusal for label in not_verified(demo))
    assert "Topology comparison" in refusal and "Not clean: 1 missing, 3 miswired, 1 degraded" in refusal
    waiver = _complete_cabling_under_a_waiver(demo, manager)
    assert stage(demo, "cabling").status == StageStatus.DONE and len(waiver.items) == 6

    # Network configuration: the six checklist items, named; confirmed by the technician, it completes.
    network = stage_start(stage=stage(demo, "network_config"), user=manager)
    gates_recompute(project=demo)
    refusal = refused(stage(demo, "network_config"), manager)
    assert "(6 missing" in refusal and all(item.text in refusal for item in network.checklist.all())
    for item in network.checklist.all():
        checklist_item_confirm(item=item, user=technician)
    gates_recompute(project=demo)
    stage_complete(stage=stage(demo, "network_config"), user=manager)
    assert network.checklist.filter(confirmed_by=technician).count() == 6

    # OS and drivers: no versions pinned; its start queues the node inventory check on every node.
    os_drivers = stage_start(stage=stage(demo, "os_drivers"), user=manager)
    assert [job_type for job_type, _ in os_drivers.jobs] == ["validation.checkrun"]
    assert "(1 missing" in refused(stage(demo, "os_drivers"), manager)
    _complete_os_drivers_after_start(demo, manager)

    # Link checks: the two links of the planted faults (the dirty fiber, the hot optic), named.
    stage_start(stage=stage(demo, "link_checks"), user=manager)
    gates_recompute(project=demo)
    links = stage(demo, "link_checks")
    assert (links.gate_missing_count, sorted(labels(links))) == (2, failing_links(demo))
    refusal = refused(links, manager)
    assert "(2 missing" in refusal and all(label in refusal for label in failing_links(demo))
    waiver_record(stage=links, user=manager, items=refs(links), reason="Re-cabled and re-tested with cabling.")
    stage_complete(stage=stage(demo, "link_checks"), user=manager)

    # Benchmarks: every pair with the slow GPU RDMA node fails: more than a named waiver can list.
    stage_start(stage=stage(demo, "benchmarks"), user=manager)
    gates_recompute(project=demo)
    benchmarks = stage(demo, "benchmarks")
    assert benchmarks.gate_missing_count > MISSING_EXAMPLES == len(benchmarks.gate_missing)
    assert f"({benchmarks.gate_missing_count} missing" in refused(benchmarks, manager)
    waiver_record(stage=benchmarks, user=manager, items=refs(benchmarks), reason="The ten listed.")
    # Named items cover only what the gate lists: the rest stay missing.
    more = benchmarks.gate_missing_count - MISSING_EXAMPLES
    assert f"and {more} more" in refused(stage(demo, "benchmarks"), manager)
    waiver_record(stage=stage(demo, "benchmarks"), user=manager, all_items=True,
                  reason="gpu-055's GPU RDMA path is replaced under RMA; the customer re-runs the matrix.")
    stage_complete(stage=stage(demo, "benchmarks"), user=manager)

    # Soak: its start opens the window; open, it cannot complete; waived, it can.
    soak = stage_start(stage=stage(demo, "soak"), user=manager)
    assert soak.jobs
    gates_recompute(project=demo)
    assert "Open until" in refused(stage(demo, "soak"), manager)
    waiver_record(stage=stage(demo, "soak"), user=manager, all_items=True,
                  reason="The customer soaks on their own training job.")
    stage_complete(stage=stage(demo, "soak"), user=manager)

    # Acceptance: refused until the customer signs the report. Version 1 (seed_demo's, made mid-delivery) says
    # the stages were not done: it is not issued, and cannot be signed. Every gate passing or waived now, a
    # version generated now is issued, and the customer accepts it with the open punch items and the waivers
    # as exceptions; that completes acceptance on their behalf.
    acceptance = stage_start(stage=stage(demo, "acceptance"), user=manager)
    assert "Acceptance report" in refused(acceptance, manager)
    first = ReportVersion.objects.get(project=demo, number=1)
    assert first.state == ReportState.DRAFT
    with pytest.raises(ValidationError, match="Version 1 is a draft, not issued for acceptance"):
        report_version_sign(version=first, user=customer, name="Claire Dubois", title="Head of infrastructure",
                            statement="We accept the cluster as delivered.")
    with pytest.raises(ValidationError) as stale:
        report_version_issue(version=first, user=manager)
    assert len(stale.value.messages) == 1  # no gate holds it back any more: only its own report
    assert stale.value.messages[0].startswith("Version 1 was generated while 6 stages before acceptance were not")
    version = report_version_request(project=demo, user=manager, enqueue=False)
    report_version_render(version_id=version.pk)
    version = report_version_issue(version=version, user=manager)
    with pytest.raises(ValidationError, match=r"There are \d+ open punch items .* and 7 waivers: accept version 2 "
                                              "with exceptions"):
        report_version_sign(version=version, user=customer, name="Claire Dubois", title="Head of infrastructure",
                            statement="We accept the cluster as delivered.")
    signature = report_version_sign(version=version, user=customer, name="Claire Dubois",
                                    title="Head of infrastructure", statement="We accept the cluster as delivered.",
                                    decision=ReportDecision.ACCEPTED_WITH_EXCEPTIONS)
    assert len(signature.exceptions["waivers"]) == 7 and signature.exceptions["punch_items"]
    acceptance = stage(demo, "acceptance")
    assert (acceptance.status, acceptance.completed_by) == (StageStatus.DONE, customer)
    assert statuses(demo) == dict.fromkeys(STAGE_KEYS, StageStatus.DONE)
    # Site readiness, cabling, OS and drivers, link checks, benchmarks (named, then all) and soak.
    assert Waiver.objects.filter(stage__project=demo).count() == 7


# --- regressions ------------------------------------------------------------------------------------------


def _walk_to_benchmarks(demo, manager, technician) -> None:
    """Cabling, network configuration, OS and drivers and link checks done; benchmarks started."""
    _complete_cabling_under_a_waiver(demo, manager)
    _complete_network_config(demo, manager, technician)
    _complete_os_drivers(demo, manager)
    _complete_link_checks(demo, manager)
    stage_start(stage=stage(demo, "benchmarks"), user=manager)
    gates_recompute(project=demo)


def test_a_verified_cable_found_faulty_reopens_cabling_and_blocks_exactly_what_depends_on_it(
        demo, manager, technician):
    _walk_to_benchmarks(demo, manager, technician)
    cable = Cable.objects.filter(project=demo, status=CableStatus.VERIFIED).order_by("label").first()
    cable_status_set(cables=[cable], status=CableStatus.FAULTY, user=technician, reason="Crushed under a tile")

    assert [s.key for s in gates_recompute(project=demo)] == ["cabling"]
    cabling = stage(demo, "cabling")
    assert cabling.status == StageStatus.IN_PROGRESS and cable.label in labels(cabling)
    assert cabling.status_reason.startswith("Reopened") and "6 of 1711 cables not verified" in cabling.status_reason
    after = statuses(demo)
    blocked = {key for key, status in after.items() if status == StageStatus.BLOCKED}
    assert blocked == {"network_config", "link_checks", "benchmarks"}  # what depends on cabling, started or done
    assert all("Waits for Cabling" in stage(demo, key).status_reason for key in blocked)
    assert {after[k] for k in ("site_readiness", "racking", "os_drivers")} == {StageStatus.DONE}
    assert {after[k] for k in ("soak", "acceptance")} == {StageStatus.NOT_STARTED}
    assert gates_recompute(project=demo) == []  # recomputed again: nothing new regresses


def test_a_link_failing_again_reopens_link_checks_and_blocks_benchmarks_not_cabling(demo, manager, technician):
    _walk_to_benchmarks(demo, manager, technician)
    passing = (CheckResult.objects.filter(run__project=demo, run__kind=CheckKind.LINK_HEALTH, verdict=Verdict.PASS,
                                          cable__isnull=False).select_related("cable").order_by("id").first())
    # The same link measured again by a later run, failing this time (rows copied: the test has no cluster).
    rerun = CheckRun.objects.get(pk=passing.run_id)
    rerun.pk, rerun._state.adding = None, True
    rerun.save()
    again = CheckResult.objects.get(pk=passing.pk)
    again.pk, again._state.adding, again.run = None, True, rerun
    again.verdict, again.finished_at = Verdict.FAIL, timezone.now()
    again.save()

    assert [s.key for s in gates_recompute(project=demo)] == ["link_checks"]
    links = stage(demo, "link_checks")
    assert links.status == StageStatus.IN_PROGRESS and passing.cable.label in labels(links)
    assert links.status_reason.startswith("Reopened") and "3 of 576 planned links" in links.status_reason
    benchmarks = stage(demo, "benchmarks")
    assert benchmarks.status == StageStatus.BLOCKED and "Waits for Link checks" in benchmarks.status_reason
    assert {key for key, status in statuses(demo).items() if status == StageStatus.DONE} == {
        "site_readiness", "racking", "cabling", "os_drivers", "network_config"}


def test_an_outsider_sees_none_of_the_demos_stages(demo, client_for):
    from tests.factories import UserFactory

    client = client_for(UserFactory(username="outsider-demo"))
    for url in (reverse("stages:list", args=[DEMO_CODE]), reverse("stages:detail", args=[DEMO_CODE, "cabling"])):
        assert client.get(url).status_code == 404
