"""In the browser: a manager generates version 1 of the acceptance report (rendered while the button's POST
is answered: no broker, eager tasks) and issues it for acceptance, the customer downloads the full PDF and
the workbook (their names, and bytes whose SHA-256 is the recorded one), accepts version 1 and sees
acceptance completed, on the version page and on the stages page; then drops the downloaded PDF on "Check a
file" (hashed in the browser: localhost is a secure context) and sees it is version 1, signed, and a copy
changed by one byte is no match. Without crypto.subtle (plain http on a site network) the file is uploaded
instead, with the same answer. Another walk, by what the pages say: issue, accept with the exceptions the
page lists, then, after a swap, the as-built addendum. The pages fit a tablet held upright (768x1024) with
44 px targets, their forms showing."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from cabling.choices import CableStatus
from cabling.models import Cable
from cabling.swaps.services import cable_swap
from delivery.choices import StageStatus
from delivery.models import PunchItem, ReportVersion, Stage, Waiver
from delivery.reports.gates import ACCEPTANCE_SIGNED
from delivery.reports.services import report_version_issue
from delivery.stages.services import stages_create_from_template
from tests.delivery.stages_world import build_world
from tests.e2e.test_stage_waiver import TABLET, assert_fits
from tests.e2e.test_tablet_layout import MEASURE, MIN_TARGET

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RESULT = "#check-result .check-outcome"

# A file dropped on the zone as a person's drag from the file manager would: a `drop` event whose
# DataTransfer holds the file (Playwright cannot drag from outside the browser).
DROP = """([selector, name, type, data]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, {type}));
  const zone = document.querySelector(selector);
  for (const kind of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(new DragEvent(kind, {dataTransfer: transfer, bubbles: true, cancelable: true}));
  }
}"""


@pytest.fixture
def acceptance_next(project):
    """The project's stages with every one before acceptance settled, so the customer's signature completes it."""
    stages_create_from_template(project=project)
    Stage.objects.filter(project=project).exclude(gate_key=ACCEPTANCE_SIGNED).update(status=StageStatus.SKIPPED)


def drop_file(page, name: str, data: bytes, content_type: str = "application/pdf") -> None:
    page.evaluate(DROP, ["#check-file [data-drop]", name, content_type, base64.b64encode(data).decode()])


def download(page, kind: str) -> tuple[str, bytes]:
    with page.expect_download() as started:
        page.locator(f'#versions [data-version="1"] [data-download="{kind}"]').click()
    got = started.value
    return got.suggested_filename, Path(got.path()).read_bytes()


def test_generate_download_sign_and_check_a_file(page_for, project, manager, customer, acceptance_next, tmp_path):
    code = project.code
    boss = page_for(manager, next_url=f"/p/{code}/reports/")
    expect(boss.locator("#no-versions")).to_be_visible()
    boss.get_by_role("button", name="Generate a new version").click()
    expect(boss).to_have_url(re.compile(rf"/p/{code}/reports/v1/$"))
    expect(boss.locator("#version [data-status-label]")).to_have_text("Rendered")
    expect(boss.locator("#version [data-state]")).to_have_text("Draft")
    boss.get_by_role("button", name="Issue version 1 for acceptance").click()
    expect(boss.locator("#version [data-issued]")).to_contain_text("Issued for acceptance on")
    version = ReportVersion.objects.get(project=project)

    page = page_for(customer, next_url=f"/p/{code}/reports/")
    expect(page.locator('#versions [data-version="1"]')).to_contain_text("Rendered")
    pdf_name, pdf = download(page, "pdf")
    xlsx_name, xlsx = download(page, "xlsx")
    assert (pdf_name, xlsx_name) == (f"{code}-acceptance-v1.pdf", f"{code}-acceptance-v1.xlsx")
    assert hashlib.sha256(pdf).hexdigest() == version.pdf_sha256 and pdf.startswith(b"%PDF")
    assert hashlib.sha256(xlsx).hexdigest() == version.xlsx_sha256 and xlsx.startswith(b"PK")

    page.locator('#versions [data-version="1"] h2 a').click()
    form = page.locator("#sign-form")
    expect(form.get_by_label("Statement")).to_have_value(re.compile(r"I accept “.*” \(.*\) as delivered by"))
    form.get_by_label("Your name").fill("Claire Dubois")
    form.get_by_label("Your title").fill("Head of infrastructure")
    form.get_by_label("I have read version 1 of the acceptance report").check()
    form.get_by_role("button", name="Accept version 1", exact=True).click()
    expect(page.locator("#signature")).to_contain_text("Signed by Claire Dubois, Head of infrastructure")
    expect(page.locator("#acceptance-state")).to_have_text("Acceptance is complete: the acceptance stage is done.")
    expect(page.locator("#sign-form")).to_have_count(0)

    page.goto(f"/p/{code}/stages/")
    expect(page.locator('[data-stage="acceptance"] .stage-status')).to_have_text("Done")

    page.goto(f"/p/{code}/reports/")
    drop_file(page, pdf_name, pdf)
    expect(page.locator(RESULT)).to_have_attribute("data-matched", "yes")
    expect(page.locator(RESULT)).to_contain_text(
        re.compile(r"Matches version 1 \(full PDF\), signed \d{4}-\d\d-\d\d by Claire Dubois\."))
    expect(page.locator(RESULT)).to_contain_text(version.pdf_sha256)

    changed = tmp_path / pdf_name
    changed.write_bytes(pdf[:-10] + bytes([pdf[-10] ^ 0x01]) + pdf[-9:])
    page.locator("#check-file-input").set_input_files(str(changed))  # picked, as a tap on a tablet does
    expect(page.locator(RESULT)).to_have_attribute("data-matched", "no")
    expect(page.locator(RESULT)).to_contain_text("No match")
    expect(page.locator(RESULT)).to_contain_text(hashlib.sha256(changed.read_bytes()).hexdigest())


def test_without_crypto_subtle_the_file_is_uploaded_with_the_same_answer(page_for, project, manager, customer,
                                                                         tmp_path):
    from tests.delivery.access_samples_report_pages import rendered_version, stand_in_bytes

    version = rendered_version(project, requested_by=manager)
    page = page_for(customer, next_url=f"/p/{project.code}/reports/")
    # What a page served over plain http (not localhost) sees: no secure context, so no crypto.subtle.
    page.context.add_init_script("Object.defineProperty(window, 'isSecureContext', {value: false});")
    uploads = []
    page.on("request", lambda request: uploads.append(request.method) if "/reports/check/" in request.url else None)
    page.reload()
    drop_file(page, "summary.pdf", stand_in_bytes(version, "summary_pdf"))
    expect(page.locator(RESULT)).to_contain_text("Matches version 1 (summary PDF), not signed.")
    assert uploads == ["POST"]


def test_issue_accept_with_exceptions_then_the_as_built_addendum_by_what_the_pages_say(
        page_for, project, manager, technician, customer):
    world = build_world(project)
    Stage.objects.filter(project=project).exclude(gate_key=ACCEPTANCE_SIGNED).update(status=StageStatus.SKIPPED)
    PunchItem.objects.create(project=project, title="Label the PDU feeds of rack A01", customer_visible=True,
                             opened_at=timezone.now(), object_label="A01")
    PunchItem.objects.create(project=project, title="Internal: order spare rails", opened_at=timezone.now())
    Waiver.objects.create(stage=Stage.objects.get(project=project, key="soak"), all_items=True, missing_count=1,
                          reason="The customer soaks on their own training job.", recorded_by=manager,
                          recorded_at=timezone.now())
    code = project.code

    # The manager generates version 1 and issues it: the page says so.
    boss = page_for(manager, next_url=f"/p/{code}/reports/", viewport=TABLET)
    boss.get_by_role("button", name="Generate a new version").click()
    expect(boss.locator("#version [data-state]")).to_have_text("Draft")
    boss.get_by_role("button", name="Issue version 1 for acceptance").click()
    expect(boss.locator("#version [data-state]")).to_have_text("Issued for acceptance")

    # The customer follows the list to the version, reads what is open, and accepts with it as exceptions.
    page = page_for(customer, next_url=f"/p/{code}/reports/", viewport=TABLET)
    expect(page.locator('#versions [data-version="1"] [data-awaits]')).to_contain_text("Waiting for the customer")
    page.get_by_role("link", name="Read it and decide").click()
    open_now = page.locator(".exceptions-now")
    expect(open_now).to_contain_text("Open now: 2 open punch items (1 internal) and 1 waiver.")
    expect(open_now).to_contain_text("Label the PDU feeds of rack A01")
    expect(open_now).to_contain_text("The customer soaks on their own training job.")
    expect(open_now).not_to_contain_text("spare rails")
    assert_fits(page)  # the forms showing, at 768x1024
    form = page.locator("#sign-form")
    form.get_by_label("Your name").fill("Claire Dubois")
    form.get_by_label("Your title").fill("Head of infrastructure")
    form.get_by_label("Comments (optional)").fill("Labels by Friday.")
    form.get_by_label("I have read version 1 of the acceptance report").check()
    form.get_by_role("button", name="Accept version 1 with exceptions").click()
    expect(page.locator("#version [data-decision]")).to_contain_text(
        "Accepted with exceptions by Claire Dubois, Head of infrastructure")
    expect(page.locator("#exceptions-recorded")).to_contain_text("Label the PDU feeds of rack A01")
    expect(page.locator("#exceptions-recorded")).to_contain_text("1 internal punch item open")
    expect(page.locator("#acceptance-state")).to_have_text("Acceptance is complete: the acceptance stage is done.")
    expect(page.locator("#sign-form")).to_have_count(0)
    expect(page.locator("#reject-form")).to_have_count(0)
    accepted = ReportVersion.objects.get(project=project, number=1)
    signed = (accepted.pdf_sha256, accepted.xlsx_sha256, accepted.signed_pdf_sha256)
    assert all(signed)

    # After the acceptance a cable is swapped: the reports page counts it and makes the addendum.
    Cable.objects.filter(pk=world.c1.pk).update(status=CableStatus.INSTALLED)
    cable_swap(cable=world.c1, new_serial="MT2399-NEW", user=technician, reason="Bent past its radius.")
    boss.goto(f"/p/{code}/reports/")
    expect(boss.locator("#changes-since-acceptance")).to_have_text("Changed since acceptance: 1 swap.")
    boss.get_by_role("button", name="Make the as-built addendum").click()
    expect(boss).to_have_url(re.compile(rf"/p/{code}/reports/v2/$"))
    expect(boss.locator("#version [data-addendum]")).to_contain_text("As-built addendum to version 1")
    expect(boss.locator("#contents li").first).to_have_text("As-built changes since version 1")
    expect(boss.locator("#issue")).to_have_count(0)
    boss.goto(f"/p/{code}/reports/v1/")
    expect(boss.locator("#addenda")).to_contain_text("version 2")
    accepted.refresh_from_db()
    assert (accepted.pdf_sha256, accepted.xlsx_sha256, accepted.signed_pdf_sha256) == signed


def test_the_report_pages_fit_a_tablet_held_upright(browser, live_server, project, manager, customer):
    from tests.delivery.access_samples_report_pages import rendered_version
    from tests.e2e.conftest import TEST_PASSWORD, close_contexts

    rendered_version(project, requested_by=manager, number=1)
    # Version 2 issued: the customer's page shows the decision forms, the manager's version 1 its Issue part.
    report_version_issue(version=rendered_version(project, requested_by=manager, number=2), user=manager)
    failures = []
    for user in (manager, customer):
        context = browser.new_context(viewport={"width": 768, "height": 1024}, base_url=live_server.url)
        page = context.new_page()
        page.goto("/login/")
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(TEST_PASSWORD)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        for path in (f"/p/{project.code}/reports/", f"/p/{project.code}/reports/v1/",
                     f"/p/{project.code}/reports/v2/"):
            page.goto(path)
            if page.locator("#check-file summary").count():  # the SHA-256 form opened, its controls measured too
                page.locator("#check-file summary").click()
            seen = page.evaluate(MEASURE, MIN_TARGET)
            if seen["scrollWidth"] > seen["innerWidth"] or seen["small"]:
                failures.append(f"{user.get_username()} {path}: {seen}")
        close_contexts([context])
    assert not failures, "\n".join(failures)
