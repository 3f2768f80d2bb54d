from django.apps import AppConfig


class ValidationConfig(AppConfig):
    name = "validation"
    verbose_name = "Validation"

    def ready(self) -> None:
        # Services send this app's tasks by name (core.jobs.enqueue_on_commit) and nothing else imports
        # the tasks module in a web process: register them with Celery here, or the first run started
        # from a page would find no task of that name.
        from . import tasks  # noqa: F401
