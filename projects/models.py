from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone
from simple_history.models import HistoricalRecords

from projects.choices import NodeScope, NodeTokenState, ProjectStatus, Role

project_code_validator = RegexValidator(
    r"^[A-Z0-9][A-Z0-9-]{1,31}$", "Use 2-32 upper-case letters, digits and dashes, e.g. ACME-72."
)


class Project(models.Model):
    """The tenant root: every row a user can reach belongs to exactly one project."""

    code = models.CharField(max_length=32, unique=True, validators=[project_code_validator])
    name = models.CharField(max_length=200)
    name_zh = models.CharField(max_length=200, blank=True, db_default="", verbose_name="Name (Chinese)",
                               help_text="The project's name in Chinese, for the bilingual acceptance report.")
    customer_name = models.CharField(max_length=200)
    # db_default: rows written by code that predates these fields (old migrations' states) still insert.
    customer_name_zh = models.CharField(max_length=200, blank=True, db_default="", verbose_name="Customer (Chinese)",
                                        help_text="The customer's name in Chinese, as on their contract.")
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


NODE_TOKEN_DEFAULT_LIFETIME = timedelta(days=90)
NODE_TOKEN_MAX_LIFETIME = timedelta(days=365)  # a token nobody renews must die within the year


class NodeToken(models.Model):
    """A node's credential for the API: one project, named scopes (NodeScope), an expiry, revocable.

    Only the SHA-256 of its secret is kept; the whole token, `bnt_<key_id>_<secret>`, is shown once when it is
    made (projects.tokens). `key_id` is public: it finds the row, the secret proves the holder. A node token
    is not its creator: it carries none of their rights (projects.tokens.NodePrincipal)."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="node_tokens")
    name = models.CharField(max_length=100, help_text="The node or the purpose, e.g. gpu-017 or rack R12 collector.")
    key_id = models.CharField(max_length=16, unique=True, editable=False)
    secret_hash = models.CharField(max_length=64, editable=False, help_text="SHA-256 of the secret, hex.")
    scopes = models.JSONField(default=list, help_text="What the token may post: a list of NodeScope values.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_used_ip = models.GenericIPAddressField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["project", "-created_at"], name="nodetoken_project_recent")]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(expires_at__gt=models.F("created_at")), name="node_token_expires_after_creation"
            )
        ]

    def __str__(self) -> str:
        return f"{self.project.code} node token {self.name} ({self.key_id})"

    def clean(self):
        errors = {}
        scopes = self.scopes if isinstance(self.scopes, list) else None
        if not scopes:
            errors["scopes"] = "Choose at least one scope."
        elif len(set(scopes)) != len(scopes) or not set(scopes) <= set(NodeScope.values):
            errors["scopes"] = f"Scopes are distinct values among {', '.join(NodeScope.values)}."
        if self.expires_at is not None and self.created_at is not None:
            if self.expires_at <= self.created_at:
                errors["expires_at"] = "A token must expire after it is made."
            elif self.expires_at - self.created_at > NODE_TOKEN_MAX_LIFETIME:
                errors["expires_at"] = f"A node token lives at most {NODE_TOKEN_MAX_LIFETIME.days} days."
        if errors:
            raise ValidationError(errors)

    def state(self, now=None) -> str:
        now = now or timezone.now()
        if self.revoked_at is not None:
            return NodeTokenState.REVOKED
        return NodeTokenState.EXPIRED if self.expires_at <= now else NodeTokenState.ACTIVE

    @property
    def state_label(self) -> str:
        return NodeTokenState(self.state()).label

    @property
    def scope_labels(self) -> list[str]:
        return [NodeScope(scope).label for scope in self.scopes if scope in NodeScope.values]
