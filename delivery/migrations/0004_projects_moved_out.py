from django.db import migrations


class Migration(migrations.Migration):
    """Projects, memberships and node tokens moved to the projects app (projects 0001 renamed their tables):
    this app forgets them, in its state only."""

    dependencies = [
        ("cabling", "0011_project_moved_to_projects"),
        ("delivery", "0003_project_names_zh"),
        ("inventory", "0011_project_moved_to_projects"),
        ("projects", "0001_initial"),
        ("validation", "0009_project_moved_to_projects"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(state_operations=[
                migrations.RemoveField(
                    model_name='historicalproject',
                    name='history_user',
                ),
                migrations.RemoveField(
                    model_name='membership',
                    name='project',
                ),
                migrations.RemoveField(
                    model_name='membership',
                    name='user',
                ),
                migrations.RemoveField(
                    model_name='nodetoken',
                    name='created_by',
                ),
                migrations.RemoveField(
                    model_name='nodetoken',
                    name='project',
                ),
                migrations.RemoveField(
                    model_name='nodetoken',
                    name='revoked_by',
                ),
                migrations.DeleteModel(
                    name='HistoricalMembership',
                ),
                migrations.DeleteModel(
                    name='HistoricalProject',
                ),
                migrations.DeleteModel(
                    name='Membership',
                ),
                migrations.DeleteModel(
                    name='Project',
                ),
                migrations.DeleteModel(
                    name='NodeToken',
                ),
        ]),
    ]
