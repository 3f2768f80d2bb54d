"""Operations that migrations of several apps share."""

from django.db import migrations
from django.db.models import Case, F, Value, When


def remap_statuses(app_label: str, model_name: str, forward: dict[str, str], backward: dict[str, str]):
    """A RunPython that renames status values in one UPDATE each way (for a model moving onto the
    job row's JobStatus, keeping its rows)."""

    def remap(mapping: dict[str, str]):
        def run(apps, schema_editor):
            model = apps.get_model(app_label, model_name)
            renamed = Case(*(When(status=old, then=Value(new)) for old, new in mapping.items()), default=F("status"))
            model._default_manager.filter(status__in=list(mapping)).update(status=renamed)

        return run

    return migrations.RunPython(remap(forward), remap(backward))


def table_fillfactor(app_label: str, model_name: str, fillfactor: int):
    """A RunPython that has PostgreSQL keep `100 - fillfactor` % of each page of the model's table free, so an
    update that changes no indexed column stays on its page (a HOT update: no index entry written), and
    rewrites the table (VACUUM FULL) so the rows already there get the room too; backwards, the default again
    (no rewrite). VACUUM cannot run inside a transaction: the migration must say `atomic = False`. Other
    databases have no such setting: nothing to do."""

    def set_to(setting: str, *, rewrite: bool):
        def run(apps, schema_editor):
            if schema_editor.connection.vendor != "postgresql":
                return
            table = schema_editor.quote_name(apps.get_model(app_label, model_name)._meta.db_table)
            schema_editor.execute(f"ALTER TABLE {table} {setting}")
            if rewrite:
                schema_editor.execute(f"VACUUM FULL {table}")

        return run

    return migrations.RunPython(set_to(f"SET (fillfactor = {int(fillfactor)})", rewrite=True),
                                set_to("RESET (fillfactor)", rewrite=False))
