"""delivery.sql, each function against the ORM's reading of the same rows: the suite runs on SQLite here and on
PostgreSQL in CI, so each holds on both, the database's branch included. Through their callers:
tests/delivery/test_stages.py (the flag's claims, and their statement count) and the report tests (the
snapshot's consistent read)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from delivery import sql
from delivery.models import GateRecompute
from delivery.stages.services import stages_create_from_template
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db


def flag_of(project) -> tuple | None:
    """(pending, requested_at) of the project's flag row, as the ORM reads it; None when there is none."""
    return GateRecompute.objects.filter(project=project).values_list("pending", "requested_at").first()


def test_the_flag_is_claimed_where_the_orm_says_it_may_be(project):
    stages_create_from_template(project=project)
    now = timezone.now()
    stale_before = now - timedelta(minutes=10)
    # No row: nothing claimed, and the row is said missing.
    assert flag_of(project) is None
    assert sql.gate_recompute_flag_claim(project_id=project.pk, now=now, stale_before=stale_before) == (False, False)
    cases = [  # (pending, requested_at) before -> claimed
        ((False, None), True), ((False, now - timedelta(hours=1)), True), ((True, None), True),
        ((True, now - timedelta(hours=1)), True), ((True, now - timedelta(minutes=1)), False),
    ]
    GateRecompute.objects.create(project=project)
    for (pending, requested_at), claimed in cases:
        GateRecompute.objects.filter(project=project).update(pending=pending, requested_at=requested_at)
        # What the ORM says may be claimed: not pending, never asked for, or asked for before stale_before.
        may = GateRecompute.objects.filter(Q(pending=False) | Q(requested_at=None) | Q(requested_at__lt=stale_before),
                                           project=project).exists()
        assert may == claimed
        with transaction.atomic():
            answer = sql.gate_recompute_flag_claim(project_id=project.pk, now=now, stale_before=stale_before)
        assert answer == (claimed, True), (pending, requested_at)
        assert flag_of(project) == ((True, now) if claimed else (pending, requested_at))


def test_the_first_claim_makes_the_row_only_for_a_project_with_stages(project):
    bare = ProjectFactory(code="BARE-2")
    now = timezone.now()
    assert not sql.gate_recompute_flag_first_claim(project_id=bare.pk, now=now)
    assert flag_of(bare) is None
    stages_create_from_template(project=project)
    assert sql.gate_recompute_flag_first_claim(project_id=project.pk, now=now)
    assert flag_of(project) == (True, now)
    later = now + timedelta(seconds=5)
    assert not sql.gate_recompute_flag_first_claim(project_id=project.pk, now=later)  # pending already: left
    assert flag_of(project) == (True, now)
    GateRecompute.objects.filter(project=project).update(pending=False)  # as the task does
    assert sql.gate_recompute_flag_first_claim(project_id=project.pk, now=later)  # made by another: claimed
    assert flag_of(project) == (True, later) and GateRecompute.objects.filter(project=project).count() == 1


def isolation() -> str | None:
    """The current transaction's isolation level on PostgreSQL (None elsewhere)."""
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute("SHOW transaction_isolation")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
def test_the_reports_read_is_one_repeatable_read_transaction_on_postgresql_only():
    on_postgresql = connection.vendor == "postgresql"
    with sql.report_read_consistent():
        assert connection.in_atomic_block == on_postgresql  # SQLite: no transaction, which would take the lock
        assert isolation() == ("repeatable read" if on_postgresql else None)
    assert not connection.in_atomic_block
    with transaction.atomic(), sql.report_read_consistent():  # inside an outer transaction: left as it is
        assert isolation() == ("read committed" if on_postgresql else None)
