"""Email notifications of a project's delivery (a stage completed or reopened, a report version ready or
signed) and the per-user preference that turns kinds off, for one project or for all of them.

Every notification goes through `notification_send`: its recipients are the project's members whose role
receives that kind and who have not turned it off (never anyone outside the project), and the email leaves
after the caller's transaction commits, so a rolled-back completion mails nobody. One email per event.

The model lives here and is re-exported by delivery.roof.models (so Django finds it); this module imports
no other roof module, so the roof's models can import it.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import models, transaction

from delivery.choices import Role
from delivery.models import Membership, Project

logger = logging.getLogger(__name__)

__all__ = ["NotificationKind", "NotificationPreference"]


class NotificationKind(models.TextChoices):
    STAGE_COMPLETED = "stage_completed", "A stage is completed"
    STAGE_REGRESSED = "stage_regressed", "A stage reopens (its gate no longer passes)"
    REPORT_READY = "report_ready", "An acceptance report version is ready"
    REPORT_SIGNED = "report_signed", "The acceptance report is signed"


EVERYONE = frozenset(Role.values)
# Which roles hear of each kind: a regression is the delivery team's to fix, not the customer's to read.
KIND_ROLES: dict[str, frozenset[str]] = {
    NotificationKind.STAGE_COMPLETED: EVERYONE,
    NotificationKind.STAGE_REGRESSED: frozenset({Role.MANAGER, Role.TECHNICIAN}),
    NotificationKind.REPORT_READY: EVERYONE,
    NotificationKind.REPORT_SIGNED: EVERYONE,
}
SUBJECT_LENGTH = 200


class NotificationPreference(models.Model):
    """The kinds one user turned off: in one project, or (project blank) in every project."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="notification_preferences")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="+",
                                help_text="Blank: for every project.")
    off = models.JSONField(default=list, blank=True, help_text='Kinds not sent: ["report_ready", ...].')

    class Meta:
        app_label = "roof"
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


def notification_recipients(*, project: Project, kind: str) -> list[str]:
    """The email addresses of the project's members whose role hears of `kind` and who did not turn it off
    (here or for every project), sorted, each once. Two queries."""
    members = dict(Membership.objects.filter(project=project, role__in=KIND_ROLES[kind]).exclude(user__email="")
                   .values_list("user_id", "user__email"))
    if not members:
        return []
    muted = {pref.user_id for pref in NotificationPreference.objects.filter(user_id__in=members)
             .filter(models.Q(project=project) | models.Q(project=None)) if kind in pref.off}
    return sorted({email for user_id, email in members.items() if user_id not in muted})


def absolute_link(path: str) -> str:
    """A link for an email: SITE_URL (when the deployment sets one) before the page's path."""
    return getattr(settings, "SITE_URL", "").rstrip("/") + path


def _deliver(project: Project, kind: str, subject: str, body: str, link: str) -> None:
    emails = notification_recipients(project=project, kind=kind)
    if not emails:
        return
    text = f"{body.rstrip()}\n\n{absolute_link(link)}\n" if link else body
    try:
        # Blind copies: a customer on the list must not learn the staff's addresses, nor they each other's.
        EmailMessage(f"[{project.code}] {subject}"[:SUBJECT_LENGTH], text, settings.DEFAULT_FROM_EMAIL,
                     bcc=emails).send()
    except Exception:  # the event stands; a mail server that refuses must not undo it or fail a task
        logger.exception("could not send the %s email of %s", kind, project.code)


def notification_send(*, project: Project, kind: str, subject: str, body: str, link: str = "") -> None:
    """Send one email about an event of `project` to those who want it, once the current transaction commits
    (at once outside one). `link` is a path on this site (/p/<code>/...)."""
    if kind not in KIND_ROLES:
        raise ValueError(f"unknown notification kind {kind!r}")
    transaction.on_commit(lambda: _deliver(project, kind, subject, body, link))


def preferences_of(user) -> dict[int | None, set[str]]:
    """The kinds the user turned off, by project id (None: every project)."""
    return {pref.project_id: set(pref.off) for pref in NotificationPreference.objects.filter(user=user)}


@transaction.atomic
def notification_preferences_set(*, user, project: Project | None, off: list[str]) -> NotificationPreference:
    """Store which kinds `user` turned off in `project` (None: every project). The caller has checked that
    the user is a member of the project."""
    unknown = [kind for kind in off if kind not in NotificationKind.values]
    if unknown:
        raise ValidationError({"off": f"Unknown kind(s): {', '.join(unknown)[:200]}."})
    pref = (NotificationPreference.objects.select_for_update().filter(user=user, project=project).first()
            or NotificationPreference(user=user, project=project))
    pref.off = sorted(set(off))
    pref.full_clean(validate_constraints=False)
    pref.save()
    return pref
