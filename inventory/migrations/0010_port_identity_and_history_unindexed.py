"""Indexes nothing reads, on what a topology comparison writes by the tens of thousands, are dropped: a port's
GUID / MAC loses its two on the port table and its two on the history table (db_index=True on a CharField
gives a B-tree and, on PostgreSQL, a varchar_pattern_ops "_like" index), and the port history table its
indexes on device, NIC and parent (simple_history indexes a copied foreign key; `no_db_index` says not to).

A topology comparison writes them all: learning the 16,384 MACs of a 1,024-server fabric changed an indexed
column, so each port's new version went into every index of the port table (no HOT update), and every history
row of a port (16,384 learned, then 57,344 moved, the first time) went into both history indexes. Measured on
that fabric (EXPLAIN ANALYZE of the learning statement, inventory.services.identities): 0.43 s for the
ports' UPDATE with the indexes, 0.19 s without them, HOT updates in the room fillfactor 50 keeps (0009).

What reads the column, and why none needs an index:
- inventory.services.identities (`guid_mac IN (...)`: the ports that held a value just learned): on a whole
  fabric PostgreSQL read the project's ports in one sequential scan with the index there; a few values
  learned read the project's ports once (tens of milliseconds at 100,000 ports);
- cabling.search (`guid_mac__iexact`): UPPER(guid_mac) = UPPER(%s) on PostgreSQL, which neither index serves;
- the handover export (`guid_mac__contains=":"`): LIKE '%:%', which no B-tree serves;
- nothing reads a prefix (startswith, what the "_like" index is for), nor the history table by GUID or MAC.

The port history table is read by port (`port.history.all()`, the port and device pages: the `id` index) and
by date (history_date), and when a user is deleted by user (history_user): those indexes stay. No code reads
it by device, NIC or parent, and its foreign keys there are DO_NOTHING without a constraint (a deleted device
does not look its ports' history up). Each history row (73,728 in a whole fabric's first comparison) now
writes four index entries instead of nine.
"""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0009_port_fillfactor'),
    ]

    operations = [
        migrations.AlterField(
            model_name='historicalport',
            name='device',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='inventory.device'),
        ),
        migrations.AlterField(
            model_name='historicalport',
            name='guid_mac',
            field=models.CharField(blank=True, help_text="The port's GUID (InfiniBand) or MAC (Ethernet), learned from the fabric.", max_length=40, verbose_name='GUID / MAC'),
        ),
        migrations.AlterField(
            model_name='historicalport',
            name='nic',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='inventory.nic'),
        ),
        migrations.AlterField(
            model_name='historicalport',
            name='parent',
            field=models.ForeignKey(blank=True, db_constraint=False, db_index=False, help_text='The physical port this breakout lane belongs to.', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='inventory.port'),
        ),
        migrations.AlterField(
            model_name='port',
            name='guid_mac',
            field=models.CharField(blank=True, help_text="The port's GUID (InfiniBand) or MAC (Ethernet), learned from the fabric.", max_length=40, verbose_name='GUID / MAC'),
        ),
    ]
