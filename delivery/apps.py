from django.apps import AppConfig


class DeliveryConfig(AppConfig):
    """The delivery itself, on the top floor: stages and their gates, the punch list, dashboards, activity and
    notifications, the acceptance reports and the NetBox handover. It reads every domain app."""

    name = "delivery"
    verbose_name = "Delivery (stages, punch list, reports, handover)"

    def ready(self) -> None:
        # Services send this app's tasks by name (core.jobs.enqueue_on_commit): register them in every process.
        from delivery import tasks  # noqa: F401
        from delivery.punch.panels import register as register_punch_panels
        from delivery.reports.gates import register as register_gates
        from delivery.reports.sections import register as register_report_sections
        from projects.evidence import evidence_changed

        register_gates()
        register_report_sections()  # the acceptance report's summary, punch list and sign-off
        register_punch_panels()  # the punch items of a device or a cable, on its page
        # The domain apps say when a gate's evidence changed; they cannot import delivery, so it listens.
        evidence_changed.connect(_on_evidence_changed, dispatch_uid="delivery.gates_recompute")


def _on_evidence_changed(sender, *, project_id: int, **kwargs) -> None:
    """Ask for a recompute once the sender's transaction commits (nothing if it rolls back)."""
    from delivery.stages.services import gates_recompute_after_commit

    gates_recompute_after_commit(project_id=project_id)
