import django.core.validators
import django.db.models.deletion
import django.utils.timezone
import simple_history.models
from django.conf import settings
from django.db import migrations, models

from core.migration_ops import TablesRenamed, content_types_moved


class Migration(migrations.Migration):
    """Projects, memberships and node tokens were the delivery app's (its migrations 0001-0003 made them): the
    models move here with their rows, their tables renamed in place."""


    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("contenttypes", "0002_remove_content_type_name"),
        ("delivery", "0003_project_names_zh"),
        # After every migration that made a foreign key to delivery_project, which this one renames.
        ("cabling", "0010_cable_fillfactor"),
        ("inventory", "0010_port_identity_and_history_unindexed"),
        ("validation", "0008_checkrun_summary"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='HistoricalProject',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('code', models.CharField(db_index=True, max_length=32, validators=[django.core.validators.RegexValidator('^[A-Z0-9][A-Z0-9-]{1,31}$', 'Use 2-32 upper-case letters, digits and dashes, e.g. ACME-72.')])),
                        ('name', models.CharField(max_length=200)),
                        ('name_zh', models.CharField(blank=True, db_default='', help_text="The project's name in Chinese, for the bilingual acceptance report.", max_length=200, verbose_name='Name (Chinese)')),
                        ('customer_name', models.CharField(max_length=200)),
                        ('customer_name_zh', models.CharField(blank=True, db_default='', help_text="The customer's name in Chinese, as on their contract.", max_length=200, verbose_name='Customer (Chinese)')),
                        ('site', models.CharField(blank=True, help_text='Data centre and hall, as the customer names it.', max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('status', models.CharField(choices=[('planning', 'Planning'), ('active', 'Active'), ('on_hold', 'On hold'), ('accepted', 'Accepted'), ('closed', 'Closed')], default='planning', max_length=16)),
                        ('start_date', models.DateField(blank=True, null=True)),
                        ('target_date', models.DateField(blank=True, help_text='Planned customer acceptance.', null=True)),
                        ('created_at', models.DateTimeField(blank=True, editable=False)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical project',
                        'verbose_name_plural': 'historical projects',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='Project',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('code', models.CharField(max_length=32, unique=True, validators=[django.core.validators.RegexValidator('^[A-Z0-9][A-Z0-9-]{1,31}$', 'Use 2-32 upper-case letters, digits and dashes, e.g. ACME-72.')])),
                        ('name', models.CharField(max_length=200)),
                        ('name_zh', models.CharField(blank=True, db_default='', help_text="The project's name in Chinese, for the bilingual acceptance report.", max_length=200, verbose_name='Name (Chinese)')),
                        ('customer_name', models.CharField(max_length=200)),
                        ('customer_name_zh', models.CharField(blank=True, db_default='', help_text="The customer's name in Chinese, as on their contract.", max_length=200, verbose_name='Customer (Chinese)')),
                        ('site', models.CharField(blank=True, help_text='Data centre and hall, as the customer names it.', max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('status', models.CharField(choices=[('planning', 'Planning'), ('active', 'Active'), ('on_hold', 'On hold'), ('accepted', 'Accepted'), ('closed', 'Closed')], default='planning', max_length=16)),
                        ('start_date', models.DateField(blank=True, null=True)),
                        ('target_date', models.DateField(blank=True, help_text='Planned customer acceptance.', null=True)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                    ],
                    options={
                        'ordering': ['code'],
                        'constraints': [models.CheckConstraint(condition=models.Q(('target_date__isnull', True), ('start_date__isnull', True), ('target_date__gte', models.F('start_date')), _connector='OR'), name='project_target_after_start')],
                    },
                ),
                migrations.CreateModel(
                    name='HistoricalMembership',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('role', models.CharField(choices=[('manager', 'Project manager'), ('technician', 'Technician'), ('customer', 'Customer')], max_length=16)),
                        ('created_at', models.DateTimeField(blank=True, editable=False)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('user', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project')),
                    ],
                    options={
                        'verbose_name': 'historical membership',
                        'verbose_name_plural': 'historical memberships',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='NodeToken',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(help_text='The node or the purpose, e.g. gpu-017 or rack R12 collector.', max_length=100)),
                        ('key_id', models.CharField(editable=False, max_length=16, unique=True)),
                        ('secret_hash', models.CharField(editable=False, help_text='SHA-256 of the secret, hex.', max_length=64)),
                        ('scopes', models.JSONField(default=list, help_text='What the token may post: a list of NodeScope values.')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now, editable=False)),
                        ('expires_at', models.DateTimeField()),
                        ('last_used_at', models.DateTimeField(blank=True, null=True)),
                        ('last_used_ip', models.GenericIPAddressField(blank=True, null=True)),
                        ('revoked_at', models.DateTimeField(blank=True, null=True)),
                        ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('revoked_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='node_tokens', to='projects.project')),
                    ],
                    options={
                        'ordering': ['-created_at', '-id'],
                        'indexes': [models.Index(fields=['project', '-created_at'], name='nodetoken_project_recent')],
                        'constraints': [models.CheckConstraint(condition=models.Q(('expires_at__gt', models.F('created_at'))), name='node_token_expires_after_creation')],
                    },
                ),
                migrations.CreateModel(
                    name='Membership',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('role', models.CharField(choices=[('manager', 'Project manager'), ('technician', 'Technician'), ('customer', 'Customer')], max_length=16)),
                        ('created_at', models.DateTimeField(auto_now_add=True)),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='projects.project')),
                    ],
                    options={
                        'ordering': ['project__code', 'user__username'],
                        'constraints': [models.UniqueConstraint(fields=('user', 'project'), name='membership_user_project_unique')],
                    },
                ),
            ],
            database_operations=[TablesRenamed([
            ("delivery_project", "projects_project"),
            ("delivery_historicalproject", "projects_historicalproject"),
            ("delivery_membership", "projects_membership"),
            ("delivery_historicalmembership", "projects_historicalmembership"),
            ("delivery_nodetoken", "projects_nodetoken"),
            ])],
        ),
        content_types_moved(['project', 'historicalproject', 'membership', 'historicalmembership', 'nodetoken'], from_label="delivery", to_label="projects"),
    ]
