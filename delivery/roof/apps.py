from django.apps import AppConfig


class RoofConfig(AppConfig):
    """An app of its own so that its management commands (seed_demo), and later its models, live
    with the roof instead of on delivery's ground."""

    name = "delivery.roof"
    label = "roof"
    verbose_name = "Delivery (workflow, dashboards, demo)"
