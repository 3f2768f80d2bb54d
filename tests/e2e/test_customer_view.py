"""In the browser: the customer logs in and sees only their project (the list holds it alone), its stages and
their progress on the dashboard, the punch items shown to customers and not the internal one, the waiver a
stage was completed under, and the acceptance report's version 1; another project's pages answer 404, as do
the internal item's. At 768x1024, the tablet a customer's engineer brings to the site."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from delivery.models import Stage
from delivery.punch.services import punch_item_open
from delivery.reports.services import report_version_render, report_version_request
from delivery.stages.services import gates_recompute, stage_complete, stage_start, waiver_record
from tests.delivery.stages_world import build_world
from tests.e2e.test_stage_waiver import TABLET, assert_fits

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

VISIBLE = "Second power feed for rack A01"
INTERNAL = "Bent rail kit under gpu-002: spare in the cage"
WAIVER_REASON = "The leaf's serial label is unreadable; its replacement label is on order."


@pytest.fixture
def delivery_under_way(project, manager, technician, other_project, outsider):
    """Site readiness done, racking done under a waiver, cabling started; a punch item for the customer and
    an internal one; version 1 of the report rendered. `other_project` is a project the customer is not in."""
    build_world(project)
    gates_recompute(project=project)
    stage_complete(stage=Stage.objects.get(project=project, key="site_readiness"), user=manager)
    racking = stage_start(stage=Stage.objects.get(project=project, key="racking"), user=manager)
    gates_recompute(project=project)
    waiver_record(stage=racking, user=manager, all_items=True, reason=WAIVER_REASON)
    stage_complete(stage=racking, user=manager)
    stage_start(stage=Stage.objects.get(project=project, key="cabling"), user=manager)
    gates_recompute(project=project)
    punch_item_open(project=project, user=manager, title=VISIBLE, customer_visible=True, assignee=manager)
    internal = punch_item_open(project=project, user=manager, title=INTERNAL, assignee=technician)
    version = report_version_request(project=project, user=manager, enqueue=False)
    report_version_render(version_id=version.pk)
    return internal


def test_the_customer_sees_their_project_its_progress_visible_items_waivers_and_reports_only(
        page_for, project, customer, other_project, delivery_under_way):
    code, internal = project.code, delivery_under_way
    page = page_for(customer, viewport=TABLET)
    page.goto("/")
    expect(page.locator("main")).to_contain_text(code)
    expect(page.locator("main")).not_to_contain_text(other_project.code)

    page.goto(f"/p/{code}/dashboard/")
    stages = page.locator("#dash-stages")
    for title in ("Site readiness", "Racking", "Cabling", "Acceptance"):
        expect(stages).to_contain_text(title)
    expect(stages.locator('[data-stage="racking"] .state')).to_have_text("Done")
    expect(stages.locator('[data-stage="racking"]')).to_have_attribute("data-percent", "100")
    expect(stages.locator('[data-stage="cabling"] .state')).to_have_text("In progress")
    expect(stages.locator('[data-stage="cabling"] progress')).to_be_visible()
    expect(page.locator("#dash-punch")).to_contain_text(VISIBLE)
    expect(page.locator("#dash-punch")).not_to_contain_text(INTERNAL)
    assert_fits(page)

    page.goto(f"/p/{code}/punch/")
    expect(page.locator("#punch-items")).to_contain_text(VISIBLE)
    expect(page.locator("#punch-items")).not_to_contain_text(INTERNAL)
    assert page.goto(f"/p/{code}/punch/{internal.pk}/").status == 404

    page.goto(f"/p/{code}/stages/racking/")
    expect(page.locator("h1 .stage-status")).to_have_text("Done")
    expect(page.locator("#waivers")).to_contain_text(WAIVER_REASON)
    expect(page.locator("#actions")).to_have_count(0)  # a customer reads; only managers act
    expect(page.locator("#waivers form")).to_have_count(0)

    page.goto(f"/p/{code}/reports/")
    expect(page.locator('#versions [data-version="1"]')).to_contain_text("Rendered")
    assert_fits(page)

    for path in ("", "dashboard/", "stages/", "punch/", "reports/"):
        assert page.goto(f"/p/{other_project.code}/{path}").status == 404, path
