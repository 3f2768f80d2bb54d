"""FabricPlan becomes a job row (core.models.Job), keeping every row: created_by is renamed requested_by,
the fields a job has are added (log, started_at, output), and the plan's own statuses map onto the job
statuses (preview -> waiting, applying -> running, applied -> done; queued and failed stay)."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import core.models
from core.migration_ops import remap_statuses

PLAN_TO_JOB = {"preview": "waiting", "applying": "running", "applied": "done"}
# Back: a job status the plan never had (cancelled) was a plan that did not apply.
JOB_TO_PLAN = {"waiting": "preview", "running": "applying", "done": "applied", "cancelled": "failed"}
JOB_STATUSES = [
    ("queued", "Queued"), ("running", "Running"), ("waiting", "Waiting for confirmation"), ("done", "Done"),
    ("failed", "Failed"), ("cancelled", "Cancelled"),
]


class Migration(migrations.Migration):

    dependencies = [
        ('cabling', '0003_cable_end_optic_count'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RenameField(model_name='fabricplan', old_name='created_by', new_name='requested_by'),
        migrations.AlterField(
            model_name='fabricplan',
            name='requested_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='fabricplan',
            name='log',
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name='fabricplan',
            name='output',
            field=models.FileField(blank=True, help_text='What it produced.', max_length=300, upload_to=core.models.job_output_path),
        ),
        migrations.AddField(
            model_name='fabricplan',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name='fabricplan',
            name='created_at',
            field=models.DateTimeField(default=django.utils.timezone.now, help_text='When the job was asked for.'),
        ),
        migrations.AlterField(
            model_name='fabricplan',
            name='errors',
            field=models.JSONField(blank=True, default=list, help_text='Why the job failed, one message each.'),
        ),
        migrations.AlterField(
            model_name='fabricplan',
            name='finished_at',
            field=models.DateTimeField(blank=True, help_text='When the job last settled.', null=True),
        ),
        migrations.AlterField(
            model_name='fabricplan',
            name='progress_step',
            field=models.CharField(blank=True, help_text='What the job is doing now.', max_length=80),
        ),
        migrations.AlterField(
            model_name='fabricplan',
            name='status',
            field=models.CharField(choices=JOB_STATUSES, default='queued', max_length=16),
        ),
        remap_statuses("cabling", "FabricPlan", PLAN_TO_JOB, JOB_TO_PLAN),
    ]
