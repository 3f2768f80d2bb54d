"""The topology pages: upload (files kept as they came, a bad file with the line where parsing stopped),
the list, a comparison (counts, chart, what changed, advice), a file as uploaded, the cable page's panel;
who may do what; query counts that do not grow with the data."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from cabling.models import Cable
from core.choices import JobStatus
from tests.support import count_queries
from validation.choices import CheckKind, LinkState, ResultStatus, RunnerKind, TopologySource, Verdict
from validation.models import CheckResult, CheckRun, TopologyComparison, TopologyLink

from .conftest import fixture_text
from .test_topology_fixtures import compare_files
from .topology_support import port, sb7700_fabric

pytestmark = pytest.mark.django_db

IB = "iblinkinfo_02_edr_sb7700_down_polling.txt"


def url(name, project, *args):
    return reverse(f"validation:{name}", args=[project.code, *args])


def upload(client, project, *files, host="", capture=None):
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files], "host": host}
    with capture(execute=True):
        return client.post(url("topology-new", project), data)


def test_a_technician_uploads_outputs_and_sees_the_comparison(
    client_for, technician, project, django_capture_on_commit_callbacks
):
    sb7700_fabric(project)
    client = client_for(technician)
    response = upload(client, project, (IB, fixture_text(IB).encode()), ("notes.txt", b"hello\nworld\n"),
                      capture=django_capture_on_commit_callbacks)
    comparison = TopologyComparison.objects.get()
    assert response.status_code == 302 and response["Location"] == url("topology-detail", project, comparison.pk)
    assert (comparison.status, comparison.source, comparison.requested_by) == (
        JobStatus.DONE, TopologySource.PAGE, technician)
    page = client.get(response["Location"]).content.decode()
    assert re.search(r'data-state="ok"[^>]*><b>3</b>', page) and re.search(r'data-state="missing"[^>]*><b>1</b>', page)
    assert 'data-key="C4"' in page and "Check C4 at both ends" in page and "SB7700:p1 is Down/Polling" in page
    assert 'class="bar" data-state="missing" data-count="1"' in page  # the chart
    assert "Stopped at line 1: line 1: could not tell which tool produced this output" in page
    # Both files are kept as they came.
    files = {f.original_name: f for f in comparison.files.all()}
    kept = client.get(url("topology-file", project, comparison.pk, files["notes.txt"].pk))
    assert b"".join(kept.streaming_content) == b"hello\nworld\n"
    assert files[IB].sha256 == __import__("hashlib").sha256(fixture_text(IB).encode()).hexdigest()


def test_what_changed_since_the_previous_comparison(
    client_for, technician, project, django_capture_on_commit_callbacks
):
    sb7700_fabric(project)
    client = client_for(technician)
    upload(client, project, (IB, fixture_text(IB).encode()), capture=django_capture_on_commit_callbacks)
    # The second output: C4 plugged in (port 1 up to n03), and the rest as before.
    up = fixture_text(IB).replace(
        "           2    1[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )",
        "           2    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       7    1[  ] \"n03 HCA-1\" ( )",
    )
    upload(client, project, (IB, up.encode()), capture=django_capture_on_commit_callbacks)
    first, second = TopologyComparison.objects.order_by("id")
    assert second.previous == first and second.changes == {"new": 0, "still": 0, "fixed": 1}
    page = client.get(url("topology-detail", project, second.pk)).content.decode()
    assert f"Against <a href=\"{url('topology-detail', project, first.pk)}\">#{first.pk}</a>" in page
    assert 'data-change="fixed"><b>1</b>' in page
    fixed = client.get(url("topology-detail", project, second.pk) + "?change=fixed").content.decode()
    assert 'data-key="C4" data-state="ok" data-change="fixed"' in fixed
    assert Cable.objects.get(project=project, label="C4").fabric_state == "ok"


def test_who_may_upload_and_who_may_see(client_for, manager, customer, outsider, project,
                                        django_capture_on_commit_callbacks):
    sb7700_fabric(project)
    comparison = compare_files(project, IB)
    client = client_for(customer)
    assert client.get(url("topology-list", project)).status_code == 200
    assert 'name="files"' not in client.get(url("topology-list", project)).content.decode()
    assert client.get(url("topology-detail", project, comparison.pk)).status_code == 200
    assert client.get(url("topology-new", project)).status_code == 403
    response = upload(client, project, (IB, b"x"), capture=django_capture_on_commit_callbacks)
    assert response.status_code == 403 and TopologyComparison.objects.count() == 1
    client = client_for(outsider)
    for name, args in (("topology-list", ()), ("topology-detail", (comparison.pk,)),
                       ("topology-file", (comparison.pk, comparison.files.get().pk))):
        assert client.get(url(name, project, *args)).status_code == 404
    assert upload(client, project, (IB, b"x"), capture=django_capture_on_commit_callbacks).status_code == 404
    assert 'name="files"' in client_for(manager).get(url("topology-list", project)).content.decode()


def _comparison_with_links(project, n: int) -> TopologyComparison:
    sb = sb7700_fabric(project) if not Cable.objects.filter(project=project).exists() else None
    cable = Cable.objects.filter(project=project).first() if sb is None else sb["C1"]
    comparison = TopologyComparison.objects.create(project=project, status=JobStatus.DONE,
                                                   counts={"ok": 5, "missing": n}, changes={"new": n})
    TopologyLink.objects.bulk_create(
        TopologyLink(comparison=comparison, key=f"K{i}", state=LinkState.MISSING, cable=cable, cable_label="C1",
                     planned_a="a", planned_b="b", advice="Plug it in.")
        for i in range(n)
    )
    return comparison


def test_list_and_detail_pages_make_the_same_queries_for_few_and_many(client_for, technician, project,
                                                                      django_assert_num_queries):
    client = client_for(technician)
    small = _comparison_with_links(project, 2)
    few = count_queries(lambda: client.get(url("topology-detail", project, small.pk)).content)
    big = _comparison_with_links(project, 120)
    with django_assert_num_queries(few):
        page = client.get(url("topology-detail", project, big.pk)).content.decode()
    assert page.count('class="topo-link state-missing"') == 50  # one page of them
    listed = count_queries(lambda: client.get(url("topology-list", project)).content)
    for _ in range(30):
        _comparison_with_links(project, 1)
    with django_assert_num_queries(listed):
        client.get(url("topology-list", project))


def test_the_cable_page_shows_the_fabrics_view_and_link_health(client_for, customer, project,
                                                               django_assert_num_queries):
    cables = sb7700_fabric(project)
    compare_files(project, IB)
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SIMULATED,
                                  status=JobStatus.DONE)
    n03 = port(project, "n03:ib0")
    CheckResult.objects.create(run=run, target_key="n03:ib0", port=n03, device=n03.device, cable=cables["C4"],
                               status=ResultStatus.DONE, verdict=Verdict.FAIL,
                               reasons=[{"level": "fail", "text": "link is Down"}])
    client = client_for(customer)
    address = reverse("cabling:cable-detail", args=[project.code, cables["C4"].pk])
    few = count_queries(lambda: client.get(address).content)
    page = client.get(address).content.decode()
    panel = page[page.index('id="panel-fabric"'):]
    assert "Missing (down or absent)" in panel and "Check C4 at both ends" in panel
    assert "link is Down" in panel and "n03:ib0" in panel
    for i in range(4):
        CheckResult.objects.create(run=run, target_key=f"again-{i}", port=n03, cable=cables["C4"],
                                   status=ResultStatus.DONE, verdict=Verdict.PASS)
    with django_assert_num_queries(few):
        client.get(address)
