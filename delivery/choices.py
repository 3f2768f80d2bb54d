from django.db import models


class StageStatus(models.TextChoices):
    NOT_STARTED = "not_started", "Not started"
    IN_PROGRESS = "in_progress", "In progress"
    BLOCKED = "blocked", "Blocked"  # started or done, then a stage it depends on reopened: it waits for it
    DONE = "done", "Done"
    SKIPPED = "skipped", "Skipped"


# A stage in one of these states lets the stages that depend on it start.
SATISFIED_STAGE_STATUSES = frozenset({StageStatus.DONE, StageStatus.SKIPPED})


class StageWork(models.TextChoices):
    """What starting a stage starts through Celery (blank: nothing, the stage is worked on the floor)."""

    TOPOLOGY = "topology", "A topology comparison (topology check run)"
    NODE_INVENTORY = "node_inventory", "A node inventory check on every node"
    LINK_HEALTH = "link_health", "A link-health run on every node"
    BENCHMARKS = "benchmarks", "The bandwidth matrix and NCCL"
    SOAK = "soak", "A soak window"


# The gate of a stage whose items people confirm by hand (network configuration, custom stages): delivery
# computes it from the stage's checklist, not from the registry (projects.gates).
CHECKLIST_GATE = "checklist"


class PunchSeverity(models.TextChoices):
    CRITICAL = "critical", "Critical"
    MAJOR = "major", "Major"
    MINOR = "minor", "Minor"


class PunchStatus(models.TextChoices):
    """Where a punch item stands. "Verified" is never set by hand: the sync (delivery.punch.services) moves a
    fixed item there when a later check or comparison of its object passes."""

    OPEN = "open", "Open"
    IN_PROGRESS = "in_progress", "In progress"
    FIXED = "fixed", "Fixed (awaiting a passing re-check)"
    VERIFIED = "verified", "Verified"
    WONT_FIX = "wont_fix", "Won't fix"


# Items still to be worked on (the ones a new fault of the same fingerprint does not duplicate).
UNRESOLVED_PUNCH_STATUSES = frozenset({PunchStatus.OPEN, PunchStatus.IN_PROGRESS, PunchStatus.FIXED})


class PunchObjectKind(models.TextChoices):
    DEVICE = "device", "Device"
    PORT = "port", "Port"
    CABLE = "cable", "Cable"
    OPTIC = "optic", "Optic"
    NODE_PAIR = "node_pair", "Node pair"
    CHECK_RESULT = "check_result", "Check result"
    MISWIRE = "miswire", "Miswire (topology comparison)"


class PunchSource(models.TextChoices):
    MANUAL = "manual", "Opened by hand"
    CHECK_RESULT = "check_result", "A failed check result"
    TOPOLOGY = "topology", "A topology comparison"


class NotificationKind(models.TextChoices):
    STAGE_COMPLETED = "stage_completed", "A stage is completed"
    STAGE_REGRESSED = "stage_regressed", "A stage reopens (its gate no longer passes)"
    REPORT_READY = "report_ready", "An acceptance report version is ready"
    REPORT_ISSUED = "report_issued", "An acceptance report version is issued for acceptance"
    REPORT_SIGNED = "report_signed", "The acceptance report is signed"
    REPORT_REJECTED = "report_rejected", "The customer rejects an acceptance report version"


class ReportState(models.TextChoices):
    """Where a version of the acceptance report stands with the customer. A draft is rendered (or being
    rendered) and not issued; a manager issues one for acceptance; the customer accepts it (plainly or with
    exceptions) or rejects it; an issued version no one decided on is superseded when a later one is issued.
    An as-built addendum (made after an acceptance) stays a draft: it records changes, nobody signs it."""

    DRAFT = "draft", "Draft"
    ISSUED = "issued", "Issued for acceptance"
    ACCEPTED = "accepted", "Accepted"
    ACCEPTED_WITH_EXCEPTIONS = "accepted_with_exceptions", "Accepted with exceptions"
    REJECTED = "rejected", "Rejected"
    SUPERSEDED = "superseded", "Superseded"


# A version in one of these states is the project's accepted report: final, and at most one per project.
ACCEPTED_REPORT_STATES = frozenset({ReportState.ACCEPTED, ReportState.ACCEPTED_WITH_EXCEPTIONS})
# Versions that went to the customer: a draft older than one of these can no longer be issued.
ISSUED_REPORT_STATES = frozenset({ReportState.ISSUED, ReportState.REJECTED, ReportState.SUPERSEDED,
                                  *ACCEPTED_REPORT_STATES})


class ReportDecision(models.TextChoices):
    """What the customer decided on an issued version (ReportSignature.decision)."""

    ACCEPTED = "accepted", "Accepted"
    ACCEPTED_WITH_EXCEPTIONS = "accepted_with_exceptions", "Accepted with exceptions"
    REJECTED = "rejected", "Rejected"


ACCEPTING_DECISIONS = frozenset({ReportDecision.ACCEPTED, ReportDecision.ACCEPTED_WITH_EXCEPTIONS})
# The version's state each decision leaves it in.
DECISION_STATES = {
    ReportDecision.ACCEPTED: ReportState.ACCEPTED,
    ReportDecision.ACCEPTED_WITH_EXCEPTIONS: ReportState.ACCEPTED_WITH_EXCEPTIONS,
    ReportDecision.REJECTED: ReportState.REJECTED,
}
