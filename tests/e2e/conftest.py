"""Browser-test harness: Playwright for Python (sync API) driving Debian's Chromium, headless,
against pytest-django's live_server. Later issues add their flows under tests/e2e/.

Without /usr/bin/chromium (or Playwright) the browser tests are skipped on a developer's machine and
fail in CI, where REQUIRE_SERVICES=1 says everything must be there.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TEST_PASSWORD = "pw-for-tests-1"  # tests.factories.UserFactory's password
TIMEOUT_MS = 15_000


def _missing_browser() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="package")
def _allow_sync_orm_beside_playwright() -> Iterator[None]:
    """Playwright's sync API keeps an asyncio loop running in this thread, and Django refuses ORM
    calls from a thread with a running loop. The tests themselves are plain synchronous code, so the
    check is switched off, for the browser tests only (package scope: restored after tests/e2e)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        yield


class _RequestsInFlight:
    """Counts the live server's requests being handled. A browser context that closes abandons its
    requests, but the server thread still finishes them on the test's shared SQLite connection; emptying
    the database meanwhile fails with "database table is locked". Teardowns wait for zero first."""

    def __init__(self) -> None:
        self.count = 0
        self.idle = threading.Condition()

    def wrap(self, handle):
        def counted_handle(handler):
            with self.idle:
                self.count += 1
            try:
                return handle(handler)
            finally:
                with self.idle:
                    self.count -= 1
                    self.idle.notify_all()

        return counted_handle

    def wait_for_idle(self, timeout: float = 10.0) -> None:
        with self.idle:
            self.idle.wait_for(lambda: self.count == 0, timeout=timeout)


REQUESTS_IN_FLIGHT = _RequestsInFlight()


@pytest.fixture(scope="package")
def _count_live_server_requests() -> Iterator[None]:
    from django.core.servers.basehttp import WSGIRequestHandler

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(WSGIRequestHandler, "handle", REQUESTS_IN_FLIGHT.wrap(WSGIRequestHandler.handle))
        yield


def close_contexts(contexts) -> None:
    """Close the browser contexts, then let the server finish what they left in flight."""
    for context in contexts:
        context.close()
    REQUESTS_IN_FLIGHT.wait_for_idle()


@pytest.fixture(scope="package")
def browser(_allow_sync_orm_beside_playwright, _count_live_server_requests):
    reason = _missing_browser()
    if reason:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"REQUIRE_SERVICES=1 but {reason}")
        pytest.skip(reason)
    from playwright.sync_api import expect, sync_playwright

    # Assertions wait as long as actions do: on a loaded CI machine a page can take more than expect's
    # default 5 s to answer a scan.
    expect.set_options(timeout=TIMEOUT_MS)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page_for(browser, live_server) -> Iterator[Callable]:
    """`page_for(user)` logs the user in through the real login form in a fresh browser context (of
    `viewport`'s size, if given) and returns the page where the login landed."""
    contexts = []

    def log_in(user, password: str = TEST_PASSWORD, next_url: str = "", viewport: dict | None = None):
        context = browser.new_context(base_url=live_server.url, **({"viewport": viewport} if viewport else {}))
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"/login/?next={next_url}" if next_url else "/login/")
        page.get_by_label("Username").fill(user.get_username())
        page.get_by_label("Password").fill(password)
        page.get_by_role("button", name="Log in").click()
        page.wait_for_load_state()
        if page.url.rstrip("/").endswith("/login") or "/login/?" in page.url:
            raise AssertionError(f"Logging in as {user.get_username()} failed: still on {page.url}")
        return page

    yield log_in
    close_contexts(contexts)
