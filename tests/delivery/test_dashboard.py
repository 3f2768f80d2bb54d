"""The project dashboard (/p/<code>/dashboard/) and the portfolio (/projects/): the figures come from the
stored gates and the project's own timestamps (cables verified by scan or by the fabric, link-health
results), the page costs at most 20 queries whatever the size, and each kind of person sees what is theirs
(outsiders 404, customers without who-did-what)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus, FabricState, ScanAction, ScanResult
from cabling.models import Cable, ScanEvent
from cabling.services.fabric_states import cables_fabric_record
from core.choices import JobStatus
from delivery.dashboard.selectors import portfolio, project_dashboard, start_of_today
from delivery.models import Stage
from delivery.stages.services import gates_recompute, stages_create_from_template
from inventory.choices import DeviceRole
from inventory.models import Rack
from inventory.services import device_create
from projects.choices import Role
from tests.cabling.conftest import connect, ports_of, switch_model
from tests.factories import MembershipFactory, ProjectFactory, RackFactory, UserFactory, gpu_server_model
from tests.support import count_queries
from validation.choices import CheckKind, ResultStatus, Verdict
from validation.models import CheckResult, CheckRun

from .stages_world import build_world

pytestmark = pytest.mark.django_db

MAX_QUERIES = 20


def days_ago(n: int, hour: int = 12):
    return start_of_today() - timedelta(days=n) + timedelta(hours=hour)


def verify(cable: Cable, *, at, by_fabric: bool = False) -> None:
    """A cable verified by a scan (verified_at) or by the fabric's word only (fabric_verified_at; the comparison
    that saw it last, fabric_checked_at, is today's: the burn-up must not read that)."""
    fields = {"status": CableStatus.VERIFIED}
    fields.update({"fabric_state": FabricState.OK, "fabric_verified_at": at, "fabric_checked_at": timezone.now()}
                  if by_fabric else {"verified_at": at})
    Cable.objects.filter(pk=cable.pk).update(**fields)


def link_result(project, cable, *, verdict: str, at, status: str = JobStatus.DONE) -> CheckResult:
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=status,
                                  finished_at=at if status == JobStatus.DONE else None)
    return CheckResult.objects.create(run=run, target_key=cable.label, cable=cable, status=ResultStatus.DONE,
                                      verdict=verdict, finished_at=at)


@pytest.fixture
def world(project, manager, technician, customer):
    project.target_date = (timezone.localdate() + timedelta(days=30))
    project.save()
    return build_world(project)


def grow(project, racks: int, *, start: int = 2) -> None:
    """More racks of GPU nodes cabled to their own leaf, verified cables, results, scans and runs: what a
    bigger project has more of."""
    gpu, switch = gpu_server_model(), switch_model()
    tech = UserFactory(username=f"tech-{racks}")
    MembershipFactory(user=tech, project=project, role=Role.TECHNICIAN)
    for r in range(start, start + racks):
        rack = RackFactory(project=project, name=f"B{r:02}", row="B", position=r, power_budget_w=40_000)
        leaf = device_create(project=project, hardware_model=switch, name=f"leaf-b{r}", rack=rack, position_u=30,
                             role=DeviceRole.LEAF)
        for n in range(2):
            node = device_create(project=project, hardware_model=gpu, name=f"gpu-b{r}-{n}", rack=rack,
                                 position_u=1 + 10 * n, role=DeviceRole.GPU_NODE)
            cable = connect(project, f"CB{r:02}{n}", ports_of(node)["ib0"], ports_of(leaf)[f"p{n + 1}"], speed=800)
            verify(cable, at=days_ago(n + r % 5))
            link_result(project, cable, verdict=Verdict.PASS, at=days_ago(n))
            ScanEvent.objects.create(project=project, user=tech, action=ScanAction.RACK, raw_code=node.name,
                                     result=ScanResult.ACCEPTED)
    CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.RUNNING,
                            progress_total=10, progress_done=3)


# --- the figures ---------------------------------------------------------------------------------------


def test_the_burn_up_counts_cables_verified_by_scan_or_fabric_and_links_passing_by_day(world, manager):
    project = world.project
    verify(world.c1, at=days_ago(3))
    verify(world.c2, at=days_ago(1), by_fabric=True)
    link_result(project, world.c1, verdict=Verdict.FAIL, at=days_ago(4))
    link_result(project, world.c1, verdict=Verdict.PASS, at=days_ago(2))
    link_result(project, world.c2, verdict=Verdict.PASS, at=days_ago(2))
    link_result(project, world.c2, verdict=Verdict.FAIL, at=days_ago(1))  # passing no longer
    board = project_dashboard(user=manager, project=project)
    cables, links = board.series
    today = timezone.localdate()
    assert (cables.total, cables.done, dict(cables.by_day)) == (
        2, 2, {today - timedelta(days=3): 1, today - timedelta(days=1): 1})
    assert (links.total, links.done, dict(links.by_day)) == (2, 1, {today - timedelta(days=2): 1})
    assert board.forecasts["cables verified"] == today  # all verified
    # one of two links in the last 7 days: 1 left at 1/7 a day -> 7 days.
    assert board.forecasts["links passing"] == today + timedelta(days=7)
    assert board.stage_forecasts == {"cabling": today, "link_checks": today + timedelta(days=7)}


def test_a_cable_verified_by_the_fabric_keeps_its_burn_up_day_when_the_fabric_is_compared_again(world, manager):
    """The comparison that verified C00002 ran ten days ago; today's sees it ok again (and C00001 missing). The
    burn-up still counts C00002 on its day and the portfolio sees no cable verified lately (no forecast):
    fabric_checked_at moved to today, fabric_verified_at did not."""
    project = world.project
    for at in (days_ago(10), timezone.now()):
        cables_fabric_record(project=project, observations={world.c1.pk: FabricState.MISSING,
                                                            world.c2.pk: FabricState.OK},
                             checked_at=at, cause="topology comparison")
    cables, _ = project_dashboard(user=manager, project=project).series
    today = timezone.localdate()
    assert (cables.total, cables.done, dict(cables.by_day)) == (2, 1, {today - timedelta(days=10): 1})
    row = {row.project.code: row for row in portfolio(user=manager)}[project.code]
    assert row.forecasts[0] is None  # 1 of 2 verified, none in the last week: no rate, no date


def test_each_stage_shows_its_stored_gate_as_done_of_total(world, manager):
    project = world.project
    verify(world.c1, at=days_ago(1))
    gates_recompute(project=project)
    rows = {row.stage.key: row for row in project_dashboard(user=manager, project=project).stages}
    # cabling: 2 cables + the topology comparison; 1 cable and the (missing) comparison still missing.
    assert (rows["cabling"].done, rows["cabling"].total, rows["cabling"].percent) == (1, 3, 33)
    assert (rows["racking"].total, rows["racking"].done) == (3, 0)  # three devices, none confirmed by scan
    assert (rows["os_drivers"].total, rows["os_drivers"].done) == (2, 0)  # two GPU nodes
    assert (rows["link_checks"].total, rows["link_checks"].done) == (2, 0)
    assert rows["network_config"].total == 6 and rows["network_config"].done == 0  # the checklist's items
    assert (rows["soak"].total, rows["soak"].done) == (1, 0)  # a gate that does not count: met or not


def test_a_stage_never_computed_shows_nothing_done_and_a_skipped_one_all(world, manager):
    Stage.objects.filter(project=world.project, key="site_readiness").update(status="skipped")
    rows = {row.stage.key: row for row in project_dashboard(user=manager, project=world.project).stages}
    assert rows["site_readiness"].percent == 100
    assert rows["racking"].percent == 0


# --- the page ------------------------------------------------------------------------------------------


def test_the_manager_sees_stages_burn_up_heat_map_today_and_runs_in_progress(world, manager, technician,
                                                                              client_for):
    project = world.project
    verify(world.c1, at=days_ago(0, hour=0))
    gates_recompute(project=project)
    ScanEvent.objects.create(project=project, user=technician, action=ScanAction.RACK, raw_code="gpu-001",
                             result=ScanResult.ACCEPTED)
    running = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.RUNNING,
                                      progress_total=16, progress_done=4)
    finished = CheckRun.objects.create(project=project, kind=CheckKind.NCCL, status=JobStatus.DONE,
                                       finished_at=timezone.now())
    html = client_for(manager).get(reverse("delivery:dashboard", args=[project.code])).content.decode()
    assert re.search(r'data-stage="cabling" data-done="1" data-total="3" data-percent="33"', html)
    assert 'data-series="cables verified" data-done="1" data-total="2"' in html
    assert 'class="burnup"' in html and 'class="target"' in html
    assert 'data-rack="A01"' in html  # the heat map, each rack linking to its page
    rack = Rack.objects.get(project=project, name="A01")
    assert f'<a href="{reverse("inventory:rack-detail", args=[project.code, rack.pk])}"><g class="rack' in html
    assert 'data-network="compute"' in html
    assert 'data-user="tech"' in html and '<b id="scans-today">1</b>' in html
    assert f'data-run="{running.pk}"' in html and 'data-job="validation.checkrun:' in html
    assert f'data-run="{finished.pk}"' in html
    assert project.target_date.isoformat() in html


def test_the_customer_reads_the_dashboard_without_who_did_what(world, customer, technician, client_for):
    ScanEvent.objects.create(project=world.project, user=technician, action=ScanAction.RACK, raw_code="gpu-001",
                             result=ScanResult.ACCEPTED)
    response = client_for(customer).get(reverse("delivery:dashboard", args=[world.project.code]))
    html = response.content.decode()
    assert response.status_code == 200
    assert '<b id="scans-today">1</b>' in html  # the totals stay
    assert 'id="people-today"' not in html and 'data-user="tech"' not in html


def test_the_technician_reads_it_and_an_outsider_gets_404(world, technician, outsider, client_for, client):
    url = reverse("delivery:dashboard", args=[world.project.code])
    assert client_for(technician).get(url).status_code == 200
    client.logout()
    assert client.get(url).status_code == 302  # to the login page
    assert client_for(outsider).get(url).status_code == 404
    assert client_for(outsider).get(reverse("delivery:dashboard", args=["NO-SUCH"])).status_code == 404


def test_the_project_home_and_the_nav_link_to_the_dashboard(world, manager, client_for):
    html = client_for(manager).get(reverse("delivery:project-home", args=[world.project.code])).content.decode()
    url = reverse("delivery:dashboard", args=[world.project.code])
    assert f'href="{url}" id="dashboard-link"' in html and html.count(f'href="{url}"') >= 2


def test_the_dashboard_costs_at_most_20_queries_whatever_the_size(world, manager, technician, client_for,
                                                                  django_assert_max_num_queries):
    client = client_for(technician)
    url = reverse("delivery:dashboard", args=[world.project.code])
    gates_recompute(project=world.project)
    client.get(url)  # warm the caches a first request fills (content types, the stage template)
    with django_assert_max_num_queries(MAX_QUERIES):
        small = count_queries(lambda: client.get(url))
    grow(world.project, racks=6)
    gates_recompute(project=world.project)
    with django_assert_max_num_queries(MAX_QUERIES):
        response = client.get(url)
    assert 'data-rack="B07"' in response.content.decode()
    assert count_queries(lambda: client.get(url)) == small


# --- the portfolio -------------------------------------------------------------------------------------


def test_the_portfolio_shows_each_project_its_current_stage_blockers_and_forecast(world, manager, client_for):
    project = world.project
    verify(world.c1, at=days_ago(1))
    gates_recompute(project=project)
    Stage.objects.filter(project=project, key="site_readiness").update(status="done")
    Stage.objects.filter(project=project, key="racking").update(status="in_progress")
    Stage.objects.filter(project=project, key="cabling").update(status="blocked", status_reason="Racking reopened.")
    late = ProjectFactory(code="LATE-1", target_date=timezone.localdate() - timedelta(days=3))
    MembershipFactory(user=manager, project=late, role=Role.MANAGER)
    stages_create_from_template(project=late)
    ProjectFactory(code="NOT-MINE")
    rows = {row.project.code: row for row in portfolio(user=manager)}
    assert set(rows) == {project.code, "LATE-1"}
    acme = rows[project.code]
    assert acme.current.key == "racking" and acme.stages_done == 1 and acme.stage_count == 9
    assert {s.key for s in acme.blocked} == {"racking", "cabling"}  # its gate fails; blocked
    # 1 of 2 cables verified in the last week -> 7 days; links: none passing, none lately -> no forecast.
    assert acme.forecasts == [timezone.localdate() + timedelta(days=7), None]
    assert acme.forecast is None  # racking, the current stage, has no rate of its own: not enough data
    assert rows["LATE-1"].forecasts == [None, None]  # nothing planned: not finished today, no date at all
    assert rows["LATE-1"].forecast is None and rows["LATE-1"].late_by is None
    Stage.objects.filter(project=project, key="racking").update(status="done")
    rows = {row.project.code: row for row in portfolio(user=manager)}
    assert rows[project.code].current.key == "cabling"
    assert rows[project.code].forecast == timezone.localdate() + timedelta(days=7)  # cabling's own rate
    html = client_for(manager).get(reverse("delivery:portfolio")).content.decode()
    assert 'data-project="ACME-72"' in html and 'data-project="LATE-1"' in html and "NOT-MINE" not in html
    assert 'data-stage="cabling">Cabling: blocked (Racking reopened.)' in html
    assert "not enough data" in html


def test_the_portfolio_costs_the_same_for_one_project_as_for_several(world, manager, client_for):
    client = client_for(manager)
    url = reverse("delivery:portfolio")
    client.get(url)
    one = count_queries(lambda: client.get(url))
    for n in range(3):
        other = ProjectFactory(code=f"MORE-{n}")
        MembershipFactory(user=manager, project=other, role=Role.CUSTOMER)
        stages_create_from_template(project=other)
        grow(other, racks=1, start=n + 10)
    html = client.get(url).content.decode()
    assert html.count('data-project="MORE-') == 3
    assert count_queries(lambda: client.get(url)) == one


def test_the_portfolio_needs_a_sign_in_and_shows_an_outsider_none_of_the_project(world, outsider, client_for, client):
    client.logout()
    assert client.get(reverse("delivery:portfolio")).status_code == 302
    html = client_for(outsider).get(reverse("delivery:portfolio")).content.decode()
    assert world.project.code not in html and 'data-project="OTHER-8"' in html
    assert 'id="project-create-link"' not in html  # not staff, no permission


# --- punch items ---------------------------------------------------------------------------------------


def test_the_oldest_unresolved_punch_items_show_and_a_customer_sees_only_theirs(world, manager, customer, client_for):
    from delivery.choices import PunchStatus
    from delivery.models import PunchItem
    from delivery.punch.services import punch_item_open

    project = world.project
    items = [punch_item_open(project=project, user=manager, title=f"Item {n}", customer_visible=n % 2 == 0)
             for n in range(7)]
    for n, item in enumerate(items):
        PunchItem.objects.filter(pk=item.pk).update(opened_at=days_ago(20 - n))
    PunchItem.objects.filter(pk=items[0].pk).update(status=PunchStatus.VERIFIED)  # resolved: not shown
    url = reverse("delivery:dashboard", args=[project.code])
    html = client_for(manager).get(url).content.decode()
    shown = [int(pk) for pk in re.findall(r'data-punch="(\d+)"', html)]
    assert shown == [i.pk for i in items[1:6]]  # the five oldest unresolved, oldest first
    html = client_for(customer).get(url).content.decode()
    assert [int(pk) for pk in re.findall(r'data-punch="(\d+)"', html)] == [items[2].pk, items[4].pk, items[6].pk]


# --- the headline ------------------------------------------------------------------------------------


def headline_html(client, project) -> str:
    body = client.get(reverse("delivery:dashboard", args=[project.code])).content.decode()
    return body[body.index('<section class="card headline'):body.index('id="dash-stages"')]


def test_the_dashboard_leads_with_the_current_stage_its_blockers_and_its_own_forecast(world, manager, client_for):
    """The issue: the first figure was a green forecast of next week while 7 of 9 stages had not started. Now
    the current stage leads, with what holds it and when it finishes at its own pace."""
    project = world.project
    verify(world.c1, at=days_ago(1))
    gates_recompute(project=project)
    for key in ("site_readiness", "racking"):
        Stage.objects.filter(project=project, key=key).update(status="done")
    Stage.objects.filter(project=project, key="cabling").update(status="in_progress")
    board = project_dashboard(user=manager, project=project)
    cabling = Stage.objects.get(project=project, key="cabling")
    assert board.headline.stage.key == "cabling" and board.headline.has_rate
    assert board.headline.forecast == timezone.localdate() + timedelta(days=7)  # 1 of 2 cables in the week
    assert cabling.gate_summary in board.headline.blockers and any("C00002" in b for b in board.headline.blockers)
    html = headline_html(client_for(manager), project)
    assert "Now:" in html and "Cabling" in html and "C00002" in html
    assert f'data-forecast="{board.headline.forecast:%Y-%m-%d}"' in html and "forecast-ok" in html
    # Past the target: red, and by how many days.
    project.target_date = timezone.localdate() + timedelta(days=2)
    project.save()
    html = headline_html(client_for(manager), project)
    assert "is-late" in html and "forecast-late" in html and "5 days after the target" in html


def test_a_stage_without_a_rate_of_its_own_says_not_enough_data(world, manager, client_for):
    project = world.project
    verify(world.c1, at=days_ago(1))  # cabling has a pace; racking, the current stage, has none of its own
    gates_recompute(project=project)
    board = project_dashboard(user=manager, project=project)
    assert board.headline.stage.key == "site_readiness" and board.headline.forecast is None
    html = headline_html(client_for(manager), project)
    assert "not enough data" in html and "forecast-ok" not in html


def test_an_empty_project_forecasts_nothing(manager, client_for):
    empty = ProjectFactory(code="EMPTY-1")
    MembershipFactory(user=manager, project=empty, role=Role.MANAGER)
    stages_create_from_template(project=empty)
    board = project_dashboard(user=manager, project=empty)
    assert board.forecasts == {"cables verified": None, "links passing": None}
    assert board.headline.forecast is None
    assert "not enough data" in headline_html(client_for(manager), empty)
