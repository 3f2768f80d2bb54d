from django.db import models


class CableType(models.TextChoices):
    DAC = "dac", "Passive copper (DAC)"
    ACC = "acc", "Active copper (ACC/AEC)"
    AOC = "aoc", "Active optical cable"
    FIBER = "fiber", "Fiber with transceivers"
    CAT6 = "cat6", "Cat6 copper"


class CableStatus(models.TextChoices):
    PLANNED = "planned", "Planned"
    INSTALLED = "installed", "Installed"
    VERIFIED = "verified", "Verified (scanned)"
    FAULTY = "faulty", "Faulty"


class Side(models.TextChoices):
    A = "A", "A"
    B = "B", "B"


# A cable in one of these states is physically in place: a re-plan never removes it silently.
PHYSICAL_CABLE_STATUSES = frozenset({CableStatus.INSTALLED, CableStatus.VERIFIED, CableStatus.FAULTY})


class FabricPlanStatus(models.TextChoices):
    """The life of a FabricPlan row: planned and diffed when submitted (the preview, or failed with the
    reasons), then, once a manager confirms, queued and applied by a task."""

    PREVIEW = "preview", "Ready to confirm"
    QUEUED = "queued", "Queued"
    APPLYING = "applying", "Applying"
    APPLIED = "applied", "Applied"
    FAILED = "failed", "Failed"


class FabricPlanSource(models.TextChoices):
    FORM = "form", "Plan page"
    API = "api", "API"
    COMMAND = "command", "plan_fabric command"
    DEMO = "demo", "seed_demo"
