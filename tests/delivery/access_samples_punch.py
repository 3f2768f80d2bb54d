"""The access matrix's samples for the punch list pages (tests/access_world.py): one item the customer may
see (so that a customer's read of it is the 200 the matrix expects; an internal item's 404 to a customer is
tests/delivery/test_punch_pages.py's)."""

from __future__ import annotations

from django.utils import timezone

from delivery.models import PunchItem


def samples(project) -> dict[str, dict]:
    item = PunchItem.objects.create(project=project, title="Loose latch on the rack door", customer_visible=True,
                                    opened_at=timezone.now())
    one = {"pk": item.pk}
    return {"punch:detail": one, "punch:edit": one, "punch:status": one}
