"""The NetBox push job row (re-exported by delivery.models)."""

from __future__ import annotations

from django.db import models

from core.choices import JobStatus
from core.models import Job
from projects.models import Project


class NetBoxPush(Job):
    """One push of a project's as-built to a customer's NetBox through its REST API: a dry run (what
    would be created, updated or left unchanged, per kind of object) or an apply (the same, then done).

    The API token lives on the row only while the job needs it, encrypted with a key derived from
    SECRET_KEY (`handover.services.token_seal`), so neither the Celery message (which carries the row's id
    only) nor the database in clear ever hold it; the row forgets it when the job settles, and the task
    refuses a sealed token older than TOKEN_TTL."""

    STATUS_LABELS = {JobStatus.DONE: "Done"}

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="netbox_pushes")
    # Not a URLField: Django's URL validator wants a dotted domain, and a NetBox inside the customer's
    # network is often "http://netbox:8000". services.netbox_url_errors says what is accepted.
    netbox_url = models.CharField(max_length=300, verbose_name="NetBox URL")
    apply = models.BooleanField(default=False, help_text="Apply the changes; otherwise a dry run that writes nothing.")
    token_sealed = models.TextField(blank=True, editable=False,
                                    help_text="The API token, encrypted, while the job needs it; blank after.")
    netbox_version = models.CharField(max_length=20, blank=True, help_text="The API version NetBox reported.")
    summary = models.JSONField(default=dict, blank=True,
                               help_text="Per kind of object: counts to create, update, leave unchanged, and examples.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="netbox_push_project_recent")]

    def __str__(self) -> str:
        return f"{self.project.code} NetBox {'push' if self.apply else 'dry run'} {self.pk}"

    @property
    def mode_label(self) -> str:
        return "Apply" if self.apply else "Dry run"

    @property
    def steps(self) -> list[dict]:
        return list((self.summary or {}).get("steps", []))

    def status_figures(self) -> dict:
        totals = {"create": 0, "update": 0, "unchanged": 0}
        for step in self.steps:
            for key in totals:
                totals[key] += int(step.get(key, 0))
        return totals
