"""The cable table keeps half of each page free (PostgreSQL's fillfactor 50), so that what a topology
comparison writes on every cable it sees (its state, its status, the time seen: 24,576 cables of a
1,024-server fabric at each comparison) is a HOT update: the new row version goes on the same page and the
table's indexes get no new entry (see inventory 0009, the same for ports).

The table is rewritten here (VACUUM FULL, which cannot run inside a transaction: this migration is not
atomic) so the cables already there get the room too. Other databases have no such setting: nothing to do."""

from django.db import migrations

FILLFACTOR = 50


def _fillfactor(setting: str, *, rewrite: bool):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        table = schema_editor.quote_name(apps.get_model("cabling", "Cable")._meta.db_table)
        schema_editor.execute(f"ALTER TABLE {table} {setting}")
        if rewrite:
            schema_editor.execute(f"VACUUM FULL {table}")

    return run


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("cabling", "0009_cable_fabric_verified_at"),
    ]

    operations = [
        migrations.RunPython(_fillfactor(f"SET (fillfactor = {FILLFACTOR})", rewrite=True),
                             _fillfactor("RESET (fillfactor)", rewrite=False)),
    ]
