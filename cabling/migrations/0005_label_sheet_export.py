"""The label sheet export: a job row whose task renders a label sheet of any size into its output."""

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

import core.models


class Migration(migrations.Migration):

    dependencies = [
        ('cabling', '0004_fabric_plan_is_a_job'),
        ('delivery', '0001_initial'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='LabelSheetExport',
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
                ('scope', models.CharField(choices=[('all', 'The whole fabric'), ('rack', 'One rack'), ('network', 'One network')], default='all', max_length=16)),
                ('rack', models.CharField(blank=True, help_text='The rack whose cable ends are printed.', max_length=50)),
                ('network', models.CharField(blank=True, choices=[('compute', 'Compute (training fabric)'), ('storage', 'Storage'), ('inband', 'In-band management'), ('oob', 'Out-of-band management')], help_text='The network whose cables are printed.', max_length=16)),
                ('stock', models.CharField(choices=[('L7651', 'Avery L7651 (A4, 65 per sheet)'), ('thermal-2x1', 'Thermal roll, 2 x 1 in')], default='L7651', max_length=16)),
                ('project', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='label_exports', to='delivery.project')),
                ('requested_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at', '-id'],
                'indexes': [models.Index(fields=['project', '-created_at'], name='label_export_project_recent')],
            },
        ),
    ]
