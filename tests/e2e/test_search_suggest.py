"""The header's search suggests as people type, in real Chromium on a tablet held upright: the start of a name
lists the devices it starts, each a 44 px target, and tapping one opens its page; Enter still opens the search
page; an outsider's typing in their own project never suggests another project's devices."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.e2e.test_tablet_layout import MIN_TARGET
from tests.validation.conftest import make_gpu_nodes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_typing_the_start_of_a_name_suggests_its_devices_and_a_tap_opens_one(page_for, technician, project):
    make_gpu_nodes(project, 12)  # gpu-001 .. gpu-012
    page = page_for(technician, next_url=f"/p/{project.code}/", viewport={"width": 768, "height": 1024})
    field = page.get_by_role("searchbox", name="Find a code")
    field.press_sequentially("gpu-01", delay=30)
    suggestions = page.locator("#search-suggestions a")
    expect(suggestions).to_have_count(3)  # gpu-010, gpu-011, gpu-012
    assert [text.split()[0] for text in suggestions.all_inner_texts()] == ["gpu-010", "gpu-011", "gpu-012"]
    for box in (suggestions.nth(i).bounding_box() for i in range(3)):
        assert box["height"] >= MIN_TARGET and box["x"] + box["width"] <= 768
    suggestions.nth(1).click()
    expect(page.locator("h1")).to_contain_text("gpu-011")


def test_enter_opens_the_search_page_with_every_match(page_for, technician, project):
    make_gpu_nodes(project, 12)
    page = page_for(technician, next_url=f"/p/{project.code}/", viewport={"width": 768, "height": 1024})
    field = page.get_by_role("searchbox", name="Find a code")
    field.fill("gpu-00")
    field.press("Enter")
    expect(page.locator("#matches tbody tr")).to_have_count(9)


def test_suggestions_stay_inside_the_project(page_for, outsider, project, other_project):
    make_gpu_nodes(project, 3)
    page = page_for(outsider, next_url=f"/p/{other_project.code}/", viewport={"width": 768, "height": 1024})
    page.get_by_role("searchbox", name="Find a code").press_sequentially("gpu-0", delay=30)
    page.wait_for_timeout(600)  # past the pause and the answer
    expect(page.locator("#search-suggestions a")).to_have_count(0)
