"""The embedded default (`make run`: SQLite in a file, the threaded development server) holds a small
team writing at once: concurrent writers through the real API queue behind each other instead of failing
with "database is locked" (a 500). Runs the server in a process of its own on a database file, as
`make run` does; the in-memory test database could not show it."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WRITERS, RACKS_EACH = 8, 5
SETUP = """
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from projects.choices import Role
from projects.models import Membership, Project
from inventory.models import Site
user = get_user_model().objects.create_user("writer", password="pw-for-tests-1")
project = Project.objects.create(code="SQL-8", name="SQLite team", customer_name="Example")
Membership.objects.create(user=user, project=project, role=Role.MANAGER)
Site.objects.create(project=project, name="Hall 1")
print(Token.objects.create(user=user).key)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def manage(env, *args, **kwargs):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True, timeout=120, **kwargs)


@pytest.fixture
def embedded_server(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env |= {"BRINGUP_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "bringup.settings"}
    manage(env, "migrate", "--noinput")
    token = manage(env, "shell", "-v", "0", "-c", SETUP).stdout.strip().splitlines()[-1]
    port = free_port()
    server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                              cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}", token, env
    finally:
        server.terminate()
        server.wait(timeout=10)


def post(url, token, payload) -> int:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST", headers={
        "Authorization": f"Token {token}", "Content-Type": "application/json",
    })
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status
    except urllib.error.HTTPError as refused:
        return refused.code


def test_concurrent_writers_all_succeed(embedded_server):
    base, token, env = embedded_server
    statuses = []

    def writer(index):
        for n in range(RACKS_EACH):
            statuses.append(post(f"{base}/api/racks/", token, {
                "project": "SQL-8", "site": "Hall 1", "name": f"W{index}-{n}", "row": "W",
                "position": index * 10 + n + 1, "height_u": 48, "power_budget_w": 20000,
            }))

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] * (WRITERS * RACKS_EACH)
    check = "from inventory.models import Rack; from django.db import connection; " \
            "print(Rack.objects.count(), connection.cursor().execute('PRAGMA journal_mode').fetchone()[0])"
    assert manage(env, "shell", "-v", "0", "-c", check).stdout.split() == [str(WRITERS * RACKS_EACH), "wal"]
