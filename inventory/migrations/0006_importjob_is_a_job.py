"""ImportJob becomes a core.models.Job: created_by is renamed requested_by, the fields a job row has are
added (progress step, log, started_at, output), updated_at goes (nothing read it), and the statuses
move onto core.choices.JobStatus: a preview waiting for confirmation is "waiting", an applied import
"done". Existing rows keep their data; the reverse maps the statuses back."""

import django.utils.timezone
from django.db import migrations, models

import core.models
from core.migration_ops import remap_statuses

# Old status -> JobStatus. The reverse maps JobStatus back; "cancelled" did not exist (an import was
# never cancelled), so it goes back as failed.
STATUSES = {"queued": "queued", "running": "running", "preview": "waiting", "applied": "done", "failed": "failed"}
BACKWARD = {new: old for old, new in STATUSES.items()} | {"cancelled": "failed"}


class Migration(migrations.Migration):

    dependencies = [
        ("inventory", "0005_optic_in_port_iff_installed"),
    ]

    operations = [
        migrations.RenameField(model_name="importjob", old_name="created_by", new_name="requested_by"),
        migrations.RemoveField(model_name="importjob", name="updated_at"),
        migrations.AddField(
            model_name="importjob",
            name="progress_step",
            field=models.CharField(blank=True, help_text="What the job is doing now.", max_length=80),
        ),
        migrations.AddField(model_name="importjob", name="log", field=models.TextField(blank=True)),
        migrations.AddField(
            model_name="importjob", name="started_at", field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name="importjob",
            name="output",
            field=models.FileField(
                blank=True, help_text="What it produced.", max_length=300, upload_to=core.models.job_output_path
            ),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="created_at",
            field=models.DateTimeField(default=django.utils.timezone.now, help_text="When the job was asked for."),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="finished_at",
            field=models.DateTimeField(blank=True, help_text="When the job last settled.", null=True),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="errors",
            field=models.JSONField(blank=True, default=list, help_text="Why the job failed, one message each."),
        ),
        migrations.AlterField(
            model_name="importjob",
            name="status",
            field=models.CharField(
                choices=[
                    ("queued", "Queued"), ("running", "Running"), ("waiting", "Waiting for confirmation"),
                    ("done", "Done"), ("failed", "Failed"), ("cancelled", "Cancelled"),
                ],
                default="queued",
                max_length=16,
            ),
        ),
        remap_statuses("inventory", "ImportJob", STATUSES, BACKWARD),
    ]
