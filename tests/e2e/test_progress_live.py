"""In Chromium: the manager's floor progress keeps itself up to date. A scan recorded while the page is
open shows in its latest scans and its counts without the manager reloading the page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from cabling.choices import ScanAction
from cabling.services import scan_record
from tests.cabling.conftest import fabric  # noqa: F401 (fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_progress_page_shows_a_new_scan_without_a_reload(page_for, manager, technician, fabric):  # noqa: F811
    page = page_for(manager)
    page.goto(f"/p/{fabric.project.code}/cabling/progress/")
    latest = page.locator("#latest-scans")
    expect(latest).to_contain_text("No scans yet.")
    page.evaluate("window.__same_document = true")  # gone if the page were loaded again

    scan_record(user=technician, project=fabric.project, action=ScanAction.CABLE_END, code="C00001/A",
                port_code="gpu-001:ib0/0", idempotency_key="live-scan-0001")
    page.evaluate("document.dispatchEvent(new Event('visibilitychange'))")  # what the 30 s timer does

    expect(latest).to_contain_text("C00001/A")
    expect(page.locator("[data-live-stamp]")).to_contain_text("Updated")
    assert page.evaluate("window.__same_document") is True
