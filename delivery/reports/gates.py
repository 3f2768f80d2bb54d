"""Delivery's own gate: acceptance, the customer's signature on a version of the acceptance report
(delivery.reports). It passes once the project has a signed version; signing recomputes the gates and
completes the acceptance stage (delivery.reports.services.report_version_sign)."""

from __future__ import annotations

from django.utils import timezone

from delivery.models import ReportSignature
from projects.gates import GateOutcome, MissingItem, register_gate

ACCEPTANCE_SIGNED = "delivery.acceptance_signed"


def acceptance_signed_gate(project) -> GateOutcome:
    signature = (ReportSignature.objects.filter(version__project=project).select_related("version")
                 .order_by("signed_at").first())
    if signature is not None:
        return GateOutcome(passed=True, missing_count=0, summary=(
            f"Version {signature.version.number} signed by {signature.name} on "
            f"{timezone.localtime(signature.signed_at):%Y-%m-%d}."
        ))
    return GateOutcome(passed=False, missing_count=1, summary="No signed acceptance report yet.", missing=[
        MissingItem(label="Acceptance report", reason="No version of the acceptance report is signed by the "
                    "customer yet.", ref="gate:acceptance-report"),
    ])


def register() -> None:
    register_gate(ACCEPTANCE_SIGNED, acceptance_signed_gate, title="The acceptance report signed by the customer")
