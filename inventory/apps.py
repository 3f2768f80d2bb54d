from django.apps import AppConfig


class InventoryConfig(AppConfig):
    name = "inventory"
    verbose_name = "Inventory"

    def ready(self) -> None:
        # Services send this app's tasks by name (core.jobs.enqueue_on_commit): register them in every
        # process, not only in a worker (which autodiscovers them).
        from . import tasks  # noqa: F401
        from .gates import register as register_gates
        from .report_sections import register as register_report_sections

        register_gates()  # site readiness and racking (projects.gates: delivery's stages read them)
        register_report_sections()  # the acceptance report's inventory section (projects.reports)
