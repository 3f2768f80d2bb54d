"""Delivery's own gate: acceptance, the customer's signature accepting a version of the acceptance report
(delivery.reports). It passes once the project has an accepted version (plainly or with exceptions; a
rejection does not count); accepting recomputes the gates and completes the acceptance stage
(delivery.reports.services.report_version_sign)."""

from __future__ import annotations

from django.utils import timezone

from delivery.choices import ACCEPTING_DECISIONS, ReportDecision
from delivery.models import ReportSignature
from projects.gates import GateOutcome, MissingItem, register_gate

ACCEPTANCE_SIGNED = "delivery.acceptance_signed"


def acceptance_signed_gate(project) -> GateOutcome:
    signature = (ReportSignature.objects.filter(version__project=project, decision__in=ACCEPTING_DECISIONS)
                 .select_related("version").order_by("signed_at").first())
    if signature is not None:
        how = " with exceptions" if signature.decision == ReportDecision.ACCEPTED_WITH_EXCEPTIONS else ""
        return GateOutcome(passed=True, missing_count=0, summary=(
            f"Version {signature.version.number} signed{how} by {signature.name} on "
            f"{timezone.localtime(signature.signed_at):%Y-%m-%d}."
        ))
    return GateOutcome(passed=False, missing_count=1, summary="No signed acceptance report yet.", missing=[
        MissingItem(label="Acceptance report", reason="No version of the acceptance report is accepted and "
                    "signed by the customer yet.", ref="gate:acceptance-report"),
    ])


def register() -> None:
    register_gate(ACCEPTANCE_SIGNED, acceptance_signed_gate, title="The acceptance report signed by the customer")
