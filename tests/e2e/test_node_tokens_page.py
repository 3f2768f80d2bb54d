"""The node tokens page in real Chromium on a tablet held upright: a manager makes a token from the project's
home, reads it once, a node posts with it, the manager revokes it and the node is refused. The page with
the token shown (the answer to the form, which the every-page walk does not visit) fits 768 px with 44 px
targets."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from projects.models import NodeToken
from tests.e2e.test_tablet_layout import MEASURE, MIN_TARGET
from tests.validation.conftest import fixture_text, make_gpu_nodes

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def post_upload(page, value: str, project_code: str):
    return page.request.post(
        "/api/uploads/",
        headers={"Authorization": f"Bearer {value}"},
        multipart={"project": project_code, "host": "gpu-001",
                   "file": {"name": "mlxlink.txt", "mimeType": "text/plain",
                            "buffer": fixture_text("mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt").encode()}},
    )


def test_a_manager_makes_a_token_a_node_uses_it_and_the_manager_revokes_it(page_for, manager, project):
    make_gpu_nodes(project, 1)
    page = page_for(manager, next_url=f"/p/{project.code}/")
    page.set_viewport_size({"width": 768, "height": 1024})
    page.get_by_role("link", name="Node tokens").click()
    page.get_by_label("Name").fill("gpu-001 collector")
    page.get_by_role("button", name="Make the token").click()

    value = page.locator("#issued-token-value").input_value()
    assert re.fullmatch(r"bnt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", value)
    seen = page.evaluate(MEASURE, MIN_TARGET)
    assert seen["scrollWidth"] <= seen["innerWidth"], seen["wide"]
    assert not seen["small"], seen["small"]

    posted = post_upload(page, value, project.code)  # the browser's session cookie goes along: the token wins
    assert posted.status == 201 and posted.json()["uploaded_by"] is None
    page.goto(f"/p/{project.code}/tokens/")
    expect(page.locator("#issued-token")).to_have_count(0)  # shown once
    row = page.locator("tr[data-token]")
    expect(row).to_contain_text("gpu-001 collector")
    expect(row).not_to_contain_text("never")  # its last use is listed

    row.get_by_role("button", name="Revoke gpu-001 collector").click()
    expect(page.locator("tr[data-token] .badge")).to_have_text("Revoked")
    refused = post_upload(page, value, project.code)
    assert refused.status == 401 and "revoked" in refused.json()["detail"]
    assert NodeToken.objects.get().revoked_by == manager
