from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"
    verbose_name = "Projects"

    def ready(self):
        from projects import signals  # noqa: F401  (a password change deletes the user's API token)
