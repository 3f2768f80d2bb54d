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
