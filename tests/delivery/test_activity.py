"""The project's activity feed (/p/<code>/activity/, delivery/activity/): events merged from the rows
the delivery keeps (stages started, completed and reopened, waivers, punch items, report versions, check
runs, topology comparisons, scans), newest first, paged, in the same number of queries for one event as
for many; a customer never sees internal punch items, why a stage reopened, or who scanned; outsiders 404."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from cabling.choices import ScanAction, ScanResult
from cabling.models import ScanEvent
from core.choices import JobStatus
from delivery.activity.selectors import PAGE_SIZE, project_activity
from delivery.models import ChecklistItem, PunchItem, ReportVersion
from delivery.stages.services import (
    checklist_item_confirm,
    gates_recompute,
    stage_add_custom,
    stage_complete,
    stage_start,
    waiver_record,
)
from tests.support import count_queries
from validation.choices import CheckKind
from validation.models import CheckRun, TopologyComparison

pytestmark = pytest.mark.django_db


def page_of(client, project, page=None):
    url = reverse("delivery:activity", args=[project.code]) + (f"?page={page}" if page else "")
    return client.get(url)


def scans(project, user, n):
    for i in range(n):
        ScanEvent.objects.create(project=project, user=user, action=ScanAction.LOOKUP, raw_code=f"C{i:05d}",
                                 result=ScanResult.FOUND)


@pytest.fixture
def feed(project, manager, technician, customer):
    """A completed custom stage that then reopened (its checklist item unconfirmed behind the gate's back),
    a visible and an internal punch item, a finished check run and comparison, a rendered version, scans."""
    manager.first_name, manager.last_name = "Mia", "Manager"
    manager.save()
    technician.first_name, technician.last_name = "Tom", "Tech"
    technician.save()
    stage = stage_add_custom(project=project, user=manager, title="Badge access", checklist=["Badges issued"],
                             depends_on=[])
    checklist_item_confirm(item=stage.checklist.get(), user=technician)
    gates_recompute(project=project)
    stage.refresh_from_db()
    stage_complete(stage=stage_start(stage=stage, user=manager), user=manager)
    ChecklistItem.objects.filter(stage=stage).update(confirmed_at=None, confirmed_by=None)
    gates_recompute(project=project)  # the regression: reopened, with why (internal)
    stage.refresh_from_db()
    waiver_record(stage=stage, user=manager, reason="Badges come with the handover", all_items=True)
    now = timezone.now()
    PunchItem.objects.create(project=project, title="Loose latch on rack door", customer_visible=True,
                             opened_at=now, opened_by=technician)
    PunchItem.objects.create(project=project, title="Internal: relabel spares shelf", opened_at=now)
    CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.DONE,
                            finished_at=now, requested_by=technician)
    TopologyComparison.objects.create(project=project, status=JobStatus.DONE, finished_at=now,
                                      counts={"ok": 10, "miswired": 2})
    ReportVersion.objects.create(project=project, number=1, status=JobStatus.DONE, finished_at=now,
                                 requested_by=manager)
    scans(project, technician, 3)
    return stage


def test_the_team_sees_every_kind_of_event_newest_first(project, feed, manager, client_for):
    response = page_of(client_for(manager), project)
    assert response.status_code == 200
    body = response.content.decode()
    for text in ("Badge access started", "Badge access completed", "Badge access reopened",
                 "1 of 1 checklist items not confirmed", "Loose latch on rack door",
                 "Internal: relabel spares shelf", "Link health (mlxlink) run #", "2 link(s) not as planned",
                 "Acceptance report version 1 rendered", "3 scan(s) on", "Tom Tech",
                 "Waiver recorded on Badge access: Badges come with the handover"):
        assert text in body, text
    events = response.context["activity"].events
    assert [e.at for e in events] == sorted((e.at for e in events), reverse=True)


def test_a_customer_sees_no_internal_items_no_reasons_and_not_who_scanned(project, feed, customer, client_for):
    response = page_of(client_for(customer), project)
    assert response.status_code == 200
    body = response.content.decode()
    assert "Loose latch on rack door" in body and "Badge access reopened" in body and "Waiver recorded" in body
    assert "Internal: relabel spares shelf" not in body
    assert "checklist items not confirmed" not in body  # why it reopened is the team's
    scan_days = [e for e in response.context["activity"].events if e.kind == "scan"]
    assert [e.text.split(" on ")[0] for e in scan_days] == ["3 scan(s)"] and scan_days[0].who == ""
    assert 'class="activity-scan"' in body


def test_an_outsider_gets_404_and_anonymous_the_login_page(project, feed, outsider, client, client_for):
    response = page_of(client, project)
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert page_of(client_for(outsider), project).status_code == 404


def test_pages_newest_first_and_the_query_count_does_not_grow_with_the_events(project, manager, technician):
    PunchItem.objects.create(project=project, title="Only one", opened_at=timezone.now())

    def first_page():
        return project_activity(user=manager, project=project, role="manager", page=1)

    first_page()  # the user's role in the project is then cached on the user, as in a request
    few = count_queries(first_page)
    start = timezone.now() - timedelta(days=30)
    PunchItem.objects.bulk_create([PunchItem(project=project, title=f"Item {n}", opened_at=start + timedelta(hours=n),
                                             fixed_at=start + timedelta(hours=n, minutes=5))
                                   for n in range(PAGE_SIZE)])
    scans(project, technician, 20)
    for n in range(5):
        CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, status=JobStatus.DONE,
                                finished_at=start + timedelta(minutes=n))
    assert count_queries(first_page) == few

    first = first_page()
    assert len(first.events) == PAGE_SIZE and first.has_next and not first.has_previous
    second = project_activity(user=manager, project=project, role="manager", page=2)
    assert second.has_previous and second.events and second.events[0].at <= first.events[-1].at
    third = project_activity(user=manager, project=project, role="manager", page=3)
    assert second.has_next and not third.has_next
    shown = [*first.events, *second.events, *third.events]
    assert len(shown) == 1 + 2 * PAGE_SIZE + 1 + 5  # every item opened and fixed, the day's scans, the runs
    assert [e.at for e in shown] == sorted((e.at for e in shown), reverse=True)


def test_the_page_costs_the_same_queries_for_one_event_as_for_many(
        project, manager, client_for, django_assert_num_queries):
    client = client_for(manager)
    PunchItem.objects.create(project=project, title="Only one", opened_at=timezone.now())
    few = count_queries(lambda: page_of(client, project))
    PunchItem.objects.bulk_create([PunchItem(project=project, title=f"Item {n}", opened_at=timezone.now())
                                   for n in range(80)])
    with django_assert_num_queries(few):
        response = page_of(client, project)
    assert 'rel="next"' in response.content.decode()


def test_a_hostile_page_number_is_not_an_error(project, manager, client_for):
    client = client_for(manager)
    for page in ("abc", "-3", "99999999999999999999"):
        assert page_of(client, project, page).status_code == 200
