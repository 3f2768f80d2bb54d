"""In the browser: a technician starts a link-health run with the simulated runner on a small project,
sees its progress bar reach 100% and the injected faults among the results, worst first. Without a
broker the run executes while the start form's POST is answered; the page still shows the bar and the
status it would have polled."""

import re

import pytest
from playwright.sync_api import expect

from core.choices import JobStatus
from tests.validation.conftest import make_gpu_nodes
from validation.choices import CheckKind, Verdict
from validation.models import CheckRun

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The run page's progress box (templates/core/_progress.html inside #run-progress).
PERCENT = "#run-progress [data-progress-field=percent]"
STATUS = "#run-progress [data-progress-status]"


def test_technician_starts_a_link_health_run_and_sees_it_finish_with_the_faults(page_for, technician, project):
    make_gpu_nodes(project, 2)
    page = page_for(technician, next_url=f"/p/{project.code}/checks/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Check runs")

    form = page.locator("#start-run")
    form.get_by_label("Check").select_option(label="Link health (mlxlink)")
    form.get_by_label("Runner").select_option(label="Simulated (demo cluster)")
    form.get_by_label("Simulation seed").fill("1")
    form.get_by_role("button", name="Start run").click()

    expect(page).to_have_url(re.compile(rf"/p/{project.code}/checks/runs/\d+/$"))
    run = CheckRun.objects.get()
    bar = page.locator("#run-progress progress")
    expect(bar).to_have_attribute("max", str(run.progress_total))
    expect(bar).to_have_attribute("value", str(run.progress_total))
    expect(page.locator(PERCENT)).to_have_text("100")
    expect(page.locator(STATUS)).to_have_text("Done")

    failed = page.locator("tr.result[data-verdict='fail']")
    expect(failed).to_have_count(2)
    expect(page.locator("tr.result").first).to_have_attribute("data-verdict", "fail")  # worst first
    expect(failed.filter(has_text="effective BER")).to_have_count(1)  # the dirty fiber
    expect(failed.filter(has_text="Rx power lane")).to_have_count(1)  # the hot optic
    assert run.results.filter(verdict=Verdict.FAIL).count() == 2

    # Filtering the table to the failures keeps exactly those, and each links to its raw output.
    page.locator("#results").get_by_label("Verdict").select_option(label="Fail")
    page.locator("#results").get_by_role("button", name="Filter").click()
    expect(page.locator("tr.result")).to_have_count(2)
    page.locator("tr.result").first.get_by_role("link", name="raw output").click()
    expect(page.locator("body")).to_contain_text("Physical Counters and BER Info")


def test_customer_follows_the_run_but_gets_no_start_form(page_for, customer, project, technician):
    make_gpu_nodes(project, 1)
    CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, requested_by=technician,
                            progress_total=8, progress_done=3, status=JobStatus.RUNNING)
    page = page_for(customer, next_url=f"/p/{project.code}/checks/")
    expect(page.locator("#start-run")).to_have_count(0)
    expect(page.locator("tr.run progress")).to_have_attribute("value", "3")


def test_the_run_page_polls_its_status_until_the_run_finishes(page_for, technician, project):
    """With a worker the run is still going when its page opens: the bar follows the run row, and the
    page reloads itself once the run is finished."""
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, requested_by=technician,
                                  progress_total=4, progress_done=1, status=JobStatus.RUNNING)
    page = page_for(technician, next_url=f"/p/{project.code}/checks/runs/{run.pk}/")
    bar = page.locator("#run-progress progress")
    expect(bar).to_have_attribute("value", "1")
    CheckRun.objects.filter(pk=run.pk).update(progress_done=3)  # what a worker's progress report does
    expect(bar).to_have_attribute("value", "3")
    expect(page.locator(PERCENT)).to_have_text("75")
    CheckRun.objects.filter(pk=run.pk).update(progress_done=4, status=JobStatus.DONE)
    expect(page.locator(STATUS)).to_have_text("Done")
    expect(page.locator("#run-progress [data-progress-url]")).to_have_count(0)  # reloaded: nothing to poll
    expect(bar).to_have_attribute("value", "4")


def test_an_outsider_gets_not_found_on_the_run_page_and_its_status(page_for, outsider, project, technician):
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, requested_by=technician,
                                  progress_total=4, progress_done=1, status=JobStatus.RUNNING)
    page = page_for(outsider)
    for url in (f"/p/{project.code}/checks/runs/{run.pk}/", f"/api/jobs/{run.job_type}/{run.pk}/"):
        response = page.goto(url)
        assert response.status == 404, url
    expect(page.locator("body")).not_to_contain_text("Link health")
