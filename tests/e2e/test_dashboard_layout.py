"""The dashboard's pages in real Chromium at 768x1024 and 390x844, as tests/e2e/test_tablet_layout.py
measures every page (it walks the dashboard too): no sideways scroll, 44 px targets. Here on the same
grown world for the manager and the customer, plus the portfolio and the project creation form, which live
outside /p/<code>/ and so outside that walk."""

from __future__ import annotations

import pytest
from django.urls import reverse

from projects.choices import Role
from tests.access_world import build_world
from tests.e2e.conftest import close_contexts
from tests.e2e.test_tablet_layout import MEASURE, MIN_TARGET, VIEWPORTS, grow
from tests.factories import UserFactory

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_the_dashboard_portfolio_and_creation_fit_a_tablet_and_a_phone(browser, live_server):
    world = build_world()
    grow(world)
    code = world.project.code
    staff = UserFactory(username="staff-e2e", is_staff=True)
    people = {
        world.users["manager"]: ["delivery:dashboard", "delivery:portfolio"],
        world.users["customer"]: ["delivery:dashboard"],
        staff: ["delivery:project-create", "delivery:portfolio"],
    }
    assert world.users["customer"].memberships.get(project=world.project).role == Role.CUSTOMER
    failures = []
    for width, height in VIEWPORTS:
        for user, names in people.items():
            context = browser.new_context(viewport={"width": width, "height": height}, base_url=live_server.url)
            page = context.new_page()
            page.goto("/login/")
            page.get_by_label("Username").fill(user.get_username())
            page.get_by_label("Password").fill("pw-for-tests-1")
            page.get_by_role("button", name="Log in").click()
            page.wait_for_load_state()
            for name in names:
                url = reverse(name, args=[code]) if name == "delivery:dashboard" else reverse(name)
                response = page.goto(url)
                assert response.status == 200, (name, response.status)
                seen = page.evaluate(MEASURE, MIN_TARGET)
                if seen["scrollWidth"] > seen["innerWidth"]:
                    failures.append(f"{width}px {user} {name}: scrolls sideways ({seen['scrollWidth']}px: "
                                    f"{', '.join(seen['wide'])})")
                if seen["small"]:
                    failures.append(f"{width}px {user} {name}: targets under {MIN_TARGET}px: "
                                    + "; ".join(seen["small"][:5]))
            close_contexts([context])
    assert not failures, "\n".join(failures)
