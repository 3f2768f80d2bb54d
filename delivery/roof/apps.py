from django.apps import AppConfig


class RoofConfig(AppConfig):
    """An app of its own so that its management commands (seed_demo), its models (stages, waivers) and its
    tasks live with the roof instead of on delivery's ground."""

    name = "delivery.roof"
    label = "roof"
    verbose_name = "Delivery (workflow, dashboards, demo)"

    def ready(self) -> None:
        # Services send this app's tasks by name (core.jobs.enqueue_on_commit): register them in every process.
        from delivery.evidence import evidence_changed

        from . import tasks  # noqa: F401
        from .gates import register as register_gates
        from .punch_panels import register as register_punch_panels
        from .reports.sections import register as register_report_sections

        register_gates()
        register_report_sections()  # the acceptance report's summary, punch list and sign-off
        register_punch_panels()  # the punch items of a device or a cable, on its page
        # The domain apps say when a gate's evidence changed; they cannot import the roof, so it listens.
        evidence_changed.connect(_on_evidence_changed, dispatch_uid="roof.gates_recompute")


def _on_evidence_changed(sender, *, project_id: int, **kwargs) -> None:
    """Ask for a recompute once the sender's transaction commits (nothing if it rolls back)."""
    from .services import gates_recompute_after_commit

    gates_recompute_after_commit(project_id=project_id)
