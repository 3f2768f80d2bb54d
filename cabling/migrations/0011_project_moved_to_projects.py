import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Project moved from the delivery app to projects (its table renamed there): only the state changes."""


    dependencies = [
        ('cabling', '0010_cable_fillfactor'),
        ('projects', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
                migrations.AlterField(
                    model_name='cable',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='cables', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='fabricplan',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='fabric_plans', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicalcable',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicalswap',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='labelsheetexport',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='label_exports', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='scanevent',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='scans', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='swap',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='swaps', to='projects.project'),
                ),
        ]),
    ]
