from django.db import models


class Role(models.TextChoices):
    MANAGER = "manager", "Project manager"
    TECHNICIAN = "technician", "Technician"
    CUSTOMER = "customer", "Customer"


class ProjectStatus(models.TextChoices):
    PLANNING = "planning", "Planning"
    ACTIVE = "active", "Active"
    ON_HOLD = "on_hold", "On hold"
    ACCEPTED = "accepted", "Accepted"
    CLOSED = "closed", "Closed"
