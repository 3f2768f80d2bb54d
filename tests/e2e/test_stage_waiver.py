"""In the browser, on a tablet held upright (768x1024): a manager opens a blocked stage (racking, its gate
missing the three devices nobody confirmed by a scan), tries to complete it and is refused with the missing
items named, records a waiver of two of them, is refused again for the third, waives it too, completes the
stage and sees it done with both waivers shown. The stage page fits the tablet with 44 px targets."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from delivery.choices import StageStatus
from delivery.models import Stage, Waiver
from delivery.stages.services import gates_recompute, stage_complete, stage_start
from tests.delivery.stages_world import build_world
from tests.e2e.test_tablet_layout import MEASURE, MIN_TARGET

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

TABLET = {"width": 768, "height": 1024}


@pytest.fixture
def blocked_racking(project, manager):
    """The stages world with site readiness done and racking started, its gate missing every device."""
    world = build_world(project)
    gates_recompute(project=project)
    stage_complete(stage=Stage.objects.get(project=project, key="site_readiness"), user=manager)
    stage_start(stage=Stage.objects.get(project=project, key="racking"), user=manager)
    gates_recompute(project=project)
    return world


def assert_fits(page) -> None:
    seen = page.evaluate(MEASURE, MIN_TARGET)
    assert seen["scrollWidth"] <= seen["innerWidth"], f"scrolls sideways: {seen['wide']}"
    assert not seen["small"], f"targets under {MIN_TARGET}px: {seen['small'][:5]}"


def test_a_manager_waives_a_blocked_stages_missing_items_and_completes_it(page_for, project, manager,
                                                                        blocked_racking):
    page = page_for(manager, viewport=TABLET)
    page.goto(f"/p/{project.code}/stages/")
    page.locator('[data-stage="racking"] a').first.click()
    expect(page).to_have_url(re.compile(rf"/p/{project.code}/stages/racking/$"))
    gate = page.locator("#gate")
    expect(gate).to_contain_text("3 missing")
    for name in ("gpu-001", "gpu-002", "leaf-01"):
        expect(gate.locator(".missing")).to_contain_text(name)
    assert_fits(page)

    # Completing is refused, naming what is missing.
    page.locator("#actions").get_by_role("button", name="Complete").click()
    refusal = page.locator(".messages .error")
    expect(refusal).to_contain_text("Racking's gate does not pass (3 missing")
    expect(refusal).to_contain_text("gpu-001")

    # A waiver of two of the devices: the third still blocks completion.
    waiver = page.locator("#waivers form")
    waiver.get_by_label("gpu-001").check()
    waiver.get_by_label("gpu-002").check()
    # By its label: the skip form's reason has an id of its own, so this label points at the waiver's.
    waiver.get_by_label("Reason").fill("Both nodes go back to the vendor for new rails.")
    waiver.get_by_role("button", name="Record the waiver").click()
    expect(page.locator(".messages .success")).to_contain_text("Waiver recorded on Racking.")
    expect(page.locator("#waivers")).to_contain_text("Both nodes go back to the vendor for new rails")
    page.locator("#actions").get_by_role("button", name="Complete").click()
    expect(page.locator(".messages .error")).to_contain_text("leaf-01")

    # The last one waived: the stage may complete, and does.
    waiver = page.locator("#waivers form")
    waiver.get_by_label("leaf-01").check()
    waiver.get_by_label("Reason").fill("The leaf is swapped for a new one next week.")
    waiver.get_by_role("button", name="Record the waiver").click()
    expect(page.locator("#gate")).to_contain_text("Waivers cover every missing item")
    page.locator("#actions").get_by_role("button", name="Complete").click()
    expect(page.locator(".messages .success")).to_contain_text("Racking completed.")
    expect(page.locator("h1 .stage-status")).to_have_text("Done")
    waivers = page.locator("#waivers")
    expect(waivers).to_contain_text("Both nodes go back to the vendor")
    expect(waivers).to_contain_text("The leaf is swapped for a new one next week.")
    expect(page.locator("#waivers form")).to_have_count(0)  # done: nothing more to waive
    assert_fits(page)

    racking = Stage.objects.get(project=project, key="racking")
    assert (racking.status, racking.completed_by) == (StageStatus.DONE, manager)
    assert sorted(len(w.items) for w in Waiver.objects.filter(stage=racking)) == [1, 2]


def test_an_outsider_gets_404_for_the_stage_and_its_waiver_form(project, outsider, blocked_racking, client_for):
    client = client_for(outsider)
    assert client.get(f"/p/{project.code}/stages/racking/").status_code == 404
    response = client.post(f"/p/{project.code}/stages/racking/waive/", {"reason": "mine", "all_items": "on"})
    assert response.status_code == 404 and not Waiver.objects.exists()
