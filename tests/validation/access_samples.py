"""Sample objects of the validation app for the access matrix (every /p/<code>/ page and API endpoint walked
as anonymous, outsider, customer, technician and manager).

`samples(project)` makes one of each thing the validation pages and endpoints address, in `project`, and
answers, for every url name of the `validation:` and `uploads:` namespaces and of the validation API
(keyed "api:<url name>"), the URL kwargs besides the project's `code`. Rows are written directly (a run
that is already finished, a queued upload, an open soak window): nothing executes, so it stays fast.
"""

from __future__ import annotations

from datetime import timedelta

from django.core.files.base import ContentFile
from django.utils import timezone

from core.choices import JobStatus
from inventory.choices import DeviceRole
from inventory.services import device_create
from tests.factories import gpu_server_model
from validation.choices import CheckKind, ResultStatus, RunnerKind, Verdict
from validation.models import CheckResult, CheckRun, SoakWindow, ToolUpload


def _objects(project):
    node = device_create(
        project=project,
        hardware_model=gpu_server_model(nics=1, part_number="TEST-SAMPLE-1NIC", bmc=False, model_name="1-NIC"),
        name="sample-gpu-001",
        role=DeviceRole.GPU_NODE,
    )
    port = node.ports.filter(parent__isnull=True).order_by("id").first()
    run = CheckRun.objects.create(
        project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SIMULATED, status=JobStatus.DONE,
        progress_total=1, progress_done=1, finished_at=timezone.now(),
    )
    result = CheckResult.objects.create(
        run=run, target_key=f"{node.name}:{port.name}", host=node.name, device=node, port=port,
        status=ResultStatus.DONE, verdict=Verdict.FAIL, raw_output="mlxlink output\n",
        reasons=[{"level": "fail", "text": "sample"}],
    )
    upload = ToolUpload(project=project, original_name="sample.txt", size_bytes=6, host=node.name, device=node)
    upload.file.save("sample.txt", ContentFile(b"sample"), save=False)
    upload.save()
    soak_run = CheckRun.objects.create(
        project=project, kind=CheckKind.SOAK, status=JobStatus.RUNNING, progress_total=0,
        started_at=timezone.now(),
    )
    window = SoakWindow.objects.create(
        project=project, run=soak_run, started_at=timezone.now(), duration=timedelta(hours=1),
        interval=timedelta(minutes=15),
    )
    return run, result, port, upload, window


def _matrix_run(project) -> CheckRun:
    """A finished bandwidth-matrix run (only such a run has a matrix image), with no pairs."""
    return CheckRun.objects.create(
        project=project, kind=CheckKind.BANDWIDTH_MATRIX, runner=RunnerKind.SIMULATED, status=JobStatus.DONE,
        progress_total=0, finished_at=timezone.now(),
    )


def samples(project) -> dict[str, dict]:
    run, result, port, upload, window = _objects(project)
    matrix_run = _matrix_run(project)
    return {
        # /p/<code>/checks/
        "validation:run-list": {},
        "validation:run-detail": {"pk": run.pk},
        "validation:run-cancel": {"pk": run.pk},
        "validation:run-rerun-failed": {"pk": run.pk},
        "validation:run-log": {"pk": run.pk},
        "validation:run-matrix-image": {"pk": matrix_run.pk},
        "validation:run-matrix-nodes": {"pk": matrix_run.pk},
        "validation:result-detail": {"pk": result.pk},
        "validation:result-raw": {"pk": result.pk},
        "validation:link-history": {"what": "port", "pk": port.pk},
        "validation:profile": {},
        # /p/<code>/uploads/
        "uploads:list": {},
        "uploads:create": {},
        "uploads:detail": {"pk": upload.pk},
        "uploads:file": {"pk": upload.pk},
        "uploads:soak-list": {},
        "uploads:soak-start": {},
        "uploads:soak-detail": {"pk": window.pk},
        "uploads:soak-stop": {"pk": window.pk},
        # /api/ (router basenames check-run, check-result, tool-upload)
        "api:check-run-list": {},
        "api:check-run-detail": {"pk": run.pk},
        "api:check-run-cancel": {"pk": run.pk},
        "api:check-run-rerun-failed": {"pk": run.pk},
        "api:check-result-list": {},
        "api:check-result-detail": {"pk": result.pk},
        "api:tool-upload-list": {},
        "api:tool-upload-detail": {"pk": upload.pk},
    }
