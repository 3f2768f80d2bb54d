# The demo, built once per test run (tests/demo/demo_db.py).
from .demo_db import demo_db, demo_snapshot  # noqa: F401
