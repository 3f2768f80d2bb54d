"""bringup.wsgi: the application, and what it loaded (its URLconf too) frozen out of the garbage collector's
reach."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_wsgi_module_freezes_what_it_loaded():
    # In a process of its own: freezing this test process's heap would outlive the test.
    script = ("import gc, sys, bringup.wsgi as w; "
              "print(callable(w.application), gc.get_freeze_count(), 'cabling.api.scans' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"DJANGO_SETTINGS_MODULE": "bringup.settings", "PATH": "/usr/bin:/bin",
                              "DATABASE_URL": "sqlite:///:memory:"}, check=True).stdout.split()
    assert out[0] == "True"
    assert int(out[1]) > 50_000  # Django and the apps: hundreds of thousands of objects
    assert out[2] == "True"  # the URLconf and its views were loaded before the freeze, not at a first request
