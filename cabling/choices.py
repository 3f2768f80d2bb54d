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


class FabricPlanSource(models.TextChoices):
    FORM = "form", "Plan page"
    API = "api", "API"
    COMMAND = "command", "plan_fabric command"
    DEMO = "demo", "seed_demo"


class LabelScope(models.TextChoices):
    """What a label sheet export prints: every cable end of the project, the ends in one rack, or both
    ends of every cable of one network."""

    ALL = "all", "The whole fabric"
    RACK = "rack", "One rack"
    NETWORK = "network", "One network"


class LabelStockName(models.TextChoices):
    """The label stocks the sheet is laid out for (cabling.exports.labels_pdf.STOCKS has their geometry)."""

    L7651 = "L7651", "Avery L7651 (A4, 65 per sheet)"
    THERMAL_2X1 = "thermal-2x1", "Thermal roll, 2 x 1 in"
