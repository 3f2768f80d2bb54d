"""The cable table keeps half of each page free (PostgreSQL's fillfactor 50), so that what a topology
comparison writes on every cable it sees (its state, its status, the time seen: 24,576 cables of a
1,024-server fabric at each comparison) is a HOT update: the new row version goes on the same page and the
table's indexes get no new entry (see inventory 0009, the same for ports).

The table is rewritten here (VACUUM FULL, which cannot run inside a transaction: this migration is not
atomic) so the cables already there get the room too. Other databases have no such setting: nothing to do."""

from django.db import migrations

from core.migration_ops import table_fillfactor

FILLFACTOR = 50


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("cabling", "0009_cable_fabric_verified_at"),
    ]

    operations = [table_fillfactor("cabling", "Cable", FILLFACTOR)]
