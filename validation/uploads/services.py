"""Writes of tool-output uploads: accepting a file (page or node post) and turning it into check results.

`tool_upload_create` keeps the file and queues it; the thin task calls `tool_upload_process`, which reads
the text, detects the tool, matches every result to the upload's device and its ports (mlx5_3 -> rail 3 and
mlx5_8 -> the first storage port, as the check runs number them; eth3, stor0 or a switch's swp16 by name:
uploads/filing.py), judges it with the project's acceptance profile and files it as a
CheckResult of one run whose runner is "upload". All of that happens in one transaction: a file that
cannot be read, or whose results cannot be filed, leaves no results behind, only the upload marked failed
with the line that stopped it.
"""

from __future__ import annotations

import logging
import os

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from core.choices import JobStatus
from core.jobs import enqueue_on_commit
from core.models import log_line
from inventory.models import Device
from projects.access import Capability, can
from projects.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, RunnerKind, UploadSource, Verdict
from ..kinds.link_health import previous_link_counters
from ..models import CheckResult, CheckRun, ToolUpload
from ..parsers import detect_tool, parse
from ..parsers.base import ParseError
from ..services import acceptance_profile_for, check_run_summary_store
from . import roce
from .filing import Filed, Place, PortFinder, UploadRejected, port_finder
from .judge import evaluate_port_state, split_text

logger = logging.getLogger(__name__)

PARSE_TASK = "validation.tasks.tool_upload_parse"

# The tools whose results concern a node, a switch or one of their ports (the RoCE tools: uploads/roce.py).
# The others (topology dumps, ibdiagnet, lldp, ethtool -m, nvidia-smi topo) describe the fabric or a module
# and are read elsewhere.
UPLOAD_TOOLS = ("mlxlink", "perftest", "nccl", "ibstat", "ibstatus", "ethtool_stats", "mlnx_qos", "nvue_qos")
TOOL_CHECK_KINDS = {
    "mlxlink": CheckKind.LINK_HEALTH,
    "nccl": CheckKind.NCCL,
    "ibstat": CheckKind.PORT_STATE,
    "ibstatus": CheckKind.PORT_STATE,
    "ethtool_stats": CheckKind.LINK_HEALTH,  # a port's NIC counters: what link health reads beside mlxlink
    "mlnx_qos": CheckKind.LOSSLESS,
    "nvue_qos": CheckKind.LOSSLESS,  # a switch's side (the upload's host is the switch)
    # perftest: GPU RDMA or CPU path, by whether the buffers were in GPU memory (see _perftest_results)
}


# ---------------------------------------------------------------------------------------------------
# Accepting a file


def max_upload_bytes() -> int:
    return int(getattr(settings, "UPLOAD_MAX_BYTES", 20 * 1024 * 1024))


def device_for_host(*, project: Project, host: str) -> Device:
    """The project's device a host name means: exact, then ignoring case, then without the domain
    (gpu-017.cluster.local is gpu-017). ValidationError naming the host when none matches."""
    host = (host or "").strip()
    if not host:
        raise ValidationError({"host": "Give the host name of the node the output was captured on."})
    devices = Device.objects.filter(project=project)
    short = host.split(".", 1)[0]
    for lookup in (Q(name=host), Q(name__iexact=host), Q(name__iexact=short)):
        device = devices.filter(lookup).order_by("name").first()
        if device is not None:
            return device
    raise ValidationError({"host": f"No device named {host!r} in project {project.code}."})


def _clean_tool(tool: str | None) -> str:
    tool = (tool or "").strip().lower()
    if tool in ("", "auto"):
        return ""
    if tool not in UPLOAD_TOOLS:
        raise ValidationError({"tool": f"{tool!r} is not a tool whose output can be uploaded: use auto or "
                                       f"one of {', '.join(UPLOAD_TOOLS)}."})
    return tool


def _file_name(filename: str | None, host: str, tool: str) -> str:
    name = os.path.basename((filename or "").replace("\\", "/")).strip()
    return name or f"{host}-{tool or 'output'}.txt"


@transaction.atomic
def tool_upload_create(
    *,
    project: Project,
    user,
    host: str,
    data: bytes,
    filename: str | None = None,
    tool: str | None = None,
    source: str = UploadSource.PAGE,
) -> ToolUpload:
    """Keep the file and queue it for parsing. Refuses (ValidationError naming the field) an empty or
    oversized file, an unknown tool or a host that is not a device of the project."""
    if not can(user, Capability.RUN_CHECKS, project):
        raise PermissionDenied("Your role in this project does not allow uploading tool outputs.")
    tool = _clean_tool(tool)
    if not data:
        raise ValidationError({"file": "The file is empty."})
    limit = max_upload_bytes()
    if len(data) > limit:
        raise ValidationError({"file": f"The file is {len(data):,} bytes; the limit is {limit:,} bytes."})
    device = device_for_host(project=project, host=host)
    name = _file_name(filename, host, tool)
    upload = ToolUpload(
        project=project,
        original_name=name[:255],
        size_bytes=len(data),
        host=host.strip(),
        device=device,
        tool_requested=tool,
        source=source,
        requested_by=user if user.is_authenticated else None,  # a node token is nobody: its upload names its host
    )
    upload.file.save(name, ContentFile(data), save=False)
    upload.full_clean()
    upload.save()
    enqueue_on_commit(PARSE_TASK, upload.pk)
    return upload


# ---------------------------------------------------------------------------------------------------
# Turning the file into results


def tool_upload_process(*, upload_id: int) -> ToolUpload | None:
    """Parse a queued upload and file its results, or mark it failed with the line. Safe to run twice:
    only the worker that moves it from queued to running processes it (one conditional UPDATE, which a
    second worker waits on and then finds nothing to move)."""
    try:
        with transaction.atomic():
            upload = ToolUpload.objects.select_related("project", "device", "requested_by").filter(pk=upload_id).first()
            if upload is None or not upload.start(step="parsing"):
                return ToolUpload.objects.filter(pk=upload_id).first()
            _file_results(upload)
            return upload
    except UploadRejected as exc:
        return _mark_failed(upload_id, exc.line, exc.message)
    except Exception as exc:  # a bug must not leave the upload queued forever: record it, then log it
        logger.exception("upload %s could not be processed", upload_id)
        return _mark_failed(upload_id, None, f"internal error while filing the results ({type(exc).__name__})")


def _mark_failed(upload_id: int, line: int | None, message: str) -> ToolUpload | None:
    """The upload failed, with the line that stopped it; its filing was rolled back, so it is queued again
    (the row as it was before this worker took it)."""
    upload = ToolUpload.objects.filter(pk=upload_id).first()
    if upload is not None:
        upload.fail(f"line {line}: {message}" if line else message, from_statuses={JobStatus.QUEUED}, error_line=line)
    return upload


def read_text(data: bytes) -> str:
    """The file as text. Tools print ASCII; anything that is not UTF-8 text is refused with its line."""
    nul = data.find(b"\x00")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise UploadRejected(line, "binary data (a NUL byte); expected the text a tool printed")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise UploadRejected(line, f"byte 0x{data[exc.start]:02x} is not UTF-8 text; expected the text a tool "
                                   "printed") from exc


def _read_file(upload: ToolUpload) -> bytes:
    with upload.file.open("rb") as handle:
        return handle.read()


def _file_results(upload: ToolUpload) -> None:
    text = read_text(_read_file(upload))
    if not text.strip():
        raise UploadRejected(1, "the file holds no text")
    try:
        tool = upload.tool_requested or detect_tool(text)
        if tool not in UPLOAD_TOOLS:
            raise UploadRejected(1, f"this is {tool} output, which is not about one node's checks; upload the "
                                    f"output of one of {', '.join(UPLOAD_TOOLS)}")
        parsed = parse(text, tool, source_name=upload.original_name)
    except ParseError as exc:
        raise UploadRejected(exc.line_no, f"{exc.message}; expected {exc.expected}") from exc
    if not parsed:
        raise UploadRejected(1, f"no {tool} results found in the file")
    finder = port_finder(upload.project, upload.device)
    profile = acceptance_profile_for(project=upload.project).as_criteria()
    kind, filed = BUILDERS[tool](upload, parsed, text, finder, profile)
    _save(upload, tool, kind, filed)


def _with_notes(verdict: criteria.Verdict, notes: list[criteria.Reason]) -> criteria.Verdict:
    return criteria.Verdict.of([*verdict.reasons, *notes]) if notes else verdict


def _mlxlink_results(upload, parsed, text, finder: PortFinder, profile):
    pieces = split_text(text, [r.line_no for r in parsed])
    filed = []
    for index, (result, raw) in enumerate(zip(parsed, pieces, strict=True)):
        place = finder.find(result.device)
        rail = place.rail if place else None
        notes = [] if place else [finder.unmatched(result.device)]
        if rail:
            plan = rail.plan
            baseline = previous_link_counters(project_id=upload.project_id, port_id=rail.port.pk)
        else:
            plan, baseline = criteria.LinkPlan(speed=None, width=None), None
        verdict = criteria.evaluate_link(result, plan=plan, profile=profile, baseline=baseline)
        metrics = result.to_dict()
        metrics.pop("sections", None)  # everything printed is in the raw output already
        filed.append(Filed(finder.key(place, result.device, index), _with_notes(verdict, notes), metrics, raw, place))
    return CheckKind.LINK_HEALTH, filed


def _perftest_metrics(result, place: Place | None) -> dict:
    rail = place.rail if place else None
    metrics = result.to_dict()
    if result.kind == "bw":
        rows = [r for r in result.rows if getattr(r, "bw_avg_gbps", None) is not None]
        largest = max(rows, key=lambda r: r.bytes) if rows else None
        metrics.update(
            rail=rail.index if rail else None,
            bw_avg_gbps=criteria.measured_bandwidth(result),
            bw_peak_gbps=getattr(largest, "bw_peak_gbps", None),
            msg_rate_mpps=getattr(largest, "msg_rate_mpps", None),
            line_rate_gbps=place.port.speed_gbps if place else None,
        )
    return metrics


def _perftest_results(upload, parsed, text, finder: PortFinder, profile):
    """Client sides only when the file holds both (a server prints the same table)."""
    pieces = split_text(text, [r.line_no for r in parsed])
    pairs = [(r, raw) for r, raw in zip(parsed, pieces, strict=True) if r.role == "client"]
    pairs = pairs or list(zip(parsed, pieces, strict=True))
    filed = []
    for index, (result, raw) in enumerate(pairs):
        place = finder.find(result.device)
        notes = [] if place else [finder.unmatched(result.device)]
        if result.kind != "bw":
            verdict = criteria.Verdict.of(
                [criteria.Reason(criteria.Outcome.PASS, f"{result.test}: latency kept; no acceptance criterion")]
            )
        else:
            line_rate = place.port.speed_gbps if place else None
            verdict = criteria.evaluate_bandwidth(
                result, gpu=result.use_cuda, line_rate_gbps=line_rate, profile=profile
            )
        filed.append(
            Filed(
                finder.key(place, result.device, index),
                _with_notes(verdict, notes),
                _perftest_metrics(result, place),
                raw,
                place,
            )
        )
    kind = CheckKind.GPU_RDMA if any(r.use_cuda for r, _ in pairs) else CheckKind.CPU_BANDWIDTH
    return kind, filed


def _nccl_results(upload, parsed, text, finder: PortFinder, profile):
    pieces = split_text(text, [r.line_no for r in parsed])
    filed = []
    for result, raw in zip(parsed, pieces, strict=True):
        metrics = result.to_dict()
        metrics["curve"] = criteria.nccl_curve(result)
        verdict = criteria.evaluate_nccl(result, profile=profile)
        filed.append(Filed(f"nccl:{result.test or 'test'}", verdict, metrics, raw))
    return CheckKind.NCCL, filed


def _port_state_results(upload, parsed, text, finder: PortFinder, profile):
    pieces = split_text(text, [r.line_no for r in parsed])
    filed = []
    for index, (result, raw) in enumerate(zip(parsed, pieces, strict=True)):
        name = getattr(result, "ca", None) or getattr(result, "device", None)
        place = finder.find(name)
        notes = [] if place else [finder.unmatched(name)]
        verdict = evaluate_port_state(
            state=result.state,
            physical_state=result.physical_state,
            rate_gbps=result.rate_gbps,
            planned_gbps=place.port.speed_gbps if place else None,
        )
        key = finder.key(place, f"{name}/{result.port}" if not place else name, index)
        filed.append(Filed(key, _with_notes(verdict, notes), result.to_dict(), raw, place))
    return CheckKind.PORT_STATE, filed


BUILDERS = {
    "mlxlink": _mlxlink_results,
    "perftest": _perftest_results,
    "nccl": _nccl_results,
    "ibstat": _port_state_results,
    "ibstatus": _port_state_results,
    "ethtool_stats": roce.ethtool_stats_results,
    "mlnx_qos": roce.mlnx_qos_results,
    "nvue_qos": roce.nvue_qos_results,
}


def _unique_keys(filed: list[Filed]) -> None:
    """Two results on one port (a file holding two runs of the same test) keep apart as key, key#2."""
    seen: dict[str, int] = {}
    for item in filed:
        seen[item.key] = seen.get(item.key, 0) + 1
        if seen[item.key] > 1:
            item.key = f"{item.key}#{seen[item.key]}"


def _save(upload: ToolUpload, tool: str, kind: str, filed: list[Filed]) -> None:
    now = timezone.now()
    _unique_keys(filed)
    run = CheckRun(
        project=upload.project,
        kind=kind,
        runner=RunnerKind.UPLOAD,
        status=JobStatus.DONE,
        requested_by=upload.requested_by,
        progress_total=len(filed),
        progress_done=len(filed),
        started_at=now,
        finished_at=now,
    )
    counts = {v: sum(1 for item in filed if item.verdict.outcome.value == v) for v in Verdict.values}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    run.log = log_line(
        f"{len(filed)} {tool} result(s) from upload #{upload.pk} ({upload.original_name}) of {upload.host}: {summary}",
        now,
    )
    run.full_clean()
    run.save()
    CheckResult.objects.bulk_create([_result_row(run, upload, item, now) for item in filed], batch_size=500)
    # The run is done with all its results: store its figures as the engine does when a run closes, so its
    # pages read them instead of counting the results on every view.
    check_run_summary_store(run=run)
    upload.finish(
        tool=tool,
        run=run,
        result_count=len(filed),
        counts={v: n for v, n in counts.items() if n},
        progress_total=len(filed),
        progress_done=len(filed),
        finished_at=now,
    )


def _result_row(run: CheckRun, upload: ToolUpload, item: Filed, now) -> CheckResult:
    place = item.place
    verdict = item.verdict
    return CheckResult(
        run=run,
        target_key=CheckResult.fit_key(item.key),
        status=ResultStatus.ERROR if verdict.outcome == criteria.Outcome.ERROR else ResultStatus.DONE,
        device=upload.device,
        port=place.port if place else None,
        cable_id=place.cable_id if place else None,
        optic=place.optic if place else None,
        host=upload.host,
        raw_output=item.raw,
        metrics=item.metrics,
        verdict=verdict.outcome.value,
        reasons=verdict.reasons_json(),
        attempt=1,
        started_at=now,
        finished_at=now,
    )
