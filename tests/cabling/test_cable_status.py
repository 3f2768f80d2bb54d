"""cable_status_set: planned, installed or faulty by hand, never verified (a scan verifies); one history
record per cable that changes, by the user; a queryset or cable rows; keyword-only, all or nothing."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from cabling.choices import CableStatus
from cabling.models import Cable
from cabling.services import cable_status_set

pytestmark = pytest.mark.django_db


def statuses(project) -> dict[str, str]:
    return dict(Cable.objects.filter(project=project).values_list("label", "status"))


def test_sets_the_status_of_a_queryset_with_a_history_record_per_changed_cable(fabric, technician):
    fabric.c1.status = CableStatus.INSTALLED
    fabric.c1.save()
    before = Cable.history.count()
    compute = Cable.objects.filter(project=fabric.project, network="compute")
    assert cable_status_set(cables=compute, status=CableStatus.INSTALLED, user=technician) == 6  # c1 already was
    assert statuses(fabric.project) == {**{f"C0000{i}": "installed" for i in range(1, 8)}, "O00001": "planned"}
    records = Cable.history.order_by("-history_id")[:6]
    assert Cable.history.count() == before + 6
    assert {r.label for r in records} == {"C00002", "C00003", "C00004", "C00005", "C00006", "C00007"}
    assert all(r.history_type == "~" and r.history_user == technician and r.status == "installed" for r in records)
    assert Cable.objects.get(pk=fabric.foreign.pk).status == CableStatus.PLANNED


def test_takes_cable_rows_and_changes_nothing_that_already_has_the_status(fabric):
    assert cable_status_set(cables=[fabric.c2, fabric.oob], status=CableStatus.FAULTY) == 2
    before = Cable.history.count()
    assert cable_status_set(cables=[fabric.c2, fabric.oob], status=CableStatus.FAULTY) == 0
    assert Cable.history.count() == before
    assert cable_status_set(cables=[fabric.c2], status=CableStatus.PLANNED) == 1
    assert statuses(fabric.project)["C00002"] == "planned" and statuses(fabric.project)["O00001"] == "faulty"


def test_verified_is_refused_a_scan_verifies(fabric):
    before = Cable.history.count()
    with pytest.raises(ValidationError) as refused:
        cable_status_set(cables=Cable.objects.filter(project=fabric.project), status=CableStatus.VERIFIED)
    assert refused.value.message_dict == {
        "status": ["A cable is verified by a scan of both its ends, not set by hand: scan it instead."]
    }
    assert set(statuses(fabric.project).values()) == {"planned"} and Cable.history.count() == before


def test_an_unknown_status_is_refused_naming_the_choices(fabric):
    with pytest.raises(ValidationError) as refused:
        cable_status_set(cables=[fabric.c1], status="cut")
    assert refused.value.message_dict == {
        "status": ["Unknown cable status 'cut': choose one of faulty, installed, planned."]
    }


def test_is_keyword_only(fabric):
    with pytest.raises(TypeError):
        cable_status_set([fabric.c1], CableStatus.INSTALLED)  # type: ignore[misc]
