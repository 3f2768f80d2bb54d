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


class NodeScope(models.TextChoices):
    """What a node token may post (projects.models.NodeToken); nothing else is open to it."""

    UPLOADS = "uploads", "Tool outputs (POST /api/uploads/)"
    TOPOLOGY = "topology", "Observed topology"


class NodeTokenState(models.TextChoices):
    ACTIVE = "active", "Active"
    EXPIRED = "expired", "Expired"
    REVOKED = "revoked", "Revoked"
