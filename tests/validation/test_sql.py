"""validation.sql, each function against what the ORM (or plain Python over the ORM's rows) gives on the same
rows: the suite runs on SQLite here and on PostgreSQL in CI, so each holds on both, the database's branch
included. Through their callers: tests/validation/test_gate_link_checks.py (first_per_key) and
test_report_sections.py (first_per_key_ids)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from inventory.models import Port
from validation import sql
from validation.choices import CheckKind, ResultStatus, Verdict
from validation.models import CheckResult, CheckRun

pytestmark = pytest.mark.django_db

NEWEST_FIRST = (F("finished_at").desc(nulls_last=True), F("id").desc())


class RolledBack(Exception):
    pass


def state_after(write) -> dict:
    """Every result (id -> every concrete field) after `write()`, which is then rolled back."""
    snapshot = {}
    try:
        with transaction.atomic():
            write()
            snapshot = {row["id"]: row for row in CheckResult.objects.values()}
            raise RolledBack
    except RolledBack:
        pass
    return snapshot


@pytest.fixture
def results(project, nodes):
    """Results of three runs on four ports, some finished at the same moment, some not finished (NULL last)."""
    ports = list(Port.objects.filter(device__in=nodes, parent__isnull=False).order_by("pk")[:4])
    now = timezone.now()
    made = []
    for number in range(3):
        run = CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH)
        for index, port in enumerate(ports):
            finished = None if (number, index) == (2, 0) else now - timedelta(minutes=(number * 7 + index) % 4)
            made.append(CheckResult.objects.create(
                run=run, target_key=f"{port.pk}", port=port, status=ResultStatus.DONE, finished_at=finished,
                verdict=[Verdict.PASS, Verdict.FAIL, Verdict.WARN][(number + index) % 3]))
    return made


def test_check_results_write_writes_what_bulk_update_writes(results):
    rows = results[:5]
    at = timezone.now()
    for index, row in enumerate(rows):
        row.raw_output, row.stderr, row.exit_code = f"out {index}", "", index - 1
        row.metrics = {"counters": {"effective_ber": 1e-12 * index}, "state": "Active", "list": [1, None, "x"]}
        row.verdict, row.reasons = Verdict.FAIL, [{"level": "fail", "text": f"reason {index}"}]
        row.status, row.finished_at = ResultStatus.ERROR, at - timedelta(seconds=index)
    fields = ["raw_output", "stderr", "exit_code", "metrics", "verdict", "reasons", "status", "finished_at"]
    expected = state_after(lambda: CheckResult.objects.bulk_update(rows, fields))
    assert state_after(lambda: sql.check_results_write(rows=rows, fields=fields)) == expected
    assert expected[rows[2].pk]["metrics"]["list"] == [1, None, "x"]


def newest_by_python(rows: list[CheckResult]) -> dict[int, CheckResult]:
    """Per port, its newest result (finished latest, unfinished last; the highest id on a tie)."""
    newest: dict[int, CheckResult] = {}
    for row in rows:
        best = newest.get(row.port_id)
        key = (row.finished_at is not None, row.finished_at or timezone.now(), row.pk)
        if best is None or key > (best.finished_at is not None, best.finished_at or timezone.now(), best.pk):
            newest[row.port_id] = row
    return newest


def test_first_per_key_is_the_newest_row_of_each_key(results):
    expected = {port: row.verdict for port, row in newest_by_python(list(CheckResult.objects.all())).items()}
    rows = CheckResult.objects.order_by("port_id", *NEWEST_FIRST).values_list("port_id", "verdict")
    assert sql.first_per_key(rows=rows, key="port_id", chunk_size=2) == expected
    assert sql.first_per_key(rows=rows.none(), key="port_id") == {}


def test_first_per_key_ids_are_the_newest_row_of_each_key(results):
    expected = sorted(row.pk for row in newest_by_python(list(CheckResult.objects.all())).values())
    newest = sql.first_per_key_ids(rows=CheckResult.objects.all(), key="port_id", order=NEWEST_FIRST)
    assert sorted(CheckResult.objects.filter(pk__in=newest).values_list("pk", flat=True)) == expected
    assert len(expected) == 4
