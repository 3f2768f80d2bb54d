"""Email notifications (delivery/notifications/) through Django's email backend: sent after commit to
the project's members whose role hears of the kind and who did not turn it off, never to anyone outside the
project; one email per event with a link. A stage completed and a report version rendered (for real), issued and
signed; the settings page (/account/notifications/) as its user, anonymous and someone naming a project
not theirs."""

from __future__ import annotations

import pytest
from django.core import mail
from django.urls import reverse

from core.choices import JobStatus
from delivery.choices import NotificationKind, ReportDecision
from delivery.models import NotificationPreference
from delivery.notifications.services import notification_recipients, notification_send
from delivery.reports.services import report_version_issue, report_version_request, report_version_sign
from delivery.stages.services import (
    checklist_item_confirm,
    gates_recompute,
    stage_add_custom,
    stage_complete,
    stage_start,
)
from projects.choices import Role
from tests.factories import MembershipFactory, UserFactory

from .test_report_snapshot import report_world, satisfy_stages_before_acceptance

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(project, manager, technician, customer, outsider, other_project):
    """Everyone with an address, including a manager of another project who must never hear of this one."""
    for user in (manager, technician, customer, outsider):
        user.email = f"{user.username}@example.com"
        user.save()
    stranger = UserFactory(username="stranger", email="stranger@example.com")
    MembershipFactory(user=stranger, project=other_project, role=Role.MANAGER)
    return {"manager": manager, "technician": technician, "customer": customer}


def custom_stage_ready(project, manager, technician):
    stage = stage_add_custom(project=project, user=manager, title="Badge access", checklist=["Badges issued"],
                             depends_on=[])
    checklist_item_confirm(item=stage.checklist.get(), user=technician)
    gates_recompute(project=project)
    stage.refresh_from_db()
    return stage_start(stage=stage, user=manager)


def test_a_completed_stage_mails_every_member_once_after_commit_with_a_link(
        project, people, django_capture_on_commit_callbacks):
    stage = custom_stage_ready(project, people["manager"], people["technician"])
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        stage_complete(stage=stage, user=people["manager"])
    assert mail.outbox == []  # nothing leaves before the commit
    for callback in callbacks:
        callback()
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == [] and message.bcc == ["cust@example.com", "mgr@example.com", "tech@example.com"]
    assert "Completed: Badge access" in message.subject and message.subject.startswith(f"[{project.code}]")
    assert reverse("delivery:activity", args=[project.code]) in message.body


def test_a_rolled_back_completion_mails_nobody(project, people, django_capture_on_commit_callbacks):
    stage = custom_stage_ready(project, people["manager"], people["technician"])
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        stage_complete(stage=stage, user=people["manager"])
    callbacks.clear()  # what a rollback does: the callbacks are dropped
    assert mail.outbox == []


def test_a_regression_goes_to_managers_and_technicians_not_customers(project, people):
    assert notification_recipients(project=project, kind=NotificationKind.STAGE_REGRESSED) == [
        "mgr@example.com", "tech@example.com"]


def test_a_kind_turned_off_here_or_everywhere_is_not_sent_to_that_user_only(project, people, other_project):
    NotificationPreference.objects.create(user=people["customer"], project=project, off=["report_ready"])
    NotificationPreference.objects.create(user=people["technician"], project=None, off=["stage_completed"])
    NotificationPreference.objects.create(user=people["manager"], project=other_project, off=["report_ready"])
    assert notification_recipients(project=project, kind=NotificationKind.REPORT_READY) == [
        "mgr@example.com", "tech@example.com"]
    assert notification_recipients(project=project, kind=NotificationKind.STAGE_COMPLETED) == [
        "cust@example.com", "mgr@example.com"]


def test_an_unknown_kind_is_a_programming_error(project):
    with pytest.raises(ValueError, match="unknown notification kind"):
        notification_send(project=project, kind="gossip", subject="x", body="y")


def test_a_rendered_report_mails_report_ready_except_to_who_turned_it_off_and_signing_mails_signed(
        project, manager, technician, customer, outsider, django_capture_on_commit_callbacks):
    world = report_world(project)
    for user in (manager, technician, customer, outsider):
        user.email = f"{user.username}@example.com"
        user.save()
    NotificationPreference.objects.create(user=technician, project=project, off=["report_ready"])
    satisfy_stages_before_acceptance(world.project)  # so the version may be issued
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        version = report_version_request(project=world.project, user=manager)
    version.refresh_from_db()
    assert version.status == JobStatus.DONE, version.errors
    ready = [m for m in mail.outbox if "ready" in m.subject]
    assert len(ready) == 1
    assert ready[0].bcc == ["cust@example.com", "mgr@example.com"]  # not the technician, never the outsider
    assert reverse("reports:version", args=[project.code, version.number]) in ready[0].body

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        report_version_issue(version=version, user=manager)
    [issued] = mail.outbox
    assert "issued for acceptance" in issued.subject and issued.bcc == ["cust@example.com", "mgr@example.com"]

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        report_version_sign(version=version, user=customer, name="Cara Customer", title="CTO",
                            statement="We accept the cluster as delivered.",
                            decision=ReportDecision.ACCEPTED_WITH_EXCEPTIONS)
    signed = [m for m in mail.outbox if "signed" in m.subject]
    assert len(signed) == 1 and "Cara Customer (CTO)" in signed[0].body
    assert "with 2 open punch items (1 internal) as exceptions" in signed[0].body
    assert "outsider@example.com" not in signed[0].bcc


# --- the settings page -------------------------------------------------------------------------------------


def test_the_settings_page_needs_a_login(client):
    response = client.get(reverse("delivery:notification-settings"))
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_a_user_turns_report_ready_off_and_gets_no_email_while_another_does(
        project, people, client_for, django_capture_on_commit_callbacks):
    page = reverse("delivery:notification-settings")
    client = client_for(people["customer"])
    response = client.get(page)
    assert response.status_code == 200
    assert f'id="scope-{project.code}"' in response.content.decode() and 'id="scope-all"' in response.content.decode()
    kept = [k for k in NotificationKind.values if k != NotificationKind.REPORT_READY]
    response = client.post(page, {"scope": project.code, "on": kept})
    assert response.status_code == 302
    assert NotificationPreference.objects.get(user=people["customer"], project=project).off == ["report_ready"]

    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        notification_send(project=project, kind=NotificationKind.REPORT_READY, subject="Report ready", body="v1")
    assert len(mail.outbox) == 1 and "cust@example.com" not in mail.outbox[0].bcc
    assert "mgr@example.com" in mail.outbox[0].bcc

    client.post(page, {"scope": "all", "on": []})  # everything off, for every project
    assert NotificationPreference.objects.get(user=people["customer"], project=None).off == sorted(
        NotificationKind.values)
    assert "cust@example.com" not in notification_recipients(project=project, kind=NotificationKind.STAGE_COMPLETED)


def test_an_outsider_cannot_set_preferences_for_a_project_not_theirs(project, people, outsider, client_for):
    client = client_for(outsider)
    response = client.get(reverse("delivery:notification-settings"))
    assert f'id="scope-{project.code}"' not in response.content.decode()
    response = client.post(reverse("delivery:notification-settings"), {"scope": project.code, "on": []})
    assert response.status_code == 302
    assert not NotificationPreference.objects.filter(user=outsider, project=project).exists()
    assert "outsider@example.com" not in notification_recipients(project=project, kind=NotificationKind.REPORT_READY)
