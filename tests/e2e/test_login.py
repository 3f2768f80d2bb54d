"""Logging in through the browser: a member reaches the project; an outsider cannot."""

import re

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_technician_logs_in_lands_on_project_list_and_opens_the_project(page_for, technician, project):
    page = page_for(technician)
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_role("heading", name="Your projects")).to_be_visible()
    page.get_by_role("link", name=project.code, exact=True).click()
    expect(page).to_have_url(re.compile(rf"/p/{project.code}/$"))
    expect(page.get_by_role("heading", level=1)).to_contain_text(project.name)


def test_outsider_sees_no_link_to_the_project_and_gets_404(page_for, outsider, project, other_project):
    page = page_for(outsider)
    expect(page.get_by_role("link", name=other_project.code, exact=True)).to_be_visible()
    expect(page.get_by_role("link", name=project.code, exact=True)).to_have_count(0)
    response = page.goto(f"/p/{project.code}/")
    assert response.status == 404
    expect(page.get_by_text(project.name)).to_have_count(0)
