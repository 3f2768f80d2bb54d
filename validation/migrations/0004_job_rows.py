"""Check runs and tool uploads become job rows (core.models.Job), keeping every row.

CheckRun: total/done are renamed progress_total/progress_done (the constraint between them follows);
its statuses were already the job's. ToolUpload: uploaded_by is renamed requested_by, "parsed" becomes
"done", and the one-line `error` moves into the job's `errors` list. Both gain what a job has and they
lacked (progress step, errors, output; an upload also a log and started_at). Reversible: the reverse
maps the statuses and the error back.
"""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import core.models

JOB_STATUSES = [
    ("queued", "Queued"),
    ("running", "Running"),
    ("waiting", "Waiting for confirmation"),
    ("done", "Done"),
    ("failed", "Failed"),
    ("cancelled", "Cancelled"),
]
# Upload status before -> after. A job status an upload never had before goes back to the nearest one.
UPLOAD_STATUS_FORWARD = {"parsed": "done"}
UPLOAD_STATUS_BACKWARD = {"done": "parsed", "running": "queued", "waiting": "queued", "cancelled": "failed"}


def uploads_to_jobs(apps, schema_editor):
    ToolUpload = apps.get_model("validation", "ToolUpload")
    for old, new in UPLOAD_STATUS_FORWARD.items():
        ToolUpload.objects.filter(status=old).update(status=new)
    for upload in ToolUpload.objects.exclude(error="").only("id", "error"):
        ToolUpload.objects.filter(pk=upload.pk).update(errors=[upload.error])


def jobs_to_uploads(apps, schema_editor):
    ToolUpload = apps.get_model("validation", "ToolUpload")
    for new, old in UPLOAD_STATUS_BACKWARD.items():
        ToolUpload.objects.filter(status=new).update(status=old)
    for upload in ToolUpload.objects.exclude(errors=[]).only("id", "errors"):
        ToolUpload.objects.filter(pk=upload.pk).update(error="; ".join(upload.errors or []))


def optional_user():
    return models.ForeignKey(
        blank=True,
        null=True,
        on_delete=django.db.models.deletion.SET_NULL,
        related_name="+",
        to=settings.AUTH_USER_MODEL,
    )


def job_fields(model_name: str) -> list:
    """The job fields both models gain."""
    return [
        migrations.AddField(
            model_name=model_name,
            name="progress_step",
            field=models.CharField(blank=True, help_text="What the job is doing now.", max_length=80),
        ),
        migrations.AddField(
            model_name=model_name,
            name="errors",
            field=models.JSONField(blank=True, default=list, help_text="Why the job failed, one message each."),
        ),
        migrations.AddField(
            model_name=model_name,
            name="output",
            field=models.FileField(
                blank=True, help_text="What it produced.", max_length=300, upload_to=core.models.job_output_path
            ),
        ),
        migrations.AlterField(
            model_name=model_name,
            name="status",
            field=models.CharField(choices=JOB_STATUSES, default="queued", max_length=16),
        ),
        migrations.AlterField(
            model_name=model_name,
            name="created_at",
            field=models.DateTimeField(default=django.utils.timezone.now, help_text="When the job was asked for."),
        ),
        migrations.AlterField(
            model_name=model_name,
            name="finished_at",
            field=models.DateTimeField(blank=True, help_text="When the job last settled.", null=True),
        ),
        migrations.AlterField(model_name=model_name, name="requested_by", field=optional_user()),
    ]


class Migration(migrations.Migration):
    dependencies = [
        ("validation", "0003_target_key_fits_pair_keys"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        # --- CheckRun ---------------------------------------------------------------------------------
        migrations.RemoveConstraint(model_name="checkrun", name="checkrun_done_within_total"),
        migrations.RenameField(model_name="checkrun", old_name="total", new_name="progress_total"),
        migrations.RenameField(model_name="checkrun", old_name="done", new_name="progress_done"),
        migrations.AlterField(
            model_name="checkrun", name="progress_done", field=models.PositiveIntegerField(default=0)
        ),
        *job_fields("checkrun"),
        migrations.AddConstraint(
            model_name="checkrun",
            constraint=models.CheckConstraint(
                condition=models.Q(("progress_done__lte", models.F("progress_total"))),
                name="checkrun_done_within_total",
            ),
        ),
        # --- ToolUpload -------------------------------------------------------------------------------
        migrations.RenameField(model_name="toolupload", old_name="uploaded_by", new_name="requested_by"),
        migrations.AddField(
            model_name="toolupload", name="progress_done", field=models.PositiveIntegerField(default=0)
        ),
        migrations.AddField(
            model_name="toolupload", name="progress_total", field=models.PositiveIntegerField(default=0)
        ),
        migrations.AddField(model_name="toolupload", name="log", field=models.TextField(blank=True)),
        migrations.AddField(
            model_name="toolupload", name="started_at", field=models.DateTimeField(blank=True, null=True)
        ),
        *job_fields("toolupload"),
        migrations.RunPython(uploads_to_jobs, jobs_to_uploads),
        migrations.RemoveField(model_name="toolupload", name="error"),
    ]
