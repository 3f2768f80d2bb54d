"""The demo (`manage.py seed_demo`), built once per test run and handed to every module that asks for it.

Building it takes most of a minute (the fabric, 2,000 optics, the demo's check runs), so a run builds it
once, the first time a module asks:

- on SQLite (`make test`), the in-memory test database is copied with SQLite's backup API before and
  after the build: `demo_db` copies the built demo in for a module and the empty database back after
  it (each copy takes well under a second);
- on another database (PostgreSQL in CI) there is nothing to copy pages with, so each module that asks
  builds the demo inside a transaction rolled back at its end, as before.

Tests of a module using `demo_db` run in their own transactions (savepoints) as usual, so they may
change the demo; the next module gets it as built again.

Use it from a module: `pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_db")]`, or ask
for `demo_db` (its value is what seed_demo printed while building). tests/demo/conftest.py offers the
fixtures to tests/demo; a conftest higher up offers them further the same way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import override_settings

# Tests need no strong hash, and the demo's five logins cost a quarter of a second each with one.
FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher", "django.contrib.auth.hashers.PBKDF2PasswordHasher"]


def seed_demo(media_root) -> str:
    """Build the demo as `make run` does (seed_demo, with its check runs); what it printed."""
    out = StringIO()
    with override_settings(MEDIA_ROOT=str(media_root), PASSWORD_HASHERS=FAST_HASHERS):
        call_command("seed_demo", stdout=out)
    return out.getvalue()


def _copy(source: sqlite3.Connection, target: sqlite3.Connection) -> None:
    assert not connection.in_atomic_block, "the demo is copied in and out between transactions: use demo_db"
    source.backup(target)


def _copy_of(source: sqlite3.Connection) -> sqlite3.Connection:
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    _copy(source, copy)
    return copy


# A snapshot is a context manager factory: `with snapshot() as output:` holds the demo in the test database
# for the block (output: what seed_demo printed when it built it).
Snapshot = Callable[[], AbstractContextManager[str]]


@contextmanager
def _sqlite_snapshot(media_root) -> Iterator[Snapshot]:
    """Build once, keep a page copy of the database with the demo and one without it."""
    connection.ensure_connection()
    live = connection.connection
    empty = _copy_of(live)
    try:
        output = seed_demo(media_root)  # committed: the test database holds the demo now
        built = _copy_of(live)
    finally:
        _copy(empty, live)

    @contextmanager
    def loaded() -> Iterator[str]:
        _copy(built, live)
        try:
            yield output
        finally:
            _copy(empty, live)

    try:
        yield loaded
    finally:
        built.close()
        empty.close()


@contextmanager
def _rolled_back_builds(media_root) -> Iterator[Snapshot]:
    """Without SQLite's page copy: each use builds the demo inside a transaction it rolls back."""

    @contextmanager
    def loaded() -> Iterator[str]:
        with transaction.atomic():
            yield seed_demo(media_root)
            transaction.set_rollback(True)

    yield loaded


@pytest.fixture(scope="session")
def demo_snapshot(django_db_setup, django_db_blocker, tmp_path_factory) -> Iterator[Snapshot]:
    media_root = tmp_path_factory.mktemp("demo-media")
    with django_db_blocker.unblock():
        snapshots = _sqlite_snapshot if connection.vendor == "sqlite" else _rolled_back_builds
        with snapshots(media_root) as snapshot:
            yield snapshot


@pytest.fixture(scope="module")
def demo_db(demo_snapshot, django_db_blocker) -> Iterator[str]:
    """The demo in the test database for this module; the value is what seed_demo printed."""
    with django_db_blocker.unblock(), demo_snapshot() as output:
        yield output
