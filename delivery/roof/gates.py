"""The roof's own gate: acceptance, the customer's signature on the acceptance report. The report and its
sign-off are not built yet, so the gate says so and fails: acceptance completes only with a waiver until
they are (the report issue)."""

from __future__ import annotations

from delivery.gates import GateOutcome, MissingItem, register_gate

ACCEPTANCE_SIGNED = "roof.acceptance_signed"


def acceptance_signed_gate(project) -> GateOutcome:
    return GateOutcome(passed=False, missing_count=1, summary="No signed acceptance report yet.", missing=[
        MissingItem(label="Acceptance report", reason="Not signed by the customer: acceptance reports are not "
                    "built yet, so acceptance completes with a waiver.", ref="gate:acceptance-report"),
    ])


def register() -> None:
    register_gate(ACCEPTANCE_SIGNED, acceptance_signed_gate, title="The acceptance report signed by the customer")
