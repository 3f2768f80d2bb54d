"""Writes of the bulk import, by concept: importing a file all or nothing (apply.py), and the life of an
ImportJob from upload to apply (jobs.py). Callers import from here."""

from .apply import PROJECT_CHANGED, ImportResult, inventory_import
from .jobs import UNEXPECTED_ERROR, import_job_apply, import_job_confirm, import_job_create, import_job_preview

__all__ = [
    "PROJECT_CHANGED",
    "UNEXPECTED_ERROR",
    "ImportResult",
    "import_job_apply",
    "import_job_confirm",
    "import_job_create",
    "import_job_preview",
    "inventory_import",
]
