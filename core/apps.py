from django.apps import AppConfig
from django.db.backends.signals import connection_created


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Shared ground floor"

    def ready(self) -> None:
        from .pg_integers import integer_dumpers_checked

        connection_created.connect(integer_dumpers_checked, dispatch_uid="core.pg_integers")
