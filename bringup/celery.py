"""Celery application. With no CELERY_BROKER_URL, tasks run eagerly in-process (see settings)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")

app = Celery("bringup")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# What `celery -A bringup beat` (make beat) sends. The soak tick is cheap when no window is due a reading.
# SOAK_TICK_SECONDS comes straight from the environment: this module is imported while the Django
# settings are still loading, so it cannot read them.
app.conf.beat_schedule = {
    "soak-sample-due-windows": {
        "task": "validation.tasks.soak_tick",
        "schedule": float(os.environ.get("SOAK_TICK_SECONDS", "60")),
    },
    # Re-dispatches check runs that made no progress (a lost worker, a task lost between two commits) and
    # closes runs whose targets have all finished.
    "check-runs-sweep": {
        "task": "validation.tasks.check_runs_sweep",
        "schedule": float(os.environ.get("CHECK_SWEEP_SECONDS", "300")),
    },
}
