"""The port table keeps half of each page free (PostgreSQL's fillfactor 50), so that moving a port's status
(a topology comparison moves 57,344 ports of a 1,024-server fabric the first time) is a HOT update: the new
row version goes on the same page and none of the table's eight indexes gets a new entry. With full pages
every moved port wrote eight index entries, most of the first comparison's time at the database (1.5 s of
its 3.3 s). The table is then about twice its packed size (22 MB for 100,000 ports).

The setting applies to rows written from now on; the table is rewritten here (VACUUM FULL, which cannot run
inside a transaction: this migration is not atomic) so the ports already there get the room too. Other
databases have no such setting: nothing to do."""

from django.db import migrations

from core.migration_ops import table_fillfactor

FILLFACTOR = 50


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("inventory", "0008_lookup_indexes"),
    ]

    operations = [table_fillfactor("inventory", "Port", FILLFACTOR)]
