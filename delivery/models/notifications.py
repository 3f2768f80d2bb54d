"""Which kinds of email one user turned off, in one project or in all of them."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from delivery.choices import NotificationKind
from projects.models import Project


class NotificationPreference(models.Model):
    """The kinds one user turned off: in one project, or (project blank) in every project."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="notification_preferences")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
                                help_text="Blank: for every project.")
    off = models.JSONField(default=list, blank=True, help_text='Kinds not sent: ["report_ready", ...].')

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="notification_pref_unique_per_project"),
            models.UniqueConstraint(fields=["user"], condition=models.Q(project=None),
                                    name="notification_pref_unique_global"),
        ]

    def __str__(self) -> str:
        where = self.project.code if self.project_id else "all projects"
        return f"Notifications of {self.user} in {where}"

    def clean(self):
        if not isinstance(self.off, list) or any(kind not in NotificationKind.values for kind in self.off):
            raise ValidationError({"off": f"A list of kinds among: {', '.join(NotificationKind.values)}."})
