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


# The gate of a stage whose items people confirm by hand (network configuration, custom stages): the roof
# computes it from the stage's checklist, not from the registry (delivery.gates).
CHECKLIST_GATE = "checklist"
