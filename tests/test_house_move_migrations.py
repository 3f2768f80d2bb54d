"""The house move keeps every row (issue 20). A database made by the migrations as they stood before the move
(tests/fixtures/migrations/, a dump with rows in every table the move touches, made at commit 174e33b) is
migrated forward by `manage.py migrate`, as an upgrade in the field would be: every row of every moved table is
in its new table with the same values (the stored gate keys and references under their new app label), every
foreign key is there and holds, and the schema is the one a new database gets from the same migrations.

Run on the database the suite runs on: SQLite locally, PostgreSQL in CI (a database of its own on the same
server, loaded with psql)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import connection, connections
from django.db.utils import load_backend

REPO = Path(__file__).resolve().parents[1]
DUMPS = REPO / "tests" / "fixtures" / "migrations"
LEGACY = "roof"  # the old label of the workflow app, as the dump's tables and stored keys carry it

GROUND_TABLES = ["project", "historicalproject", "membership", "historicalmembership", "nodetoken"]
WORKFLOW_TABLES = [
    "stagetemplate", "historicalstagetemplate", "stage", "historicalstage", "checklistitem",
    "historicalchecklistitem", "waiver", "historicalwaiver", "gaterecompute", "punchitem", "historicalpunchitem",
    "punchsync", "reportversion", "reportsignature", "netboxpush", "notificationpreference",
]
MOVED = {f"delivery_{t}": f"projects_{t}" for t in GROUND_TABLES} | {
    f"{LEGACY}_{t}": f"delivery_{t}" for t in WORKFLOW_TABLES
}
# Tables of other apps whose foreign keys point at a moved table: they stay where they are.
REFERENCING = ["inventory_site", "inventory_rack", "cabling_cable", "validation_acceptanceprofile"]
# Columns holding references stored under the old app label (JSON or text), renamed by delivery 0005.
RELABELLED = {"delivery_stage": ["gate_key", "jobs", "gate_missing"], "delivery_stagetemplate": ["stages"],
              "delivery_waiver": ["items"]}
ALIAS = "house_move"
OUR_APPS = ("core_", "projects_", "inventory_", "cabling_", "validation_", "delivery_")

pytestmark = pytest.mark.django_db


def relabelled(value):
    """A stored value with the old label's references under the new one, as delivery 0005 writes them."""
    if isinstance(value, str):
        return "delivery." + value[len(LEGACY) + 1:] if value.startswith(f"{LEGACY}.") else value
    if isinstance(value, list):
        return [relabelled(item) for item in value]
    if isinstance(value, dict):
        return {key: relabelled(item) for key, item in value.items()}
    return value


def decoded(value):
    """JSON text as its value (SQLite hands JSON columns back as text, PostgreSQL as Python objects)."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:  # text that only starts like JSON
            return value
    return value


class UpgradedDatabase:
    """A database of the suite's kind, loaded from the dump made before the move, and a Django connection to it."""

    def __init__(self, tmp_path: Path):
        self.vendor = connection.vendor
        settings = dict(connection.settings_dict)
        if self.vendor == "sqlite":
            self.name = str(tmp_path / "before-the-move.sqlite3")
            script = gzip.decompress((DUMPS / "before-house-move.sqlite3.sql.gz").read_bytes()).decode()
            with sqlite3.connect(self.name) as loaded:
                loaded.executescript(script)
            self.url = f"sqlite:///{self.name}"
        else:
            self.name = f"house_move_{uuid.uuid4().hex[:10]}"
            self.server = {"host": settings["HOST"] or "127.0.0.1", "port": str(settings["PORT"] or 5432),
                           "user": settings["USER"] or "postgres", "password": settings.get("PASSWORD") or ""}
            self._psql("postgres", "-c", f'CREATE DATABASE "{self.name}"')
            script = gzip.decompress((DUMPS / "before-house-move.postgresql.sql.gz").read_bytes())
            self._psql(self.name, "-v", "ON_ERROR_STOP=1", "-q", "-f", "-", stdin=script)
            auth = self.server["user"] + (f":{self.server['password']}" if self.server["password"] else "")
            self.url = f"postgres://{auth}@{self.server['host']}:{self.server['port']}/{self.name}"
        settings["NAME"] = self.name
        self.connection = load_backend(settings["ENGINE"]).DatabaseWrapper(settings, alias=ALIAS)
        connections[ALIAS] = self.connection  # the backend's feature checks look their connection up by alias

    def _psql(self, database: str, *args: str, stdin: bytes | None = None) -> None:
        env = {**os.environ, "PGPASSWORD": self.server["password"]}
        command = ["psql", "-h", self.server["host"], "-p", self.server["port"], "-U", self.server["user"],
                   "-d", database, *args]
        subprocess.run(command, input=stdin, env=env, check=True, capture_output=True, timeout=120)

    def migrate(self) -> subprocess.CompletedProcess:
        env = {**os.environ, "DATABASE_URL": self.url, "DJANGO_SECRET_KEY": "house-move-test"}
        return subprocess.run([sys.executable, "manage.py", "migrate", "--noinput"], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=600)

    def rows(self, table: str) -> list[dict]:
        with self.connection.cursor() as cursor:
            cursor.execute(f'SELECT * FROM "{table}"')
            names = [column[0] for column in cursor.description]
            found = [{name: decoded(value) for name, value in zip(names, row, strict=True)} for row in cursor]
        return sorted(found, key=lambda row: repr(sorted(row.items(), key=lambda item: item[0])))

    def tables(self) -> set[str]:
        with self.connection.cursor() as cursor:
            return set(self.connection.introspection.table_names(cursor))

    def close(self) -> None:
        self.connection.close()
        del connections[ALIAS]
        if self.vendor == "postgresql":
            self._psql("postgres", "-c", f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def schema(wrapper, tables) -> dict[str, tuple]:
    """Per table: its columns (name, whether it takes NULL) and its foreign keys (column -> table it points at)."""
    found = {}
    with wrapper.cursor() as cursor:
        for table in sorted(tables):
            columns = tuple(sorted((c.name, bool(c.null_ok)) for c in
                                   wrapper.introspection.get_table_description(cursor, table)))
            relations = tuple(sorted((column, target) for column, (_, target) in
                                     wrapper.introspection.get_relations(cursor, table).items()))
            found[table] = (columns, relations)
    return found


@pytest.fixture
def before_the_move(tmp_path):
    if connection.vendor == "postgresql" and not shutil.which("psql"):
        if os.environ.get("REQUIRE_SERVICES"):
            pytest.fail("psql is needed to load the PostgreSQL dump (apt-get install postgresql-client)")
        pytest.skip("psql is not installed")
    database = UpgradedDatabase(tmp_path)
    yield database
    database.close()


def test_migrating_a_database_from_before_the_move_keeps_every_row_and_foreign_key(before_the_move):
    database = before_the_move
    assert set(MOVED) <= database.tables(), "the dump does not hold every table the move touches"
    before = {table: database.rows(table) for table in [*MOVED, *REFERENCING]}
    assert all(before[table] for table in MOVED), "every moved table holds rows before the move"

    result = database.migrate()
    assert result.returncode == 0, result.stdout + result.stderr

    tables = database.tables()
    assert not set(MOVED) & tables, "an old table is left beside its new one"
    for old, new in MOVED.items():
        expected = before[old]
        for column in RELABELLED.get(new, []):
            expected = [{**row, column: relabelled(row[column])} for row in expected]
        # Later migrations may add columns to a moved table (delivery 0006: a report version's state): the
        # row keeps every value it had, each added column holding what its own migration gives it.
        columns = set(expected[0]) if expected else set()
        found = [{name: value for name, value in row.items() if name in columns} for row in database.rows(new)]

        def order(row):
            return repr(sorted(row.items(), key=lambda item: item[0]))

        assert sorted(found, key=order) == sorted(expected, key=order), new
    for table in REFERENCING:
        assert database.rows(table) == before[table], table
    assert any(stage["gate_key"] == "delivery.acceptance_signed" for stage in database.rows("delivery_stage"))

    ours = {table for table in tables if table.startswith(OUR_APPS)}
    fresh = {table for table in connection.introspection.table_names() if table.startswith(OUR_APPS)}
    assert ours == fresh
    assert schema(database.connection, ours) == schema(connection, fresh), "the upgraded schema is not a new one"
    with database.connection.cursor() as cursor:
        if database.vendor == "sqlite":
            cursor.execute("PRAGMA foreign_key_check")
            assert cursor.fetchall() == []
        else:  # every foreign key constraint is there and validated
            cursor.execute("SELECT conname FROM pg_constraint WHERE contype = 'f' AND NOT convalidated")
            assert cursor.fetchall() == []
        cursor.execute("SELECT app_label, model FROM django_content_type WHERE app_label IN (%s, %s, %s)",
                       [LEGACY, "delivery", "projects"])
        labels = {model: app for app, model in cursor.fetchall()}
        cursor.execute("SELECT COUNT(*) FROM django_migrations WHERE app = %s", [LEGACY])
        assert cursor.fetchone() == (0,)
    assert labels["project"] == "projects" and labels["stage"] == "delivery" and LEGACY not in labels.values()
