"""Prepared statements bind parameters on the server; an integer out of its column's range is refused there
as it is with text binding, never stored wrapped (core.pg_integers)."""

from __future__ import annotations

import pytest
from django.db import DataError, connection, transaction
from psycopg.types.numeric import Int2, Int4, Int8

from inventory.models import Rack
from tests.factories import RackFactory
from tests.support import postgresql_only

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _binding_on_the_server():
    postgresql_only("binding on the server")
    if not connection.settings_dict.get("OPTIONS", {}).get("server_side_binding"):
        pytest.skip("prepared statements are off (DATABASE_PREPARED=0): parameters are bound as text")


@pytest.mark.parametrize(("wrapper", "low", "high"), [
    (Int2, -(2**15), 2**15 - 1), (Int4, -(2**31), 2**31 - 1), (Int8, -(2**63), 2**63 - 1),
])
def test_the_range_s_ends_go_through_and_one_past_them_is_refused(wrapper, low, high):
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s, %s", [wrapper(low), wrapper(high)])
        assert cursor.fetchone() == (low, high)
    for outside in (low - 1, high + 1, 2**40 * (2**30)):
        with pytest.raises(DataError, match="out of range"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT %s", [wrapper(outside)])


def test_a_huge_number_saved_through_the_orm_is_refused_not_stored_wrapped():
    rack = RackFactory()
    with pytest.raises(DataError, match="out of range"), transaction.atomic():
        Rack.objects.filter(pk=rack.pk).update(height_u=2**32 + 42)  # wrapped, it would be 42: a valid height
    rack.refresh_from_db()
    assert rack.height_u != 42
