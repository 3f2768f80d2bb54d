import core.models
import delivery.models.reports
import django.core.validators
import django.db.models.deletion
import django.utils.timezone
import simple_history.models
import uuid
from django.conf import settings
from django.db import migrations, models

from core.migration_ops import TablesAdoptedOrCreated, content_types_moved
from delivery.stages.data import DEFAULT_STAGES, DEFAULT_TEMPLATE_DESCRIPTION, DEFAULT_TEMPLATE_NAME



# The app that held the workflow's models before they came here (its label, the prefix of its tables).
LEGACY_LABEL = "roof"
LEGACY_PREFIX = LEGACY_LABEL + "."


def renamed(value):
    """A stored reference with the legacy label ("<legacy>.acceptance_signed", "<legacy>.checklistitem:7") under
    this app's label; lists and dicts walked."""
    if isinstance(value, str):
        return "delivery." + value[len(LEGACY_PREFIX):] if value.startswith(LEGACY_PREFIX) else value
    if isinstance(value, list):
        return [renamed(item) for item in value]
    if isinstance(value, dict):
        return {key: renamed(item) for key, item in value.items()}
    return value


def references_renamed(apps, schema_editor):
    """Gate keys, waived refs, stage jobs and gate items stored under the legacy label (updates: no history rows),
    the default template loaded where missing, and the legacy app's migration records dropped."""
    alias = schema_editor.connection.alias
    stage_model = apps.get_model("delivery", "Stage")
    for stage in stage_model.objects.using(alias).only("gate_key", "jobs", "gate_missing"):
        changed = {"gate_key": renamed(stage.gate_key), "jobs": renamed(stage.jobs),
                   "gate_missing": renamed(stage.gate_missing)}
        if changed != {"gate_key": stage.gate_key, "jobs": stage.jobs, "gate_missing": stage.gate_missing}:
            stage_model.objects.using(alias).filter(pk=stage.pk).update(**changed)
    for model_name, field in (("StageTemplate", "stages"), ("Waiver", "items")):
        model = apps.get_model("delivery", model_name)
        for row in model.objects.using(alias).only(field):
            if renamed(getattr(row, field)) != getattr(row, field):
                model.objects.using(alias).filter(pk=row.pk).update(**{field: renamed(getattr(row, field))})
    apps.get_model("delivery", "StageTemplate").objects.using(alias).get_or_create(
        name=DEFAULT_TEMPLATE_NAME, defaults={"description": DEFAULT_TEMPLATE_DESCRIPTION, "stages": DEFAULT_STAGES},
    )
    schema_editor.execute("DELETE FROM django_migrations WHERE app = %s", [LEGACY_LABEL])


class Migration(migrations.Migration):
    """The delivery workflow's models (stages, checklists, waivers, the punch list, report versions, NetBox pushes,
    notification preferences) come to this app from the app that held them before: on a database that app
    migrated, its tables are renamed with their rows; on a new one they are created."""

    dependencies = [
        ("contenttypes", "0002_remove_content_type_name"),
        ("delivery", "0004_projects_moved_out"),
        ("projects", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='StageTemplate',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('name', models.CharField(max_length=100, unique=True)),
                        ('description', models.TextField(blank=True)),
                        ('stages', models.JSONField(default=list, help_text='In order: [{"key": "racking", "title": "Racking", "gate": "inventory.racking", "depends_on": ["site_readiness"], "work": "", "checklist": []}, ...]')),
                    ],
                    options={
                        'ordering': ['name'],
                    },
                ),
                migrations.CreateModel(
                    name='GateRecompute',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('pending', models.BooleanField(default=False)),
                        ('requested_at', models.DateTimeField(blank=True, null=True)),
                        ('computed_at', models.DateTimeField(blank=True, null=True)),
                        ('project', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='gate_recompute', to='projects.project')),
                    ],
                ),
                migrations.CreateModel(
                    name='HistoricalPunchItem',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('title', models.CharField(max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('severity', models.CharField(choices=[('critical', 'Critical'), ('major', 'Major'), ('minor', 'Minor')], default='major', max_length=10)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('in_progress', 'In progress'), ('fixed', 'Fixed (awaiting a passing re-check)'), ('verified', 'Verified'), ('wont_fix', "Won't fix")], default='open', max_length=12)),
                        ('due_date', models.DateField(blank=True, null=True)),
                        ('customer_visible', models.BooleanField(default=False, help_text="Shown to the project's customers; internal otherwise.")),
                        ('object_kind', models.CharField(blank=True, choices=[('device', 'Device'), ('port', 'Port'), ('cable', 'Cable'), ('optic', 'Optic'), ('node_pair', 'Node pair'), ('check_result', 'Check result'), ('miswire', 'Miswire (topology comparison)')], max_length=14)),
                        ('object_id', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('object_label', models.CharField(blank=True, max_length=255)),
                        ('source', models.CharField(choices=[('manual', 'Opened by hand'), ('check_result', 'A failed check result'), ('topology', 'A topology comparison')], default='manual', max_length=14)),
                        ('fingerprint', models.CharField(blank=True, help_text='The fault an auto-opened item tracks.', max_length=300)),
                        ('opened_at', models.DateTimeField()),
                        ('fixed_at', models.DateTimeField(blank=True, null=True)),
                        ('resolution_note', models.TextField(blank=True)),
                        ('wont_fix_reason', models.TextField(blank=True)),
                        ('verified_at', models.DateTimeField(blank=True, null=True)),
                        ('evidence_at', models.DateTimeField(blank=True, help_text='When the latest evidence applied was taken.', null=True)),
                        ('evidence_note', models.CharField(blank=True, help_text='What the latest evidence said.', max_length=300)),
                        ('passing_since', models.DateTimeField(blank=True, help_text='An item not yet fixed whose object passes again: since when.', null=True)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('assignee', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('fixed_by', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('opened_by', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project')),
                        ('verified_by', models.ForeignKey(blank=True, db_constraint=False, help_text='Blank on a verified item: verified by the evidence (the sync).', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical punch item',
                        'verbose_name_plural': 'historical punch items',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='HistoricalStage',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('key', models.CharField(max_length=40)),
                        ('title', models.CharField(max_length=100)),
                        ('order', models.PositiveSmallIntegerField()),
                        ('depends_on', models.JSONField(blank=True, default=list, help_text='Keys of the stages this one waits for.')),
                        ('gate_key', models.CharField(help_text='A registered gate (projects.gates) or "checklist".', max_length=60)),
                        ('work', models.CharField(blank=True, choices=[('topology', 'A topology comparison (topology check run)'), ('node_inventory', 'A node inventory check on every node'), ('link_health', 'A link-health run on every node'), ('benchmarks', 'The bandwidth matrix and NCCL'), ('soak', 'A soak window')], max_length=20)),
                        ('status', models.CharField(choices=[('not_started', 'Not started'), ('in_progress', 'In progress'), ('blocked', 'Blocked'), ('done', 'Done'), ('skipped', 'Skipped')], default='not_started', max_length=16)),
                        ('status_reason', models.CharField(blank=True, help_text='Why it is blocked or was reopened.', max_length=300)),
                        ('skipped_reason', models.CharField(blank=True, max_length=300)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('completed_at', models.DateTimeField(blank=True, null=True)),
                        ('jobs', models.JSONField(blank=True, default=list, help_text='Work started by the stage: [["validation.checkrun", 12]].')),
                        ('gate_passed', models.BooleanField(blank=True, help_text='Blank: never computed.', null=True)),
                        ('gate_missing_count', models.PositiveIntegerField(default=0)),
                        ('gate_missing', models.JSONField(blank=True, default=list, help_text='Up to ten items: label, reason, ref, url.')),
                        ('gate_summary', models.CharField(blank=True, max_length=300)),
                        ('gate_computed_at', models.DateTimeField(blank=True, null=True)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('completed_by', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='projects.project')),
                        ('started_by', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical stage',
                        'verbose_name_plural': 'historical stages',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='HistoricalStageTemplate',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('name', models.CharField(db_index=True, max_length=100)),
                        ('description', models.TextField(blank=True)),
                        ('stages', models.JSONField(default=list, help_text='In order: [{"key": "racking", "title": "Racking", "gate": "inventory.racking", "depends_on": ["site_readiness"], "work": "", "checklist": []}, ...]')),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'verbose_name': 'historical stage template',
                        'verbose_name_plural': 'historical stage templates',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='NetBoxPush',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('waiting', 'Waiting for confirmation'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=16)),
                        ('progress_done', models.PositiveIntegerField(default=0)),
                        ('progress_total', models.PositiveIntegerField(default=0)),
                        ('progress_step', models.CharField(blank=True, help_text='What the job is doing now.', max_length=80)),
                        ('log', models.TextField(blank=True)),
                        ('errors', models.JSONField(blank=True, default=list, help_text='Why the job failed, one message each.')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now, help_text='When the job was asked for.')),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, help_text='When the job last settled.', null=True)),
                        ('output', models.FileField(blank=True, help_text='What it produced.', max_length=300, upload_to=core.models.job_output_path)),
                        ('netbox_url', models.CharField(max_length=300, verbose_name='NetBox URL')),
                        ('apply', models.BooleanField(default=False, help_text='Apply the changes; otherwise a dry run that writes nothing.')),
                        ('token_sealed', models.TextField(blank=True, editable=False, help_text='The API token, encrypted, while the job needs it; blank after.')),
                        ('netbox_version', models.CharField(blank=True, help_text='The API version NetBox reported.', max_length=20)),
                        ('summary', models.JSONField(blank=True, default=dict, help_text='Per kind of object: counts to create, update, leave unchanged, and examples.')),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='netbox_pushes', to='projects.project')),
                        ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'ordering': ['-created_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='NotificationPreference',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('off', models.JSONField(blank=True, default=list, help_text='Kinds not sent: ["report_ready", ...].')),
                        ('project', models.ForeignKey(blank=True, help_text='Blank: for every project.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='projects.project')),
                        ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='notification_preferences', to=settings.AUTH_USER_MODEL)),
                    ],
                ),
                migrations.CreateModel(
                    name='PunchItem',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('title', models.CharField(max_length=200)),
                        ('description', models.TextField(blank=True)),
                        ('severity', models.CharField(choices=[('critical', 'Critical'), ('major', 'Major'), ('minor', 'Minor')], default='major', max_length=10)),
                        ('status', models.CharField(choices=[('open', 'Open'), ('in_progress', 'In progress'), ('fixed', 'Fixed (awaiting a passing re-check)'), ('verified', 'Verified'), ('wont_fix', "Won't fix")], default='open', max_length=12)),
                        ('due_date', models.DateField(blank=True, null=True)),
                        ('customer_visible', models.BooleanField(default=False, help_text="Shown to the project's customers; internal otherwise.")),
                        ('object_kind', models.CharField(blank=True, choices=[('device', 'Device'), ('port', 'Port'), ('cable', 'Cable'), ('optic', 'Optic'), ('node_pair', 'Node pair'), ('check_result', 'Check result'), ('miswire', 'Miswire (topology comparison)')], max_length=14)),
                        ('object_id', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('object_label', models.CharField(blank=True, max_length=255)),
                        ('source', models.CharField(choices=[('manual', 'Opened by hand'), ('check_result', 'A failed check result'), ('topology', 'A topology comparison')], default='manual', max_length=14)),
                        ('fingerprint', models.CharField(blank=True, help_text='The fault an auto-opened item tracks.', max_length=300)),
                        ('opened_at', models.DateTimeField()),
                        ('fixed_at', models.DateTimeField(blank=True, null=True)),
                        ('resolution_note', models.TextField(blank=True)),
                        ('wont_fix_reason', models.TextField(blank=True)),
                        ('verified_at', models.DateTimeField(blank=True, null=True)),
                        ('evidence_at', models.DateTimeField(blank=True, help_text='When the latest evidence applied was taken.', null=True)),
                        ('evidence_note', models.CharField(blank=True, help_text='What the latest evidence said.', max_length=300)),
                        ('passing_since', models.DateTimeField(blank=True, help_text='An item not yet fixed whose object passes again: since when.', null=True)),
                        ('assignee', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('fixed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('opened_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='punch_items', to='projects.project')),
                        ('verified_by', models.ForeignKey(blank=True, help_text='Blank on a verified item: verified by the evidence (the sync).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'ordering': ['project', '-opened_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='PunchSync',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('results_through', models.DateTimeField(blank=True, null=True)),
                        ('synced_at', models.DateTimeField(blank=True, null=True)),
                        ('project', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='punch_sync', to='projects.project')),
                    ],
                ),
                migrations.CreateModel(
                    name='ReportVersion',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('waiting', 'Waiting for confirmation'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=16)),
                        ('progress_done', models.PositiveIntegerField(default=0)),
                        ('progress_total', models.PositiveIntegerField(default=0)),
                        ('progress_step', models.CharField(blank=True, help_text='What the job is doing now.', max_length=80)),
                        ('log', models.TextField(blank=True)),
                        ('errors', models.JSONField(blank=True, default=list, help_text='Why the job failed, one message each.')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now, help_text='When the job was asked for.')),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, help_text='When the job last settled.', null=True)),
                        ('output', models.FileField(blank=True, help_text='What it produced.', max_length=300, upload_to=core.models.job_output_path)),
                        ('number', models.PositiveIntegerField(help_text='1, 2, 3... per project.', validators=[django.core.validators.MinValueValidator(1)])),
                        ('report_id', models.UUIDField(default=uuid.uuid4, editable=False, help_text='Printed on every page: which report a sheet of paper belongs to.', unique=True)),
                        ('generated_at', models.DateTimeField(blank=True, help_text='When the snapshot was taken.', null=True)),
                        ('snapshot_file', models.FileField(blank=True, help_text='The frozen snapshot (gzip JSON lines) the files are rendered from.', max_length=300, upload_to=delivery.models.reports.report_file_path)),
                        ('snapshot_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('snapshot_size', models.PositiveBigIntegerField(blank=True, help_text='In bytes.', null=True)),
                        ('figures', models.JSONField(blank=True, default=dict, help_text='What the list shows: {"pass", "warn", "fail", "error", "open_punch_items", "verdict", ...}.')),
                        ('pdf_file', models.FileField(blank=True, help_text='The full PDF.', max_length=300, upload_to=delivery.models.reports.report_file_path)),
                        ('pdf_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('pdf_size', models.PositiveBigIntegerField(blank=True, help_text='In bytes.', null=True)),
                        ('summary_pdf_file', models.FileField(blank=True, help_text="The summary PDF (each table's first rows).", max_length=300, upload_to=delivery.models.reports.report_file_path)),
                        ('summary_pdf_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('summary_pdf_size', models.PositiveBigIntegerField(blank=True, help_text='In bytes.', null=True)),
                        ('xlsx_file', models.FileField(blank=True, help_text='The Excel workbook.', max_length=300, upload_to=delivery.models.reports.report_file_path)),
                        ('xlsx_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('xlsx_size', models.PositiveBigIntegerField(blank=True, help_text='In bytes.', null=True)),
                        ('signed_pdf_file', models.FileField(blank=True, help_text='The full PDF with the signature filled in.', max_length=300, upload_to=delivery.models.reports.report_file_path)),
                        ('signed_pdf_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('signed_pdf_size', models.PositiveBigIntegerField(blank=True, help_text='In bytes.', null=True)),
                        ('signed_xlsx_file', models.FileField(blank=True, help_text='The Excel workbook with the signature filled in.', max_length=300, upload_to=delivery.models.reports.report_file_path)),
                        ('signed_xlsx_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('signed_xlsx_size', models.PositiveBigIntegerField(blank=True, help_text='In bytes.', null=True)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='report_versions', to='projects.project')),
                        ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'ordering': ['project', '-number'],
                    },
                ),
                migrations.CreateModel(
                    name='ReportSignature',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('status', models.CharField(choices=[('queued', 'Queued'), ('running', 'Running'), ('waiting', 'Waiting for confirmation'), ('done', 'Done'), ('failed', 'Failed'), ('cancelled', 'Cancelled')], default='queued', max_length=16)),
                        ('progress_done', models.PositiveIntegerField(default=0)),
                        ('progress_total', models.PositiveIntegerField(default=0)),
                        ('progress_step', models.CharField(blank=True, help_text='What the job is doing now.', max_length=80)),
                        ('log', models.TextField(blank=True)),
                        ('errors', models.JSONField(blank=True, default=list, help_text='Why the job failed, one message each.')),
                        ('created_at', models.DateTimeField(default=django.utils.timezone.now, help_text='When the job was asked for.')),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('finished_at', models.DateTimeField(blank=True, help_text='When the job last settled.', null=True)),
                        ('output', models.FileField(blank=True, help_text='What it produced.', max_length=300, upload_to=core.models.job_output_path)),
                        ('name', models.CharField(help_text="The signer's name as printed on the report.", max_length=200)),
                        ('title', models.CharField(help_text="The signer's position at the customer.", max_length=200)),
                        ('statement', models.TextField(help_text='What the signer declared.')),
                        ('signed_at', models.DateTimeField()),
                        ('snapshot_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('pdf_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('summary_pdf_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('xlsx_sha256', models.CharField(blank=True, help_text='SHA-256 of the file, hex.', max_length=64)),
                        ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('signed_by', models.ForeignKey(help_text='The account that signed.', on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('version', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='signature', to='delivery.reportversion')),
                    ],
                    options={
                        'ordering': ['-signed_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='Stage',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.CharField(max_length=40)),
                        ('title', models.CharField(max_length=100)),
                        ('order', models.PositiveSmallIntegerField()),
                        ('depends_on', models.JSONField(blank=True, default=list, help_text='Keys of the stages this one waits for.')),
                        ('gate_key', models.CharField(help_text='A registered gate (projects.gates) or "checklist".', max_length=60)),
                        ('work', models.CharField(blank=True, choices=[('topology', 'A topology comparison (topology check run)'), ('node_inventory', 'A node inventory check on every node'), ('link_health', 'A link-health run on every node'), ('benchmarks', 'The bandwidth matrix and NCCL'), ('soak', 'A soak window')], max_length=20)),
                        ('status', models.CharField(choices=[('not_started', 'Not started'), ('in_progress', 'In progress'), ('blocked', 'Blocked'), ('done', 'Done'), ('skipped', 'Skipped')], default='not_started', max_length=16)),
                        ('status_reason', models.CharField(blank=True, help_text='Why it is blocked or was reopened.', max_length=300)),
                        ('skipped_reason', models.CharField(blank=True, max_length=300)),
                        ('started_at', models.DateTimeField(blank=True, null=True)),
                        ('completed_at', models.DateTimeField(blank=True, null=True)),
                        ('jobs', models.JSONField(blank=True, default=list, help_text='Work started by the stage: [["validation.checkrun", 12]].')),
                        ('gate_passed', models.BooleanField(blank=True, help_text='Blank: never computed.', null=True)),
                        ('gate_missing_count', models.PositiveIntegerField(default=0)),
                        ('gate_missing', models.JSONField(blank=True, default=list, help_text='Up to ten items: label, reason, ref, url.')),
                        ('gate_summary', models.CharField(blank=True, max_length=300)),
                        ('gate_computed_at', models.DateTimeField(blank=True, null=True)),
                        ('completed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='stages', to='projects.project')),
                        ('started_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                    ],
                    options={
                        'ordering': ['project', 'order', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='HistoricalWaiver',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('items', models.JSONField(blank=True, default=list, help_text='Refs of the items it covers: ["cabling.cable:42"].')),
                        ('all_items', models.BooleanField(default=False, help_text='Covers every item the gate missed when it was recorded (up to missing_count).')),
                        ('missing_count', models.PositiveIntegerField(default=0, help_text='How many items the gate missed then.')),
                        ('reason', models.TextField()),
                        ('recorded_at', models.DateTimeField()),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('recorded_by', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('stage', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='delivery.stage')),
                    ],
                    options={
                        'verbose_name': 'historical waiver',
                        'verbose_name_plural': 'historical waivers',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='HistoricalChecklistItem',
                    fields=[
                        ('id', models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name='ID')),
                        ('text', models.CharField(max_length=200)),
                        ('order', models.PositiveSmallIntegerField(default=0)),
                        ('confirmed_at', models.DateTimeField(blank=True, null=True)),
                        ('history_id', models.AutoField(primary_key=True, serialize=False)),
                        ('history_date', models.DateTimeField(db_index=True)),
                        ('history_change_reason', models.CharField(max_length=100, null=True)),
                        ('history_type', models.CharField(choices=[('+', 'Created'), ('~', 'Changed'), ('-', 'Deleted')], max_length=1)),
                        ('confirmed_by', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('history_user', models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('stage', models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='delivery.stage')),
                    ],
                    options={
                        'verbose_name': 'historical checklist item',
                        'verbose_name_plural': 'historical checklist items',
                        'ordering': ('-history_date', '-history_id'),
                        'get_latest_by': ('history_date', 'history_id'),
                    },
                    bases=(simple_history.models.HistoricalChanges, models.Model),
                ),
                migrations.CreateModel(
                    name='ChecklistItem',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('text', models.CharField(max_length=200)),
                        ('order', models.PositiveSmallIntegerField(default=0)),
                        ('confirmed_at', models.DateTimeField(blank=True, null=True)),
                        ('confirmed_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('stage', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='checklist', to='delivery.stage')),
                    ],
                    options={
                        'ordering': ['stage', 'order', 'id'],
                    },
                ),
                migrations.CreateModel(
                    name='Waiver',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('items', models.JSONField(blank=True, default=list, help_text='Refs of the items it covers: ["cabling.cable:42"].')),
                        ('all_items', models.BooleanField(default=False, help_text='Covers every item the gate missed when it was recorded (up to missing_count).')),
                        ('missing_count', models.PositiveIntegerField(default=0, help_text='How many items the gate missed then.')),
                        ('reason', models.TextField()),
                        ('recorded_at', models.DateTimeField()),
                        ('recorded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                        ('stage', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='waivers', to='delivery.stage')),
                    ],
                    options={
                        'ordering': ['stage', 'recorded_at', 'id'],
                    },
                ),
                migrations.AddIndex(
                    model_name='netboxpush',
                    index=models.Index(fields=['project', '-created_at'], name='netbox_push_project_recent'),
                ),
                migrations.AddConstraint(
                    model_name='notificationpreference',
                    constraint=models.UniqueConstraint(fields=('user', 'project'), name='notification_pref_unique_per_project'),
                ),
                migrations.AddConstraint(
                    model_name='notificationpreference',
                    constraint=models.UniqueConstraint(condition=models.Q(('project', None)), fields=('user',), name='notification_pref_unique_global'),
                ),
                migrations.AddIndex(
                    model_name='punchitem',
                    index=models.Index(fields=['project', 'status', 'severity'], name='punch_project_status_idx'),
                ),
                migrations.AddConstraint(
                    model_name='punchitem',
                    constraint=models.UniqueConstraint(condition=models.Q(('fingerprint', ''), _negated=True), fields=('project', 'fingerprint'), name='punch_fingerprint_unique_in_project'),
                ),
                migrations.AddConstraint(
                    model_name='reportversion',
                    constraint=models.UniqueConstraint(fields=('project', 'number'), name='report_version_number_unique_in_project'),
                ),
                migrations.AddConstraint(
                    model_name='stage',
                    constraint=models.UniqueConstraint(fields=('project', 'key'), name='stage_key_unique_in_project'),
                ),
            ],
        ),
        # After the state above, so that it sees the models: renames the legacy tables or creates new ones.
        TablesAdoptedOrCreated({
            "StageTemplate": "roof_stagetemplate",
            "GateRecompute": "roof_gaterecompute",
            "HistoricalPunchItem": "roof_historicalpunchitem",
            "HistoricalStage": "roof_historicalstage",
            "HistoricalStageTemplate": "roof_historicalstagetemplate",
            "NetBoxPush": "roof_netboxpush",
            "NotificationPreference": "roof_notificationpreference",
            "PunchItem": "roof_punchitem",
            "PunchSync": "roof_punchsync",
            "ReportVersion": "roof_reportversion",
            "ReportSignature": "roof_reportsignature",
            "Stage": "roof_stage",
            "HistoricalWaiver": "roof_historicalwaiver",
            "HistoricalChecklistItem": "roof_historicalchecklistitem",
            "ChecklistItem": "roof_checklistitem",
            "Waiver": "roof_waiver",
        }),
        content_types_moved(['stagetemplate', 'gaterecompute', 'historicalpunchitem', 'historicalstage', 'historicalstagetemplate', 'netboxpush', 'notificationpreference', 'punchitem', 'punchsync', 'reportversion', 'reportsignature', 'stage', 'historicalwaiver', 'historicalchecklistitem', 'checklistitem', 'waiver'], from_label=LEGACY_LABEL, to_label="delivery"),
        migrations.RunPython(references_renamed, migrations.RunPython.noop),
    ]
