"""delivery 0006 gives report versions their states without losing a row: a version signed before becomes
accepted (its signature an acceptance, with no exceptions), every other version a draft; and the way back
drops the new columns only."""

import pytest
from django.utils import timezone

from tests.support import migrated_to, scratch_database

BEFORE = [("delivery", "0005_workflow_moved_in")]
AFTER = [("delivery", "0006_report_states")]

pytestmark = pytest.mark.django_db


@pytest.fixture
def executor(tmp_path):
    with scratch_database(tmp_path) as executor:
        yield executor


def test_signed_versions_become_accepted_and_the_others_drafts(executor):
    old = migrated_to(executor, BEFORE)
    user = old.get_model("auth", "User").objects.create(username="cust")
    project = old.get_model("projects", "Project").objects.create(code="MIG-1", name="Old", customer_name="C")
    Version = old.get_model("delivery", "ReportVersion")
    signed, rendered, failed = (Version.objects.create(project=project, number=number, status=status)
                                for number, status in ((1, "done"), (2, "done"), (3, "failed")))
    old.get_model("delivery", "ReportSignature").objects.create(
        version=signed, signed_by=user, name="Cara", title="CTO", statement="We accept.", signed_at=timezone.now(),
        status="done", pdf_sha256="a" * 64)

    new = migrated_to(executor, AFTER)
    states = dict(new.get_model("delivery", "ReportVersion").objects.values_list("number", "state"))
    assert states == {1: "accepted", 2: "draft", 3: "draft"}
    signature = new.get_model("delivery", "ReportSignature").objects.get()
    assert (signature.decision, signature.comments, signature.exceptions, signature.pdf_sha256) == (
        "accepted", "", {}, "a" * 64)

    back = migrated_to(executor, BEFORE)
    assert back.get_model("delivery", "ReportVersion").objects.count() == 3
    assert back.get_model("delivery", "ReportSignature").objects.get().name == "Cara"
