from django.apps import AppConfig


class CablingConfig(AppConfig):
    name = "cabling"
    verbose_name = "Cabling"

    def ready(self) -> None:
        # Services send this app's tasks by name (core.jobs.enqueue_on_commit) and nothing else imports
        # them: register them in every process, not only in a worker (which autodiscovers them), so an
        # eager run in the web process finds them too.
        from . import tasks  # noqa: F401
        from .panels import register
        from .report_sections import register as register_report_sections

        register()  # the ports panel of a device's page (inventory shows it without importing cabling)
        register_report_sections()  # the report's topology section and its fabric chart (projects.reports)
