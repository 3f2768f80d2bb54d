from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    verbose_name = "Validation"

    def ready(self) -> None:
        # Services send this app's tasks by name (core.jobs.enqueue_on_commit) and nothing else imports
        # the tasks module in a web process: register them with Celery here, or the first run started
        # from a page would find no task of that name.
        # A cable's page (cabling) shows what the fabric made of it: the latest topology comparison and its
        # recent link-health results. cabling cannot import validation, so validation adds the panel.
        from core.panels import Panel, register_panel

        from . import tasks  # noqa: F401
        from .gates import register as register_gates
        from .report_sections import register as register_report_sections

        register_gates()  # cabling, OS and drivers, link checks, benchmarks, soak (projects.gates)
        # The acceptance report's topology comparison, link health, bandwidth, NCCL and soak sections and
        # their chart drawers (projects.reports).
        register_report_sections()

        register_panel("cabling.cable", Panel(
            key="fabric",
            title="Seen by the fabric",
            template="validation/topology/_cable_panel.html",
            context=_cable_panel_context,
            order=50,
        ))


def _cable_panel_context(request, obj, project) -> dict:
    from .topology.selectors import cable_fabric_panel

    return cable_fabric_panel(user=request.user, project=project, cable=obj)
