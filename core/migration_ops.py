"""Operations that migrations of several apps share."""

from django.db import migrations
from django.db.models import Case, F, Value, When

from .sql import table_fillfactor_set


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

    def set_to(value: int | None, *, rewrite: bool):
        def run(apps, schema_editor):
            table_fillfactor_set(schema_editor=schema_editor, model=apps.get_model(app_label, model_name),
                                 fillfactor=value, rewrite=rewrite)

        return run

    return migrations.RunPython(set_to(int(fillfactor), rewrite=True), set_to(None, rewrite=False))


class TablesRenamed(migrations.operations.base.Operation):
    """Database only: rename tables (old name, new name) and back. For models that moved between apps with
    SeparateDatabaseAndState: the rows stay where they are, the foreign keys of other tables follow the rename
    (PostgreSQL by the table's identity, SQLite by rewriting the references, legacy_alter_table being off)."""

    reversible = True

    def __init__(self, renames):
        self.renames = [tuple(pair) for pair in renames]

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        for old, new in self.renames:
            schema_editor.alter_db_table(None, old, new)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        for old, new in reversed(self.renames):
            schema_editor.alter_db_table(None, new, old)

    def describe(self):
        return f"Rename {len(self.renames)} table(s)"

    def deconstruct(self):
        return self.__class__.__qualname__, [self.renames], {}


class TablesAdoptedOrCreated(migrations.operations.base.Operation):
    """Database only, for models whose app was renamed: each model's table is the legacy one renamed when the
    legacy tables exist (a database made by the old app's migrations: its rows kept), or created from the
    model's state on a new database. Half of them existing is refused: that database needs a person. Backwards,
    the tables are dropped, as a CreateModel's are: the legacy app is gone, so there is nothing to hand them to."""

    reversible = True

    def __init__(self, legacy_tables):
        self.legacy_tables = dict(legacy_tables)  # model name -> legacy table name

    def state_forwards(self, app_label, state):
        pass

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        existing = set(schema_editor.connection.introspection.table_names())
        found = [table for table in self.legacy_tables.values() if table in existing]
        if found and len(found) != len(self.legacy_tables):
            missing = sorted(set(self.legacy_tables.values()) - set(found))
            raise RuntimeError(f"Some legacy tables exist and some do not (missing: {', '.join(missing)}).")
        for model_name, legacy in self.legacy_tables.items():
            model = to_state.apps.get_model(app_label, model_name)
            if found:
                schema_editor.alter_db_table(model, legacy, model._meta.db_table)
            else:
                schema_editor.create_model(model)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        for model_name in reversed(list(self.legacy_tables)):
            schema_editor.delete_model(from_state.apps.get_model(app_label, model_name))

    def describe(self):
        return f"Adopt or create the tables of {len(self.legacy_tables)} model(s)"

    def deconstruct(self):
        return self.__class__.__qualname__, [self.legacy_tables], {}


def content_types_moved(models_by_label, *, from_label: str, to_label: str):
    """A RunPython moving the content types (and so the permissions and admin log entries that point at them) of
    the named models from one app label to another, both ways."""

    def move(source: str, target: str):
        def run(apps, schema_editor):
            content_type = apps.get_model("contenttypes", "ContentType")
            content_type.objects.using(schema_editor.connection.alias).filter(
                app_label=source, model__in=list(models_by_label)
            ).update(app_label=target)

        return run

    return migrations.RunPython(move(from_label, to_label), move(to_label, from_label))
