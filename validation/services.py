"""Writes of the validation engine: acceptance profiles, starting/cancelling/re-running check runs,
and executing one target of a run (called by the thin Celery task in tasks.py).

A run's targets are CheckResult rows created when it starts. Executing a target claims its row,
runs the command through the run's runner outside any transaction, parses the output with the
shared parsers, judges it with criteria.py and records everything on the same row. Bandwidth tests
are scheduled in rounds (no node in two tests at once); `check_run_advance` hands out one round at
a time and finalises the run once every target is finished.

Messages get lost and workers die, so nothing here trusts a message to arrive once: a claimed target
is its worker's only for a lease (every command at its timeout, plus a margin), after which it may be
claimed again, up to `max_attempts()`; only the claim that holds a target records its outcome; and
`check_runs_to_sweep` (a beat task) finds runs that stopped moving and dispatches them again.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Count, F, Max, Prefetch, Q, Value
from django.db.models.functions import Concat
from django.utils import timezone

from cabling.choices import CableType
from cabling.models import CableEnd
from delivery.access import Capability, can
from delivery.models import Project
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, Optic, Port

from . import criteria
from .choices import (
    EXECUTING_RUNNERS,
    FINISHED_RESULT_STATUSES,
    FINISHED_RUN_STATUSES,
    STARTABLE_CHECK_KINDS,
    CheckKind,
    NcclLauncher,
    ResultStatus,
    RunnerKind,
    RunStatus,
    Verdict,
)
from .models import AcceptanceProfile, CheckResult, CheckRun
from .parsers import mlxlink as mlxlink_parser
from .parsers import nccl as nccl_parser
from .parsers import perftest as perftest_parser
from .parsers.base import ParseError
from .runners import (
    LocalRunner,
    Runner,
    RunnerError,
    SimCluster,
    SimModule,
    SimNode,
    SimRail,
    SimulatedRunner,
    TransientRunnerError,
    commands,
)
from .runners.schedule import cover_pairs, round_robin_rounds
from .runners.ssh import SSHRunner

logger = logging.getLogger(__name__)

# Seconds a single command may take, per kind (a run's options may override with timeout_s).
DEFAULT_TIMEOUTS = {
    CheckKind.LINK_HEALTH: 60,
    CheckKind.CPU_BANDWIDTH: 120,
    CheckKind.GPU_RDMA: 120,
    CheckKind.BANDWIDTH_MATRIX: 120,
    CheckKind.NCCL: 3600,
    CheckKind.NODE_INVENTORY: 30,
}
# The longest a run's options may let one command take. The broker's visibility timeout
# (CELERY_BROKER_TRANSPORT_OPTIONS in settings) is set above it.
MAX_COMMAND_TIMEOUT_S = 4 * 3600
HOST_MAX_LENGTH = CheckResult._meta.get_field("host").max_length


# ---------------------------------------------------------------------------------------------------
# Acceptance profile


def acceptance_profile_for(*, project: Project) -> AcceptanceProfile:
    """The project's profile, created with the defaults on first use."""
    profile, _ = AcceptanceProfile.objects.get_or_create(project=project)
    return profile


@transaction.atomic
def acceptance_profile_update(*, project: Project, user, **changes: Any) -> AcceptanceProfile:
    """Change thresholds. Only the project's managers may; every change is kept in the history."""
    if not can(user, Capability.MANAGE_PROJECT, project):
        raise PermissionDenied("Only the project's managers may change its acceptance profile.")
    profile = acceptance_profile_for(project=project)
    unknown = sorted(set(changes) - set(AcceptanceProfile.THRESHOLD_FIELDS))
    if unknown:
        raise ValidationError({name: "Not a setting of the acceptance profile." for name in unknown})
    for name, value in changes.items():
        setattr(profile, name, value)
    profile.full_clean()
    profile.save()
    return profile


# ---------------------------------------------------------------------------------------------------
# The inventory as the checks see it: GPU nodes and their compute rails.


@dataclass(frozen=True)
class Rail:
    """One compute port of a GPU node. Assumed mapping (rail-optimized, one RDMA device per NIC port):
    rail i = the node's i-th physical compute port in creation order = RDMA device mlx5_<i> = GPU i. A
    breakout port (planes) is still one device: its child ports are its lanes, listed in `breakout`."""

    index: int
    port: Port
    breakout: tuple[tuple[str, int], ...]  # (child port name, Gb/s) in lane order; () when not split
    cable_id: int | None
    cable_type: str | None
    optic: Optic | None

    @property
    def rdma_device(self) -> str:
        return f"mlx5_{self.index}"

    @property
    def plan(self) -> criteria.LinkPlan:
        """What mlxlink should report for the port: from its own speed and its child ports' speeds."""
        return criteria.port_link_plan(speed_gbps=self.port.speed_gbps, breakout=self.breakout, infiniband=True)

    @property
    def serdes_lanes(self) -> int:
        width = self.plan.width or ""
        return int(width[:-1]) if width[:-1].isdigit() else criteria.PORT_SERDES_LANES


@dataclass(frozen=True)
class Node:
    device: Device
    rails: tuple[Rail, ...] = field(default_factory=tuple)

    @property
    def name(self) -> str:
        return self.device.name


def gpu_nodes(project: Project) -> list[Node]:
    """GPU nodes (by role or by hardware kind), each with its physical compute-fabric ports in creation
    order and their breakout child ports. Four queries whatever the cluster size."""
    devices = list(
        Device.objects.filter(project=project)
        .filter(Q(role=DeviceRole.GPU_NODE) | Q(hardware_model__kind=HardwareKind.GPU_SERVER))
        .select_related("hardware_model")
        .order_by("name")
    )
    ports = list(
        Port.objects.filter(
            device__in=devices, parent__isnull=True, network=Network.COMPUTE, kind=PortKind.INFINIBAND
        )
        .select_related("optic")
        .prefetch_related(Prefetch("lanes", queryset=Port.objects.order_by("lane", "id")))
        .order_by("device_id", "id")
    )
    ends = CableEnd.objects.filter(Q(port__in=ports) | Q(port__parent__in=ports)).select_related(
        "cable", "port"
    )
    cable_of_port: dict[int, tuple[int, str]] = {}
    for end in ends:
        physical = end.port.parent_id or end.port_id
        cable_of_port.setdefault(physical, (end.cable_id, end.cable.cable_type))
    by_device: dict[int, list[Port]] = {}
    for port in ports:
        by_device.setdefault(port.device_id, []).append(port)
    nodes = []
    for device in devices:
        rails = []
        for index, port in enumerate(by_device.get(device.pk, [])):
            cable_id, cable_type = cable_of_port.get(port.pk, (None, None))
            optic = getattr(port, "optic", None)
            breakout = tuple((lane.name, lane.speed_gbps) for lane in port.lanes.all())
            rails.append(Rail(index, port, breakout, cable_id, cable_type, optic))
        if rails:
            nodes.append(Node(device=device, rails=tuple(rails)))
    return nodes


def sim_cluster_for(project: Project) -> SimCluster:
    """The simulated cluster mirrors the inventory: same nodes, rails, cables and optics."""
    nodes = []
    for node in gpu_nodes(project):
        rails = []
        for rail in node.rails:
            optic = rail.optic
            module = SimModule(
                optical=rail.cable_type != CableType.DAC,
                vendor=optic.vendor if optic else "NVIDIA",
                part_number=optic.part_number if optic else "980-9I693-00NS00",
                serial=optic.serial if optic else "",
            )
            rails.append(
                SimRail(
                    rail.index,
                    rail.rdma_device,
                    rail.port.name,
                    rail.port.speed_gbps,
                    rail.serdes_lanes,
                    module,
                )
            )
        nodes.append(SimNode(node.name, tuple(rails)))
    return SimCluster(tuple(nodes))


# ---------------------------------------------------------------------------------------------------
# Run options


@dataclass(frozen=True)
class _Option:
    kinds: tuple[str, ...] | None  # None: every kind
    check: Any  # value -> cleaned value, raising ValueError with a message


def _int(minimum: int):
    def check(value):
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ValueError(f"expected a whole number of at least {minimum}")
        return value

    return check


def _bool(value):
    if not isinstance(value, bool):
        raise ValueError("expected true or false")
    return value


def _host_list(value):
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of host names")
    return value


def _host_counts(value):
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and _int(0)(v) >= 0 for k, v in value.items()
    ):
        raise ValueError("expected an object of host name: number of refused attempts")
    return value


def _positive_number(value):
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("expected a positive number of seconds")
    return value


def _launcher(value):
    if value not in NcclLauncher.values:
        raise ValueError(f"expected one of {', '.join(NcclLauncher.values)}")
    return value


def _host_name(value):
    if not isinstance(value, str) or not value.strip():
        raise ValueError("expected a host name")
    if len(value.strip()) > HOST_MAX_LENGTH:
        raise ValueError(f"expected a host name of at most {HOST_MAX_LENGTH} characters")
    return value.strip()


def _timeout(value):
    value = _positive_number(value)
    if value > MAX_COMMAND_TIMEOUT_S:
        # Past this, Redis would hand the task to a second worker while the first still runs it.
        raise ValueError(f"expected at most {MAX_COMMAND_TIMEOUT_S} seconds")
    return value


RUN_OPTIONS: dict[str, _Option] = {
    "seed": _Option(None, _int(0)),  # the simulated runner's fault placement and noise
    "down_hosts": _Option(None, _host_list),  # simulated: these refuse every connection
    "flaky_hosts": _Option(None, _host_counts),  # simulated: refuse the first N attempts
    "timeout_s": _Option(None, _timeout),
    "use_cuda": _Option((CheckKind.BANDWIDTH_MATRIX,), _bool),  # GPU memory for the matrix (default true)
    "launcher": _Option((CheckKind.NCCL,), _launcher),
    "launch_host": _Option((CheckKind.NCCL,), _host_name),
    "group_size": _Option((CheckKind.NCCL,), _int(2)),  # NCCL on groups of N nodes instead of all at once
}


def clean_run_options(kind: str, options: dict | None) -> dict:
    """Check a run's options; a bad one is a ValidationError naming it, never a crash later in a task."""
    options = dict(options or {})
    errors = {}
    for name, value in options.items():
        spec = RUN_OPTIONS.get(name)
        if spec is None or (spec.kinds is not None and kind not in spec.kinds):
            errors[f"options.{name}"] = f"not an option of a {kind} run"
            continue
        try:
            options[name] = spec.check(value)
        except ValueError as exc:
            errors[f"options.{name}"] = str(exc)
    if errors:
        raise ValidationError(errors)
    return options


# ---------------------------------------------------------------------------------------------------
# Targets


@dataclass
class Target:
    key: str
    params: dict
    round: int = 0
    host: str = ""
    command: str = ""
    device: Device | None = None
    peer_device: Device | None = None
    port: Port | None = None
    peer_port: Port | None = None
    cable_id: int | None = None
    optic: Optic | None = None


def _link_targets(nodes: list[Node], options: dict) -> list[Target]:
    targets = []
    for node in nodes:
        for rail in node.rails:
            targets.append(
                Target(
                    key=f"{node.name}:{rail.port.name}",
                    host=node.name,
                    command=commands.mlxlink_command(rail.rdma_device),
                    params={
                        "rdma_device": rail.rdma_device,
                        "speed_gbps": rail.port.speed_gbps,
                        "plan": rail.plan.as_dict(),
                    },
                    device=node.device,
                    port=rail.port,
                    cable_id=rail.cable_id,
                    optic=rail.optic,
                )
            )
    return targets


def _perftest_params(a: Node, b: Node, rail_index: int, *, gpu: bool) -> dict:
    rail_a, rail_b = a.rails[rail_index], b.rails[rail_index]
    pair = commands.ib_write_bw_commands(
        rdma_device=rail_a.rdma_device,
        server_host=b.name,
        rail=rail_index,
        gpu_index=rail_index if gpu else None,
    )
    return {
        "rail": rail_index,
        "client_host": a.name,
        "server_host": b.name,
        "client_command": pair.client_command,
        "server_command": pair.server_command,
        "line_rate_gbps": rail_a.port.speed_gbps,
        "use_cuda": gpu,
        "server_rdma_device": rail_b.rdma_device,
    }


def _pair_bandwidth_targets(nodes: list[Node], options: dict, *, gpu: bool) -> list[Target]:
    """Each node's every rail against the same rail of a partner. Round = (pairing group, rail): in a
    round each node is in one test, so a measurement never competes with another on the same node."""
    targets = []
    rails = min((len(n.rails) for n in nodes), default=0)
    for group, pairs in enumerate(cover_pairs(nodes)):
        for rail_index in range(rails):
            for a, b in pairs:
                params = _perftest_params(a, b, rail_index, gpu=gpu)
                rail_a, rail_b = a.rails[rail_index], b.rails[rail_index]
                targets.append(
                    Target(
                        key=f"{a.name}:{rail_a.port.name}~{b.name}:{rail_b.port.name}",
                        params=params,
                        round=group * rails + rail_index,
                        host=a.name,
                        command=params["client_command"],
                        device=a.device,
                        peer_device=b.device,
                        port=rail_a.port,
                        peer_port=rail_b.port,
                        cable_id=rail_a.cable_id,
                        optic=rail_a.optic,
                    )
                )
    return targets


def _matrix_targets(nodes: list[Node], options: dict) -> list[Target]:
    """Every node pair once, all rails one after another inside the pair's test; rounds from the
    round-robin schedule so no node is in two tests at once."""
    gpu = options.get("use_cuda", True)
    rails = min((len(n.rails) for n in nodes), default=0)
    targets = []
    for round_no, pairs in enumerate(round_robin_rounds(nodes)):
        for a, b in pairs:
            rail_params = [_perftest_params(a, b, r, gpu=gpu) for r in range(rails)]
            targets.append(
                Target(
                    key=f"{a.name}~{b.name}",
                    params={"rails": rail_params, "use_cuda": gpu},
                    round=round_no,
                    host=a.name,
                    command="\n".join(p["client_command"] for p in rail_params),
                    device=a.device,
                    peer_device=b.device,
                )
            )
    return targets


def _launch_host(project: Project, options: dict, group: list[Node]) -> str:
    if options.get("launch_host"):
        return options["launch_host"]
    head = Device.objects.filter(project=project, role=DeviceRole.HEAD_NODE).order_by("name").first()
    return head.name if head else group[0].name


def _nccl_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    if not nodes:
        return []  # check_run_start says there is nothing to check
    if len(nodes) < 2:
        # One node's NCCL run never leaves the node: it would pass without testing the network.
        raise ValidationError(
            {
                "kind": f"NCCL tests the network between nodes: it needs at least two GPU nodes with "
                f"compute-fabric ports, and {project.code} has one ({nodes[0].name})."
            }
        )
    size = options.get("group_size") or len(nodes)
    groups = [nodes[i : i + size] for i in range(0, len(nodes), size)]
    if len(groups) > 1 and len(groups[-1]) < 2:
        groups[-2] += groups.pop()  # a lone node has no network to test: fold it into the previous group
    targets = []
    for group in groups:
        hosts = [n.name for n in group]
        gpus = min(len(n.rails) for n in group)
        command = commands.nccl_command(
            launcher=options.get("launcher", NcclLauncher.MPIRUN),
            hosts=hosts,
            gpus_per_node=gpus,
            hcas=[r.rdma_device for r in group[0].rails[:gpus]],
        )
        launch_host = _launch_host(project, options, group)
        key = "nccl:all" if len(groups) == 1 else f"nccl:{hosts[0]}..{hosts[-1]}"
        targets.append(
            Target(
                key=key,
                host=launch_host,
                command=command,
                params={"hosts": hosts, "launch_host": launch_host},
                device=group[0].device,
            )
        )
    return targets


def _inventory_targets(nodes: list[Node], options: dict) -> list[Target]:
    return [
        Target(
            key=node.name,
            host=node.name,
            device=node.device,
            params={},
            command="\n".join(p.command for p in commands.VERSION_PROBES),
        )
        for node in nodes
    ]


def build_targets(*, project: Project, kind: str, options: dict) -> list[Target]:
    nodes = gpu_nodes(project)
    if kind == CheckKind.LINK_HEALTH:
        return _link_targets(nodes, options)
    if kind in (CheckKind.CPU_BANDWIDTH, CheckKind.GPU_RDMA):
        return _pair_bandwidth_targets(nodes, options, gpu=kind == CheckKind.GPU_RDMA)
    if kind == CheckKind.BANDWIDTH_MATRIX:
        return _matrix_targets(nodes, options)
    if kind == CheckKind.NCCL:
        return _nccl_targets(nodes, options, project)
    if kind == CheckKind.NODE_INVENTORY:
        return _inventory_targets(nodes, options)
    raise ValidationError({"kind": not_startable_message(kind)})


def not_startable_message(kind: str) -> str:
    if kind == CheckKind.SOAK:
        return "A soak is not a run of targets: start and stop it from the soak page."
    return f"{CheckKind(kind).label}: results of this kind arrive only as uploaded tool outputs."


def _result_row(run: CheckRun, target: Target) -> CheckResult:
    return CheckResult(
        run=run,
        target_key=CheckResult.fit_key(target.key),
        round=target.round,
        params=target.params,
        host=target.host,
        command=target.command,
        device=target.device,
        peer_device=target.peer_device,
        port=target.port,
        peer_port=target.peer_port,
        cable_id=target.cable_id,
        optic=target.optic,
    )


# ---------------------------------------------------------------------------------------------------
# Starting, cancelling and re-running runs


def _check_may_run(user, project: Project) -> None:
    if user is not None and not can(user, Capability.RUN_CHECKS, project):
        raise PermissionDenied("Your role in this project does not allow running checks.")


def log_line(line: str, at=None) -> str:
    """One line of a run's log, stamped: the only place the stamp is formatted."""
    return f"{at or timezone.now():%Y-%m-%d %H:%M:%S} {line}\n"


def _append_log(run: CheckRun, line: str) -> None:
    """Add a line to a run row this transaction holds (saved with the row)."""
    run.log = f"{run.log}{log_line(line)}"


def _create_run(*, project, kind, runner, requested_by, options, parent=None) -> CheckRun:
    run = CheckRun(
        project=project, kind=kind, runner=runner, requested_by=requested_by, options=options, parent=parent
    )
    run.full_clean()
    run.save()
    return run


def _enqueue_dispatch(run: CheckRun) -> None:
    from .tasks import check_run_dispatch

    run_id = run.pk
    transaction.on_commit(lambda: check_run_dispatch.delay(run_id))


@transaction.atomic
def check_run_start(
    *,
    project: Project,
    kind: str,
    runner: str = RunnerKind.SIMULATED,
    requested_by=None,
    options: dict | None = None,
) -> CheckRun:
    """Create the run and one pending result per target, and enqueue it once the transaction commits.
    `requested_by` None means the system (a management command or a schedule)."""
    _check_may_run(requested_by, project)
    if kind not in CheckKind.values:
        raise ValidationError({"kind": f"{kind!r} is not a check kind ({', '.join(CheckKind.values)})."})
    if kind not in STARTABLE_CHECK_KINDS:
        raise ValidationError({"kind": not_startable_message(kind)})
    if runner not in EXECUTING_RUNNERS:
        raise ValidationError(
            {"runner": f"{runner!r} is not a runner that executes checks ({', '.join(EXECUTING_RUNNERS)})."}
        )
    if runner == RunnerKind.LOCAL and kind != CheckKind.NCCL:
        # Every per-node command would run on this server and be filed under each node in turn.
        raise ValidationError(
            {
                "runner": "The local runner runs commands on this server: "
                "only NCCL (launched from here) can use it."
            }
        )
    options = clean_run_options(kind, options)
    targets = build_targets(project=project, kind=kind, options=options)
    if not targets:
        raise ValidationError(
            {
                "kind": "Nothing to check: the project has no GPU nodes with compute-fabric ports"
                + (" (pair tests need at least two)." if kind != CheckKind.LINK_HEALTH else ".")
            }
        )
    run = _create_run(project=project, kind=kind, runner=runner, requested_by=requested_by, options=options)
    CheckResult.objects.bulk_create([_result_row(run, t) for t in targets], batch_size=500)
    run.total = len(targets)
    who = requested_by.get_username() if requested_by else "the system"
    _append_log(run, f"queued {run.total} target(s) for {who} with the {runner} runner")
    if runner == RunnerKind.SIMULATED:
        faults = SimulatedRunner(sim_cluster_for(project), seed=options.get("seed", 0)).faults.describe()
        _append_log(run, "simulated faults: " + ("; ".join(faults) or "none"))
    run.save(update_fields=["total", "log"])
    _enqueue_dispatch(run)
    return run


def _require_executed(run: CheckRun, action: str) -> None:
    """Only runs of targets that a runner executes can be cancelled or re-run: an upload's results came
    as a file, and a soak window is started and stopped on its own page."""
    if run.runner not in EXECUTING_RUNNERS:
        raise ValidationError(
            f"Run #{run.pk} holds uploaded results: there is nothing to {action}; upload the output again instead."
        )
    if run.kind not in STARTABLE_CHECK_KINDS:
        raise ValidationError(f"Run #{run.pk} has no targets to {action}. {not_startable_message(run.kind)}")


@transaction.atomic
def check_run_cancel(*, run: CheckRun, user=None) -> CheckRun:
    """Stop scheduling: pending targets are cancelled; targets already running finish and are kept."""
    _check_may_run(user, run.project)
    _require_executed(run, "cancel")
    run = CheckRun.objects.select_for_update().get(pk=run.pk)
    if run.status in FINISHED_RUN_STATUSES:
        raise ValidationError(f"Run #{run.pk} is already {run.get_status_display().lower()}.")
    cancelled = run.results.filter(status=ResultStatus.PENDING).update(
        status=ResultStatus.CANCELLED, finished_at=timezone.now()
    )
    run.status = RunStatus.CANCELLED
    run.finished_at = timezone.now()
    run.done = _finished_count(run)
    who = user.get_username() if user else "the system"
    _append_log(run, f"cancelled by {who}; {cancelled} pending target(s) will not run")
    run.save(update_fields=["status", "finished_at", "done", "log"])
    return run


@transaction.atomic
def check_run_rerun_failed(*, run: CheckRun, requested_by=None) -> CheckRun:
    """A new run (child of `run`) with only the targets that failed or could not be measured."""
    _check_may_run(requested_by, run.project)
    _require_executed(run, "re-run")
    failed = list(run.results.filter(verdict__in=[Verdict.FAIL, Verdict.ERROR]).order_by("round", "id"))
    if not failed:
        raise ValidationError(f"Run #{run.pk} has no failed targets to re-run.")
    child = _create_run(
        project=run.project,
        kind=run.kind,
        runner=run.runner,
        requested_by=requested_by,
        options=run.options,
        parent=run,
    )
    CheckResult.objects.bulk_create(
        [
            CheckResult(
                run=child,
                target_key=r.target_key,
                round=r.round,
                params=r.params,
                host=r.host,
                command=r.command,
                device_id=r.device_id,
                peer_device_id=r.peer_device_id,
                port_id=r.port_id,
                peer_port_id=r.peer_port_id,
                cable_id=r.cable_id,
                optic_id=r.optic_id,
            )
            for r in failed
        ]
    )
    child.total = len(failed)
    _append_log(child, f"re-running {len(failed)} failed target(s) of run #{run.pk}")
    child.save(update_fields=["total", "log"])
    _enqueue_dispatch(child)
    return child


# ---------------------------------------------------------------------------------------------------
# Scheduling rounds and finishing runs


def _finished_count(run: CheckRun) -> int:
    return run.results.filter(status__in=FINISHED_RESULT_STATUSES).count()


@transaction.atomic
def check_run_advance(*, run_id: int, now=None) -> list[int]:
    """Which targets to enqueue now. While a round handed out before has unfinished targets: those of
    them that can be claimed (pending, or running past their lease), on every call, so a dispatch
    redelivered after this recorded the round still hands its targets out (enqueuing one twice is
    harmless: a claim is taken once). Once the round is finished: the next round's. With nothing left,
    the run is finalised. Safe to call any number of times from any number of workers: the run row is
    locked while deciding."""
    now = now or timezone.now()
    run = CheckRun.objects.select_for_update().get(pk=run_id)
    if run.status in FINISHED_RUN_STATUSES:
        return []
    if run.status == RunStatus.QUEUED:
        run.status, run.started_at = RunStatus.RUNNING, now
        _append_log(run, "started")
        run.save(update_fields=["status", "started_at", "log"])
    round_no, unfinished = _round_to_hand_out(run)
    if round_no is None:
        _finalise(run)
        return []
    if round_no != run.current_round:
        run.current_round = round_no
        run.save(update_fields=["current_round"])
    return _claimable_ids(run, unfinished, now)


def _round_to_hand_out(run: CheckRun):
    """(round, its unfinished targets): the round handed out last while any target of it (or before) is
    unfinished, else the first round with unfinished targets; (None, none) when every target finished."""
    unfinished = run.results.exclude(status__in=FINISHED_RESULT_STATUSES)
    if run.current_round is not None:
        handed_out = unfinished.filter(round__lte=run.current_round)
        if handed_out.exists():
            return run.current_round, handed_out
    next_round = unfinished.order_by("round").values_list("round", flat=True).first()
    if next_round is None:
        return None, unfinished.none()
    return next_round, unfinished.filter(round=next_round)


# ---------------------------------------------------------------------------------------------------
# Leases and attempts: a running target belongs to the worker that claimed it until its lease ends.


def command_timeout(run: CheckRun) -> float:
    """Seconds one command of the run may take."""
    return run.options.get("timeout_s") or DEFAULT_TIMEOUTS.get(run.kind, 120)


def target_lease_seconds(run: CheckRun, result: CheckResult) -> float:
    """How long a claimed target may run before it counts as lost: every command it runs at its full
    timeout (a matrix pair runs one ib_write_bw per rail, node inventory one probe per version), plus
    the time a pair's server gets to start, plus a margin for the worker's own work."""
    if run.kind == CheckKind.BANDWIDTH_MATRIX:
        commands_run = max(len(result.params.get("rails") or ()), 1)
    elif run.kind == CheckKind.NODE_INVENTORY:
        commands_run = len(commands.VERSION_PROBES)
    else:
        commands_run = 1
    margin = float(getattr(settings, "VALIDATION_LEASE_MARGIN_S", 120))
    return commands_run * (command_timeout(run) + Runner.server_start_s) + margin


def lease_expired(run: CheckRun, result: CheckResult, now) -> bool:
    if result.started_at is None:
        return True
    return (now - result.started_at).total_seconds() > target_lease_seconds(run, result)


def max_attempts() -> int:
    """Executions of one target before it is given up: the first, then the transient-error retries.
    A worker lost mid-target (its lease runs out) uses up an attempt too, so a target that kills its
    worker every time cannot loop forever."""
    return int(getattr(settings, "VALIDATION_MAX_RETRIES", 3)) + 1


def _claimable_ids(run: CheckRun, results, now) -> list[int]:
    """Pending targets, and running ones whose lease ran out (their worker was lost)."""
    ids = []
    for result in results.filter(status__in=[ResultStatus.PENDING, ResultStatus.RUNNING]).only(
        "id", "status", "started_at", "params"
    ):
        if result.status == ResultStatus.PENDING or lease_expired(run, result, now):
            ids.append(result.pk)
    return ids


def _finalise(run: CheckRun) -> None:
    """Judgements that need the whole run (slow outliers of the matrix, the majority's versions), then
    the final status."""
    profile = acceptance_profile_for(project=run.project).as_criteria()
    if run.kind == CheckKind.BANDWIDTH_MATRIX:
        _flag_matrix_outliers(run, profile)
        for node in matrix_suspects(run):
            _append_log(run, f"every pair with {node} is slow or failing: {node} is the likely cause")
    if run.kind == CheckKind.NODE_INVENTORY and not profile.pinned_versions:
        _judge_versions_by_majority(run)
    counts = dict(
        run.results.order_by().values_list("verdict").annotate(n=Count("id")).values_list("verdict", "n")
    )
    measured = sum(n for verdict, n in counts.items() if verdict and verdict != Verdict.ERROR)
    run.status = RunStatus.DONE if measured or not run.total else RunStatus.FAILED
    run.finished_at = timezone.now()
    run.done = _finished_count(run)
    summary = ", ".join(f"{counts.get(v, 0)} {v}" for v in Verdict.values)
    _append_log(run, f"finished: {summary}")
    run.save(update_fields=["status", "finished_at", "done", "log"])


def _flag_matrix_outliers(run: CheckRun, profile: criteria.Profile) -> None:
    results = list(run.results.filter(status=ResultStatus.DONE))
    slowest = {r.pk: r.metrics.get("min_gbps") for r in results if r.metrics.get("min_gbps") is not None}
    median, outliers = criteria.slow_outliers(slowest, profile.matrix_outlier_fraction)
    for result in results:
        if result.pk not in outliers:
            continue
        reason = criteria.Reason(
            criteria.Outcome.WARN,
            f"slowest rail {criteria.fmt_num(outliers[result.pk], 2)} Gb/s < "
            f"{profile.matrix_outlier_fraction:.0%} of the run's median {criteria.fmt_num(median, 2)} Gb/s",
        )
        verdict = criteria.Verdict.of([*_reasons_from_json(result.reasons), reason])
        result.verdict, result.reasons = verdict.outcome.value, verdict.reasons_json()
        result.save(update_fields=["verdict", "reasons"])


def matrix_suspects(run: CheckRun) -> list[str]:
    """Nodes whose every pair (of at least two) did not pass: in a matrix a bad node spoils its whole
    row while each of its partners has just that one bad pair."""
    pairs: dict[str, list[bool]] = {}
    for a, b, verdict in run.results.values_list("device__name", "peer_device__name", "verdict"):
        for node in (a, b):
            if node:
                pairs.setdefault(node, []).append(verdict != Verdict.PASS)
    return sorted(node for node, bad in pairs.items() if len(bad) >= 2 and all(bad))


def _judge_versions_by_majority(run: CheckRun) -> None:
    results = list(run.results.filter(status=ResultStatus.DONE))
    majority = criteria.majority_versions(r.metrics.get("versions", {}) for r in results)
    for result in results:
        verdict = criteria.evaluate_versions(
            result.metrics.get("versions", {}), expected=majority, source="the majority of nodes runs"
        )
        verdict = criteria.Verdict.of([*verdict.reasons, *_reasons_from_json(result.reasons)])
        result.verdict, result.reasons = verdict.outcome.value, verdict.reasons_json()
        result.save(update_fields=["verdict", "reasons"])


def _reasons_from_json(reasons: Iterable[dict]) -> list[criteria.Reason]:
    return [criteria.Reason(criteria.Outcome(r["level"]), r["text"]) for r in reasons]


# ---------------------------------------------------------------------------------------------------
# Executing one target


@dataclass
class Measurement:
    raw_output: str = ""
    stderr: str = ""
    exit_code: int | None = None
    metrics: dict = field(default_factory=dict)
    verdict: criteria.Verdict = field(default_factory=lambda: criteria.Verdict(criteria.Outcome.PASS))


@functools.lru_cache(maxsize=8)
def _cached_sim_cluster(project_id: int, run_id: int, run_created: str) -> SimCluster:
    # One snapshot of the inventory per run and worker process, not one per target.
    return sim_cluster_for(Project.objects.get(pk=project_id))


def runner_for(run: CheckRun, *, attempt: int = 1) -> Runner:
    if run.runner == RunnerKind.SIMULATED:
        cluster = _cached_sim_cluster(run.project_id, run.pk, run.created_at.isoformat())
        return SimulatedRunner(
            cluster,
            seed=run.options.get("seed", 0),
            down_hosts=run.options.get("down_hosts", ()),
            flaky_hosts=run.options.get("flaky_hosts"),
            attempt=attempt,
        )
    if run.runner == RunnerKind.LOCAL:
        return LocalRunner()
    if run.runner == RunnerKind.SSH:
        return SSHRunner()
    raise RunnerError(f"run #{run.pk} has the {run.runner} runner, which executes nothing")


@dataclass(frozen=True)
class TargetInputs:
    """What executing a target needs from the database, read before the execution so that the long part
    (commands on nodes) touches no database and a busy one can be waited out before it starts."""

    runner: Runner
    profile: criteria.Profile
    timeout: float
    baseline: dict | None = None  # link health: the port's counters at its previous reading


def check_target_inputs(*, result: CheckResult) -> TargetInputs:
    run = result.run
    baseline = None
    if run.kind == CheckKind.LINK_HEALTH:
        baseline = previous_link_counters(project_id=run.project_id, port_id=result.port_id, exclude_run_id=run.pk)
    return TargetInputs(
        runner=runner_for(run, attempt=result.attempt),
        profile=acceptance_profile_for(project=run.project).as_criteria(),
        timeout=command_timeout(run),
        baseline=baseline,
    )


def check_target_claim(*, result_id: int, now=None) -> CheckResult | None:
    """Mark the target running and count the attempt. None when there is nothing to do: the run was
    cancelled or finished, the target already finished (a redelivered task must not redo it), another
    worker holds it (running, within its lease), or its attempts are used up (then it is recorded as an
    error naming them)."""
    now = now or timezone.now()
    with transaction.atomic():
        result = CheckResult.objects.select_for_update().select_related("run").filter(pk=result_id).first()
        if result is None or result.status in FINISHED_RESULT_STATUSES:
            return None
        run = result.run
        if run.status == RunStatus.CANCELLED:
            result.status, result.finished_at = ResultStatus.CANCELLED, now
            result.save(update_fields=["status", "finished_at"])
            _refresh_progress(result.run_id)
            return None
        if result.status == ResultStatus.RUNNING and not lease_expired(run, result, now):
            return None
        if result.attempt >= max_attempts():
            _record(result, Measurement(verdict=criteria.error_verdict(_gave_up_message(run, result))))
            return None
        if result.status == ResultStatus.RUNNING:
            check_run_log(
                run_id=run.pk,
                line=f"{result.target_key}: attempt {result.attempt} started {result.started_at:%H:%M:%S} and "
                f"never finished (its worker was lost); trying again",
            )
        result.status = ResultStatus.RUNNING
        result.attempt += 1
        result.started_at = now
        result.save(update_fields=["status", "attempt", "started_at"])
    return result


def _gave_up_message(run: CheckRun, result: CheckResult) -> str:
    lease = criteria.fmt_num(target_lease_seconds(run, result), 0)
    return (
        f"gave up after {result.attempt} attempts: none finished within its {lease} s lease "
        f"(the worker was lost or the command hung)"
    )


def check_target_release(*, result: CheckResult) -> bool:
    """Hand a claimed target back (pending) while its retry waits out the backoff, so the retry (or any
    dispatcher) can claim it again. Only the claim that holds it may: False if another took over."""
    released = CheckResult.objects.filter(
        pk=result.pk, status=ResultStatus.RUNNING, attempt=result.attempt
    ).update(status=ResultStatus.PENDING)
    return bool(released)


def check_target_execute(*, result: CheckResult, inputs: TargetInputs) -> Measurement:
    """Run the target's command(s) and judge the output. Raises TransientRunnerError for the task to
    retry; every other problem becomes an error verdict on the measurement. No database access."""
    execute = _EXECUTORS[result.run.kind]
    try:
        return execute(result, inputs)
    except TransientRunnerError:
        raise
    except RunnerError as exc:
        return Measurement(verdict=criteria.error_verdict(f"could not run on {result.host}: {exc}"))


@transaction.atomic
def check_target_record(*, result: CheckResult, measurement: Measurement) -> CheckResult | None:
    """Store the outcome on the target's own row (never a new row) and update the run's progress. Only
    the claim that holds the target records: if its lease ran out and another attempt took it over (or
    finished it), this late outcome is dropped and None returned."""
    current = (
        CheckResult.objects.select_for_update().filter(pk=result.pk).values_list("status", "attempt").first()
    )
    if current != (ResultStatus.RUNNING, result.attempt):
        check_run_log(
            run_id=result.run_id,
            line=f"{result.target_key}: the outcome of attempt {result.attempt} came after another attempt "
            f"took the target over; dropped",
        )
        return None
    return _record(result, measurement)


def _record(result: CheckResult, measurement: Measurement) -> CheckResult:
    verdict = measurement.verdict
    result.raw_output = measurement.raw_output
    result.stderr = measurement.stderr
    result.exit_code = measurement.exit_code
    result.metrics = measurement.metrics
    result.verdict = verdict.outcome.value
    result.reasons = verdict.reasons_json()
    result.status = ResultStatus.ERROR if verdict.outcome == criteria.Outcome.ERROR else ResultStatus.DONE
    result.finished_at = timezone.now()
    result.save(
        update_fields=[
            "raw_output",
            "stderr",
            "exit_code",
            "metrics",
            "verdict",
            "reasons",
            "status",
            "finished_at",
        ]
    )
    _refresh_progress(result.run_id)
    return result


def failed_measurement(message: str) -> Measurement:
    """Retries exhausted (or an unexpected error): the target could not be measured."""
    return Measurement(verdict=criteria.error_verdict(message))


def check_target_give_up(*, result: CheckResult, message: str) -> CheckResult | None:
    return check_target_record(result=result, measurement=failed_measurement(message))


def check_run_log(*, run_id: int, line: str) -> None:
    """Append a line to a run's log in one UPDATE, so concurrent tasks never overwrite each other."""
    CheckRun.objects.filter(pk=run_id).update(log=Concat(F("log"), Value(log_line(line))))


def _refresh_progress(run_id: int) -> None:
    """Recount rather than increment, so a redelivered task cannot count a target twice."""
    done = CheckResult.objects.filter(run_id=run_id, status__in=FINISHED_RESULT_STATUSES).count()
    CheckRun.objects.filter(pk=run_id).update(done=done)


def next_round_due(*, result_id: int) -> int | None:
    """The run id when the target's run is unfinished and every target of the round it handed out last
    (and of those before) is finished, so the dispatcher should hand out what comes next; else None. A
    target of an earlier round, redelivered late, does not ask again for a round already handed out."""
    row = (
        CheckResult.objects.filter(pk=result_id)
        .exclude(run__status__in=FINISHED_RUN_STATUSES)
        .values_list("run_id", "run__current_round")
        .first()
    )
    if row is None:
        return None
    run_id, current_round = row
    waiting = CheckResult.objects.filter(run_id=run_id).exclude(status__in=FINISHED_RESULT_STATUSES)
    if current_round is not None:
        waiting = waiting.filter(round__lte=current_round)
    return None if waiting.exists() else run_id


# ---------------------------------------------------------------------------------------------------
# The sweeper: runs whose dispatch was lost, whose worker died, or that finished without being closed.


def check_runs_to_sweep(*, now=None, stale_after_s: float | None = None) -> list[int]:
    """Unfinished runs the dispatcher should look at again: those whose targets are all finished (to
    close them), and those with no progress for `stale_after_s` that have a target to hand out (pending,
    or running past its lease). Uploads and soak windows have no targets to execute and are left alone.
    Each stale run gets a log line saying what is handed out again."""
    now = now or timezone.now()
    if stale_after_s is None:
        stale_after_s = float(getattr(settings, "VALIDATION_STALE_RUN_S", 600))
    runs = (
        CheckRun.objects.filter(
            status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
            runner__in=EXECUTING_RUNNERS,
            kind__in=STARTABLE_CHECK_KINDS,
        )
        .annotate(
            unfinished=Count("results", filter=~Q(results__status__in=FINISHED_RESULT_STATUSES)),
            last_started=Max("results__started_at"),
            last_finished=Max("results__finished_at"),
        )
        .defer("log")
        .order_by("created_at", "id")
    )
    due = []
    for run in runs:
        if run.unfinished == 0:
            due.append(run.pk)
            continue
        moments = [m for m in (run.created_at, run.started_at, run.last_started, run.last_finished) if m]
        idle = (now - max(moments)).total_seconds()
        if idle < stale_after_s:
            continue
        _, round_targets = _round_to_hand_out(run)
        waiting = _claimable_ids(run, round_targets, now)
        if waiting:
            check_run_log(
                run_id=run.pk,
                line=f"no progress for {idle / 60:.0f} min: handing out {len(waiting)} waiting target(s) again",
            )
            due.append(run.pk)
    return due


# -- per kind -----------------------------------------------------------------------------------------


def _tail(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])


def _failed_to_run(tool: str, output, where: str) -> Measurement:
    detail = _tail(output.stderr) or _tail(output.stdout) or "no output"
    return Measurement(
        raw_output=output.stdout,
        stderr=output.stderr,
        exit_code=output.exit_code,
        verdict=criteria.error_verdict(f"{tool} on {where} exited {output.exit_code}: {detail}"),
    )


def _unparsable(tool: str, output, exc: ParseError) -> Measurement:
    return Measurement(
        raw_output=output.stdout,
        stderr=output.stderr,
        exit_code=output.exit_code,
        verdict=criteria.error_verdict(f"{tool} output unreadable at {exc}"),
    )


RECENT_READINGS = 50  # how far back to look for a reading with counters


def previous_link_counters(*, project_id: int, port_id: int | None, exclude_run_id: int | None = None) -> dict | None:
    """The port's counters as last measured by a link-health reading, to see whether they grow. Readings
    without counters (mlxlink run without -c, an upload of `mlxlink -m`) are skipped: they say nothing."""
    if port_id is None:
        return None
    readings = (
        CheckResult.objects.filter(
            port_id=port_id,
            run__kind=CheckKind.LINK_HEALTH,
            status=ResultStatus.DONE,
            run__project_id=project_id,
        )
        .exclude(run_id=exclude_run_id)
        .order_by("-finished_at", "-id")
        .values_list("metrics", flat=True)
    )
    for metrics in readings[:RECENT_READINGS]:
        counters = (metrics or {}).get("counters") or {}
        if any(value is not None for value in counters.values()):
            return counters
    return None


def _execute_link(result, inputs: TargetInputs) -> Measurement:
    params = result.params
    output = inputs.runner.run(result.host, result.command, inputs.timeout)
    if not output.stdout.strip():
        return _failed_to_run("mlxlink", output, f"{result.host} {params['rdma_device']}")
    try:
        parsed = mlxlink_parser.parse(output.stdout)[0]
    except ParseError as exc:
        return _unparsable("mlxlink", output, exc)
    metrics = parsed.to_dict()
    metrics.pop("sections", None)  # everything printed is in the raw output already
    if "plan" in params:
        plan = criteria.LinkPlan.from_dict(params["plan"])
    else:  # stored before the plan was kept (a re-run of an old run): assume the port's full width
        plan = criteria.port_link_plan(speed_gbps=params["speed_gbps"])
    verdict = criteria.evaluate_link(parsed, plan=plan, profile=inputs.profile, baseline=inputs.baseline)
    return Measurement(output.stdout, output.stderr, output.exit_code, metrics, verdict)


def _perftest_pair(runner: Runner, params: dict, timeout: float):
    """Run one rail's ib_write_bw pair; returns (raw text, stderr, exit code, client result or error)."""
    server, client = runner.run_pair(
        server_host=params["server_host"],
        server_command=params["server_command"],
        client_host=params["client_host"],
        client_command=params["client_command"],
        timeout=timeout,
    )
    # The client's output is the measurement and is always kept. The server prints the same table, so it
    # is kept only when it has something of its own to say (it failed): a 72-node matrix is 86 MB otherwise.
    server_failed = server.exit_code != 0 or not client.stdout.strip()
    raw = server.stdout + client.stdout if server_failed else client.stdout
    stderr = server.stderr + client.stderr
    exit_code = client.exit_code or server.exit_code
    where = f"{params['client_host']} -> {params['server_host']} rail {params['rail']}"
    if not client.stdout.strip():
        return raw, stderr, exit_code, _failed_to_run("ib_write_bw", client, where).verdict
    try:
        runs = perftest_parser.parse(client.stdout)
    except ParseError as exc:
        return raw, stderr, exit_code, criteria.error_verdict(f"ib_write_bw output unreadable at {exc}")
    clients = [r for r in runs if r.role == "client"] or runs
    return raw, stderr, exit_code, clients[-1]


def _bandwidth_metrics(parsed, params: dict) -> dict:
    row = max(parsed.rows, key=lambda r: r.bytes) if parsed.rows else None
    return {
        "rail": params["rail"],
        "bw_avg_gbps": criteria.measured_bandwidth(parsed),
        "bw_peak_gbps": getattr(row, "bw_peak_gbps", None),
        "msg_rate_mpps": getattr(row, "msg_rate_mpps", None),
        "line_rate_gbps": params["line_rate_gbps"],
        "use_cuda": params["use_cuda"],
        "qps": parsed.qps,
        "link_type": parsed.link_type,
    }


def _execute_bandwidth(result, inputs: TargetInputs) -> Measurement:
    params = result.params
    raw, stderr, exit_code, parsed = _perftest_pair(inputs.runner, params, inputs.timeout)
    if isinstance(parsed, criteria.Verdict):
        return Measurement(raw, stderr, exit_code, {}, parsed)
    verdict = criteria.evaluate_bandwidth(
        parsed, gpu=params["use_cuda"], line_rate_gbps=params["line_rate_gbps"], profile=inputs.profile
    )
    return Measurement(raw, stderr, exit_code, _bandwidth_metrics(parsed, params), verdict)


def _execute_matrix(result, inputs: TargetInputs) -> Measurement:
    """A node pair: every rail in turn, so the pair's tests never compete with each other."""
    raws, stderrs, rails, reasons = [], [], [], []
    exit_code = 0
    for params in result.params["rails"]:
        raw, stderr, code, parsed = _perftest_pair(inputs.runner, params, inputs.timeout)
        raws.append(raw)
        stderrs.append(stderr)
        exit_code = exit_code or code
        where = f"rail {params['rail']}"
        if isinstance(parsed, criteria.Verdict):
            reasons += [criteria.Reason(r.level, f"{where}: {r.text}") for r in parsed.reasons]
            continue
        metrics = _bandwidth_metrics(parsed, params)
        rails.append(metrics)
        reasons += criteria.bandwidth_reasons(
            metrics["bw_avg_gbps"],
            gpu=params["use_cuda"],
            line_rate_gbps=params["line_rate_gbps"],
            profile=inputs.profile,
            where=where,
        )
    measured = [r["bw_avg_gbps"] for r in rails if r["bw_avg_gbps"] is not None]
    metrics = {
        "rails": rails,
        "use_cuda": result.params.get("use_cuda", True),
        "min_gbps": min(measured) if measured else None,
        "mean_gbps": sum(measured) / len(measured) if measured else None,
    }
    return Measurement("".join(raws), "".join(stderrs), exit_code, metrics, criteria.Verdict.of(reasons))


def _execute_nccl(result, inputs: TargetInputs) -> Measurement:
    output = inputs.runner.run(result.host, result.command, inputs.timeout)
    if not output.stdout.strip():
        return _failed_to_run("nccl-tests", output, result.host)
    try:
        parsed = nccl_parser.parse(output.stdout)[0]
    except ParseError as exc:
        return _unparsable("nccl-tests", output, exc)
    metrics = parsed.to_dict()
    metrics["curve"] = criteria.nccl_curve(parsed)
    verdict = criteria.evaluate_nccl(parsed, profile=inputs.profile)
    return Measurement(output.stdout, output.stderr, output.exit_code, metrics, verdict)


def _execute_inventory(result, inputs: TargetInputs) -> Measurement:
    versions, raw, stderr, reasons = {}, [], [], []
    for probe in commands.VERSION_PROBES:
        output = inputs.runner.run(result.host, probe.command, inputs.timeout)
        raw.append(f"$ {probe.command}\n{output.stdout}")
        stderr.append(output.stderr)
        if output.exit_code != 0:
            reasons.append(
                criteria.Reason(
                    criteria.Outcome.FAIL,
                    f"{probe.key}: `{probe.command}` exited {output.exit_code}: {_tail(output.stderr, 1)}",
                )
            )
            continue
        try:
            versions[probe.key] = probe.read(output.stdout)
        except ParseError as exc:
            reasons.append(criteria.Reason(criteria.Outcome.FAIL, f"{probe.key}: output unreadable at {exc}"))
    if inputs.profile.pinned_versions:
        pinned = criteria.evaluate_versions(versions, expected=inputs.profile.pinned_versions, source="pinned")
        reasons += pinned.reasons
    return Measurement("".join(raw), "".join(stderr), 0, {"versions": versions}, criteria.Verdict.of(reasons))


_EXECUTORS = {
    CheckKind.LINK_HEALTH: _execute_link,
    CheckKind.CPU_BANDWIDTH: _execute_bandwidth,
    CheckKind.GPU_RDMA: _execute_bandwidth,
    CheckKind.BANDWIDTH_MATRIX: _execute_matrix,
    CheckKind.NCCL: _execute_nccl,
    CheckKind.NODE_INVENTORY: _execute_inventory,
}
