import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Project moved from the delivery app to projects (its table renamed there): only the state changes."""


    dependencies = [
        ('inventory', '0010_port_identity_and_history_unindexed'),
        ('projects', '0001_initial'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
                migrations.AlterField(
                    model_name='device',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='devices', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicaldevice',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicaloptic',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicalrack',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicalsite',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='importjob',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='import_jobs', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='optic',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='optics', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='rack',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='racks', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='site',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='sites', to='projects.project'),
                ),
        ]),
    ]
