"""The link-checks gate: each planned link judged by its latest settled link-health result, found with one
ordered query (not a subquery per cable), so its query count does not grow with the fabric."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from validation.choices import CheckKind, ResultStatus, Verdict
from validation.gates import latest_link_verdicts, link_checks_gate
from validation.models import CheckResult, CheckRun

from ..cabling.conftest import connect, ports_of
from ..delivery.stages_world import build_world

pytestmark = pytest.mark.django_db


def result(project, cable, verdict, *, minutes_ago, status=ResultStatus.DONE):
    at = timezone.now() - timedelta(minutes=minutes_ago)
    run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH)
    return CheckResult.objects.create(run=run, target_key=cable.label, cable=cable, status=status, verdict=verdict,
                                      finished_at=None if status == ResultStatus.RUNNING else at)


@pytest.fixture
def world(project):
    return build_world(project)


def test_the_latest_settled_result_of_each_link_decides(world):
    project = world.project
    result(project, world.c1, Verdict.FAIL, minutes_ago=30)
    result(project, world.c1, Verdict.PASS, minutes_ago=10)  # fixed since
    result(project, world.c2, Verdict.PASS, minutes_ago=30)
    result(project, world.c2, Verdict.FAIL, minutes_ago=5)  # broke since
    result(project, world.c2, "", minutes_ago=0, status=ResultStatus.RUNNING)  # not settled: does not count

    assert latest_link_verdicts(project) == {world.c1.pk: Verdict.PASS, world.c2.pk: Verdict.FAIL}
    outcome = link_checks_gate(project)
    assert not outcome.passed and outcome.missing_count == 1
    assert [item.label for item in outcome.missing] == ["C00002"]
    assert outcome.missing[0].reason == "Latest link-health result: fail."
    assert outcome.summary == "1 of 2 planned links without a passing link-health result."


def test_a_link_never_measured_is_missing_and_all_passing_passes(world):
    project = world.project
    result(project, world.c1, Verdict.WARN, minutes_ago=1)  # a warning is a working link
    outcome = link_checks_gate(project)
    assert [(item.label, item.reason) for item in outcome.missing] == [("C00002", "No link-health result yet.")]
    result(project, world.c2, Verdict.PASS, minutes_ago=1)
    outcome = link_checks_gate(project)
    assert outcome.passed and outcome.summary == "All 2 planned links pass link health."


def test_queries_do_not_grow_with_the_links(world, django_assert_max_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    project = world.project
    with CaptureQueriesContext(connection) as small:
        link_checks_gate(project)
    leaf_ports = ports_of(world.leaf)
    for index, device in enumerate((world.gpu1, world.gpu2)):
        ports = ports_of(device)
        for number in range(1, 4):  # ib1..ib3 to the leaf's free ports p3..p8: six more links
            cable = connect(project, f"C1{index}{number:03d}", ports[f"ib{number}"],
                            leaf_ports[f"p{2 + index * 3 + number}"], speed=800)
            result(project, cable, Verdict.FAIL, minutes_ago=1)
    with django_assert_max_num_queries(len(small.captured_queries)):
        outcome = link_checks_gate(project)
    assert outcome.missing_count == 8 and len(outcome.missing) == 8
