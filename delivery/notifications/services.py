"""Email notifications of a project's delivery (a stage completed or reopened, a report version ready,
issued, accepted or rejected) and the per-user preference that turns kinds off, for one project or for all of them.

Every notification goes through `notification_send`: its recipients are the project's members whose role
receives that kind and who have not turned it off (never anyone outside the project), and the email leaves
after the caller's transaction commits, so a rolled-back completion mails nobody. One email per event.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import models, transaction

from delivery.choices import NotificationKind
from delivery.models import NotificationPreference
from projects.choices import Role
from projects.models import Membership, Project

logger = logging.getLogger(__name__)

EVERYONE = frozenset(Role.values)
# Which roles hear of each kind: a regression is the delivery team's to fix, not the customer's to read.
KIND_ROLES: dict[str, frozenset[str]] = {
    NotificationKind.STAGE_COMPLETED: EVERYONE,
    NotificationKind.STAGE_REGRESSED: frozenset({Role.MANAGER, Role.TECHNICIAN}),
    NotificationKind.REPORT_READY: EVERYONE,
    NotificationKind.REPORT_ISSUED: frozenset({Role.MANAGER, Role.CUSTOMER}),  # the customer decides on it
    NotificationKind.REPORT_SIGNED: EVERYONE,
    NotificationKind.REPORT_REJECTED: frozenset({Role.MANAGER}),  # the managers issue the next version
}
SUBJECT_LENGTH = 200


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
