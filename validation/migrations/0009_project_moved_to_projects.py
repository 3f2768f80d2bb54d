import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    """Project moved from the delivery app to projects (its table renamed there): only the state changes."""


    dependencies = [
        ('projects', '0001_initial'),
        ('validation', '0008_checkrun_summary'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
                migrations.AlterField(
                    model_name='acceptanceprofile',
                    name='project',
                    field=models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='acceptance_profile', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='checkrun',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='check_runs', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='historicalacceptanceprofile',
                    name='project',
                    field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='soakwindow',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='soak_windows', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='toolupload',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='tool_uploads', to='projects.project'),
                ),
                migrations.AlterField(
                    model_name='topologycomparison',
                    name='project',
                    field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='topology_comparisons', to='projects.project'),
                ),
        ]),
    ]
