"""Handing the as-built over to the customer's own DCIM: NetBox bulk-import files and a push to a live
NetBox through its REST API."""

# The push task must be known by name in every process, the web's and the workers' alike. The roof's
# models module imports this package's models (so every process loads this package at start-up), and the
# roof's tasks module is not this package's to extend; so the task registers from here.
from . import tasks  # noqa: E402,F401
