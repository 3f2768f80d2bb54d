"""A topology comparison kept as a job row: the files it read (stored as they came, with their digest), its
counts, its links that are not ok (and those fixed since the previous comparison), the GUIDs and MACs it
learned, and the cables it moved.

Three ways in, one path: `topology_comparison_start` (the upload page: the row is queued and the task
`validation.tasks.topology_comparison_run` reads it), `topology_compare_now` (the compare_topology command
and the topology check kind, which collected the outputs through the runners: in place). Both end in
`_run`: read each file (validation.topology.reading), map (mapping), compare (compare), record.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import PurePath

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from cabling.services.fabric_states import cables_fabric_record
from core.choices import JobStatus
from core.jobs import enqueue_on_commit
from inventory.services.identities import identities_record
from projects.access import Capability, can
from projects.evidence import evidence_changed_send
from projects.models import Project

from ..choices import LinkChange, LinkState, TopologySource
from ..models import CheckRun, TopologyComparison, TopologyFile, TopologyLink
from .compare import Comparison, compare
from .mapping import map_sources
from .model import cyclic_gc_paused
from .reading import decode, read_output
from .store import inventory_and_plan

logger = logging.getLogger(__name__)

COMPARE_TASK = "validation.tasks.topology_comparison_run"
MAX_FILES = 1000
KEY_LENGTH = TopologyLink._meta.get_field("key").max_length
TEXT_LENGTH = TopologyLink._meta.get_field("planned_a").max_length


def max_file_bytes() -> int:
    return int(getattr(settings, "TOPOLOGY_MAX_FILE_BYTES", 64 * 2**20))


def max_total_bytes() -> int:
    return int(getattr(settings, "TOPOLOGY_MAX_TOTAL_BYTES", 512 * 2**20))


@dataclass(frozen=True)
class TopologyInput:
    """One tool output to compare: its name, its bytes, the device it was taken on (LLDP; blank: tell it
    from the prompt or the name) and the tool (blank: detect it)."""

    name: str
    data: bytes
    host: str = ""
    tool: str = ""


def _check_may_compare(user, project: Project) -> None:
    if user is not None and not can(user, Capability.RUN_CHECKS, project):
        raise PermissionDenied("Your role in this project does not allow comparing the fabric.")


def _safe_name(name: str) -> str:
    base = PurePath(str(name).replace("\\", "/")).name or "output.txt"
    base = re.sub(r"[^A-Za-z0-9._=@+-]", "_", base)[:120]
    return base or "output.txt"


def _check_inputs(inputs: list[TopologyInput]) -> None:
    if not inputs:
        raise ValidationError({"files": "Give at least one tool output: iblinkinfo, ibnetdiscover, lldpcli or "
                                        "nv show interface lldp."})
    if len(inputs) > MAX_FILES:
        raise ValidationError({"files": f"{len(inputs):,} files; at most {MAX_FILES:,} in one comparison."})
    too_big = [i.name for i in inputs if len(i.data) > max_file_bytes()]
    if too_big:
        raise ValidationError({"files": f"{_safe_name(too_big[0])} is larger than {max_file_bytes():,} bytes."})
    total = sum(len(i.data) for i in inputs)
    if total > max_total_bytes():
        raise ValidationError({"files": f"{total:,} bytes in all; at most {max_total_bytes():,}."})
    long_host = next((i.host for i in inputs if len(i.host) > 200), None)
    if long_host:
        raise ValidationError({"host": "A host name of at most 200 characters."})


def _create(*, project: Project, user, inputs: list[TopologyInput], source: str, run: CheckRun | None):
    _check_inputs(inputs)
    comparison = TopologyComparison(project=project, source=source, run=run, requested_by=user,
                                    progress_total=len(inputs), status=JobStatus.QUEUED)
    comparison.full_clean()
    comparison.save()
    rows = []
    for index, item in enumerate(inputs, start=1):
        row = TopologyFile(comparison=comparison, original_name=str(item.name)[:255] or "output.txt",
                           size_bytes=len(item.data), sha256=hashlib.sha256(item.data).hexdigest(),
                           host=item.host.strip(), tool=item.tool)
        row.file.save(f"{index:04d}-{_safe_name(item.name)}", ContentFile(item.data), save=False)
        rows.append(row)
    TopologyFile.objects.bulk_create(rows, batch_size=500)  # a switch per file: hundreds on a whole fabric
    return comparison, rows


@transaction.atomic
def topology_comparison_start(*, project: Project, user, inputs: list[TopologyInput],
                              source: str = TopologySource.PAGE) -> TopologyComparison:
    """Keep the files and queue the comparison; the task runs it once the transaction commits."""
    _check_may_compare(user, project)
    comparison, _ = _create(project=project, user=user, inputs=inputs, source=source, run=None)
    enqueue_on_commit(COMPARE_TASK, comparison.pk)
    return comparison


def topology_comparison_run(*, comparison_id: int) -> TopologyComparison | None:
    """The task's body: run a queued comparison. Safe to call twice: only the call that moves it from
    queued to running runs it."""
    comparison = TopologyComparison.objects.select_related("project", "requested_by").filter(pk=comparison_id).first()
    if comparison is None or not comparison.start(step="reading the outputs"):
        return comparison
    try:
        with cyclic_gc_paused():
            _run(comparison)
    except Exception as exc:  # record it on the row (a page polls it), then let the worker log it
        logger.exception("topology comparison %s failed", comparison_id)
        comparison.fail(f"internal error: {type(exc).__name__}: {exc}")
        raise
    comparison.refresh_from_db()
    return comparison


@transaction.atomic
def topology_compare_now(*, project: Project, user, inputs: list[TopologyInput],
                         source: str = TopologySource.COMMAND, run: CheckRun | None = None) -> TopologyComparison:
    """Keep the files and compare them here and now (the command, a check run's end). `user` None is the
    system."""
    _check_may_compare(user, project)
    comparison, rows = _create(project=project, user=user, inputs=inputs, source=source, run=run)
    comparison.start(step="reading the outputs")
    with cyclic_gc_paused():
        # The bytes are in hand: the files just stored are not read back (48 MB on a whole fabric).
        _run(comparison, stored=[(row, item.data) for row, item in zip(rows, inputs, strict=True)])
    comparison.refresh_from_db()
    return comparison


def _text_of(row: TopologyFile, data: bytes | None) -> str:
    """The file's text: from the bytes it was stored from when the caller has them, else read back."""
    if data is None:
        with row.file.open("rb") as handle:
            data = handle.read()
    return decode(data)


def _run(comparison: TopologyComparison, *, stored: list[tuple[TopologyFile, bytes]] | None = None) -> None:
    """Read, map, compare and record. `stored`: the files just stored with their bytes (the caller had them);
    else each file is read back from storage (a queued comparison's task)."""
    project = comparison.project
    inventory, planned = inventory_and_plan(project)
    names = [device.name for device in inventory.devices.values()]
    files = stored if stored is not None else [(row, None) for row in comparison.files.all()]
    sources, problems = [], []
    every = max(len(files) // 20, 1)  # progress a poller sees, without an UPDATE per file of a large batch
    read: dict[tuple, list[int]] = defaultdict(list)  # what reading told of the files -> their ids
    hosts: dict[str, list[int]] = defaultdict(list)  # the device told from the file, where it was not given
    for done, (row, data) in enumerate(files, start=1):
        outcome = read_output(row.original_name, _text_of(row, data), host=row.host, tool=row.tool, device_names=names)
        told = (outcome.tool, outcome.error, outcome.error_line)
        if told != (row.tool, row.error, row.error_line):
            read[told].append(row.pk)
        if outcome.host and outcome.host != row.host:
            hosts[outcome.host].append(row.pk)
        if outcome.source is not None:
            sources.append(outcome.source)
        else:
            problems.append(f"{row.original_name}: {outcome.error}")
        if done % every == 0 or done == len(files):
            comparison.advance(done)
    for (tool, error, error_line), ids in read.items():  # files read alike: one statement for them all
        TopologyFile.objects.filter(pk__in=ids).update(tool=tool, error=error, error_line=error_line)
    for host, ids in hosts.items():
        TopologyFile.objects.filter(pk__in=ids).update(host=host)
    if not sources:
        comparison.fail(["No file could be read.", *problems[:20]])
        return
    comparison.advance(step="comparing with the plan")
    observation = map_sources(inventory, sources)
    if not (observation.ib_devices or observation.lldp_devices):
        comparison.fail(["None of the outputs shows a device of the project.", *problems[:10],
                         *observation.notes[:10]])
        return
    result = compare(inventory, planned, observation)
    _record(comparison, result, observation, problems, inventory)


def _fit(text: str, limit: int = TEXT_LENGTH) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fit_key(key: str) -> str:
    if len(key) <= KEY_LENGTH:
        return key
    digest = hashlib.sha256(key.encode("utf-8", errors="replace")).hexdigest()[:16]
    return f"{key[: KEY_LENGTH - 17]}#{digest}"


def previous_comparison(comparison: TopologyComparison) -> TopologyComparison | None:
    return (
        TopologyComparison.objects.filter(project_id=comparison.project_id, status=JobStatus.DONE,
                                          created_at__lte=comparison.created_at)
        .exclude(pk=comparison.pk)
        .order_by("-created_at", "-id")
        .first()
    )


@transaction.atomic
def _record(comparison: TopologyComparison, result: Comparison, observation, problems: list[str], inventory) -> None:
    now = timezone.now()
    previous = previous_comparison(comparison)
    before = dict(previous.links.exclude(change=LinkChange.FIXED).values_list("key", "state")) if previous else {}
    rows, changes = [], {"new": 0, "still": 0, "fixed": 0}
    for link in result.results:
        key = _fit_key(link.key)
        if link.state == LinkState.OK:
            if key not in before:
                continue
            result.describe(inventory, link)
            change = LinkChange.FIXED
        else:
            change = LinkChange.STILL if key in before else LinkChange.NEW
        changes[change] += 1
        rows.append(TopologyLink(
            comparison=comparison, key=key, state=link.state.value, change=change, cable_id=link.cable_id,
            cable_label=link.cable_label, planned_a=_fit(link.planned_a), planned_b=_fit(link.planned_b),
            observed_a=_fit(link.observed_a), observed_b=_fit(link.observed_b), note=link.note,
            advice=link.advice, swap_with=_fit_key(link.swap_with) if link.swap_with else "",
        ))
    TopologyLink.objects.bulk_create(rows, batch_size=1000)
    cause = f"topology comparison #{comparison.pk}"
    # The cables first (locked in id order), then their ports, then the identities learned on ports: the order
    # a scan takes its locks in (the cable, then the ports it connects). Learning first would hold ports a
    # verifying scan waits for while this waits for that scan's cable: a deadlock.
    moved = cables_fabric_record(project=comparison.project, observations=result.cable_states(), checked_at=now,
                                 cause=cause, user=comparison.requested_by)
    learned = identities_record(project=comparison.project, device_guids=observation.device_guids,
                                port_ids=observation.port_ids, user=comparison.requested_by, cause=cause)
    counts = result.counts
    comparison.append_log(
        f"{counts['in_scope']} planned link(s) in scope, {counts['observed']} seen: "
        + ", ".join(f"{counts[state]} {state}" for state in LinkState.values)
        + f"; {learned} GUID/MAC(s) learned; {moved} cable(s) moved"
    )
    comparison.finish(counts=counts, changes=changes, notes=[*problems[:20], *observation.notes],
                      previous=previous, cables_changed=moved, finished_at=now)
    evidence_changed_send(project_id=comparison.project_id, what="topology")  # the cabling gate reads it
