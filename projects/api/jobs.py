"""The one status endpoint of every job row (core.models.Job): GET /api/jobs/<type>/<id>/.

Progress bars poll it (static/js/progress.js, templates/core/_progress.html), and so can a script.
A job is found only in the projects the user belongs to: an unknown type, an unknown id and another
project's job all answer 404 alike."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.choices import JobStatus
from core.jobs import STATUS_FIELDS, job_models, job_status
from projects.access import scope_to_user


class JobStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.CharField(help_text='"<app>.<model>", e.g. "validation.checkrun".')
    status = serializers.ChoiceField(choices=JobStatus.choices)
    status_label = serializers.CharField()
    step = serializers.CharField(help_text="What the job is doing now.")
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    percent = serializers.IntegerField()
    settled = serializers.BooleanField(help_text="Nothing more happens without someone acting: stop polling.")
    finished = serializers.BooleanField(help_text="The same as settled (the name the progress bar reads).")
    error_count = serializers.IntegerField()
    finished_at = serializers.DateTimeField(allow_null=True)


class JobStatusView(APIView):
    @extend_schema(responses={200: JobStatusSerializer}, operation_id="job_status")
    def get(self, request, job_type: str, pk: int):
        """Where a job stands: status, progress and, for check runs, the verdict counts so far."""
        model = job_models().get(job_type)
        if model is None:
            raise Http404("No such kind of job.")
        jobs = scope_to_user(model._default_manager.all(), request.user, model.project_path)
        job = jobs.only(*STATUS_FIELDS).filter(pk=pk).first()
        if job is None:
            raise Http404("No such job.")
        return Response(job_status(job))
