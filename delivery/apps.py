from django.apps import AppConfig


class DeliveryConfig(AppConfig):
    name = "delivery"
    verbose_name = "Delivery"

    def ready(self):
        from . import signals  # noqa: F401  (a password change deletes the user's API token)
