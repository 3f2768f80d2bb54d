from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from simple_history.models import HistoricalRecords

from .choices import ProjectStatus, Role

project_code_validator = RegexValidator(
    r"^[A-Z0-9][A-Z0-9-]{1,31}$", "Use 2-32 upper-case letters, digits and dashes, e.g. ACME-72."
)


class Project(models.Model):
    """The tenant root: every row a user can reach belongs to exactly one project."""

    code = models.CharField(max_length=32, unique=True, validators=[project_code_validator])
    name = models.CharField(max_length=200)
    customer_name = models.CharField(max_length=200)
    site = models.CharField(max_length=200, blank=True, help_text="Data centre and hall, as the customer names it.")
    description = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=ProjectStatus.choices, default=ProjectStatus.PLANNING)
    start_date = models.DateField(null=True, blank=True)
    target_date = models.DateField(null=True, blank=True, help_text="Planned customer acceptance.")
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["code"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(target_date__isnull=True)
                | models.Q(start_date__isnull=True)
                | models.Q(target_date__gte=models.F("start_date")),
                name="project_target_after_start",
            )
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.name}"


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    history = HistoricalRecords()

    class Meta:
        ordering = ["project__code", "user__username"]
        constraints = [models.UniqueConstraint(fields=["user", "project"], name="membership_user_project_unique")]

    def __str__(self) -> str:
        return f"{self.user} - {self.project.code} ({self.role})"

    def clean(self):
        if self.pk is not None and self.role != Role.MANAGER and self.is_last_manager():
            raise ValidationError({"role": (
                "This is the project's last manager; make someone else a manager before changing this role."
            )})

    def is_last_manager(self) -> bool:
        """Whether this membership, as stored, is the only manager membership of its project."""
        managers = Membership.objects.filter(project_id=self.project_id, role=Role.MANAGER)
        return managers.filter(pk=self.pk).exists() and not managers.exclude(pk=self.pk).exists()
