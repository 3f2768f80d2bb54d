"""Link health: mlxlink on every compute port of every GPU node (and, with the `network` option, its
storage-network ports), judged against the port's planned speed and width, the profile's BER levels, the
module's DOM limits and the port's counters at its previous reading (a counter that grew since then is a
link getting worse).

An Ethernet (RoCE) port is read in its own terms: mlxlink's Ethernet speed ("400G") and pre-FEC BER by lane
rate, and `ethtool -S` for what the NIC counted (errors, discards, pauses per priority: the lossless
priority must drop nothing). When mlxlink shows no DOM for an optical module (some Ethernet ports print
N/A there), `ethtool -m` reads it instead."""

from __future__ import annotations

from django.db.models import F, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from cabling.services import cables_link_observe
from projects.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, Verdict
from ..cluster import Node, Rail, roce_settings
from ..models import CheckResult, CheckRun
from ..parsers import ethtool as ethtool_parser
from ..parsers import ethtool_stats as stats_parser
from ..parsers import mlxlink as mlxlink_parser
from ..parsers.base import ParseError
from ..runners import Runner, commands
from ..topology.model import cyclic_gc_paused
from .base import Kind, Measurement, Option, Target, TargetInputs, failed_to_run, one_of, tail, unparsable

RECENT_READINGS = 50  # how far back to look for a reading with counters

# Which of a GPU node's networks a run reads. Compute by default: the compute fabric is what the GPU
# benchmarks and the compute gate stand on, and storage is often cabled and accepted on its own schedule;
# "storage" reads the storage ports alone, "all" both in one run. Storage ports are their own targets and
# never rails of a GPU.
NETWORKS = ("compute", "storage", "all")


def _rails(node: Node, network: str) -> tuple[Rail, ...]:
    if network == "storage":
        return node.storage_rails
    if network == "all":
        return (*node.rails, *node.storage_rails)
    return node.rails


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    """One target per port of the chosen network(s)."""
    with cyclic_gc_paused():  # 10,000 targets and their params, none in a cycle: see cluster.gpu_nodes
        return _targets(nodes, options, project)


def _targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    network = options.get("network", "compute")
    ethernet = any(r.ethernet for n in nodes for r in _rails(n, network))
    settings = roce_settings(project).as_dict() if ethernet else None  # once: asdict costs per call
    plans: dict[criteria.LinkPlan, dict] = {}  # a cluster has a few port shapes: each plan's dict made once
    return [
        Target(
            key=f"{node.name}:{rail.port.name}",
            host=node.name,
            command=commands.mlxlink_command(rail.rdma_device),
            params=_params(rail, settings, plans),
            device=node.device,
            port=rail.port,
            cable_id=rail.cable_id,
            optic=rail.optic,
        )
        for node in nodes
        for rail in _rails(node, network)
    ]


def _params(rail: Rail, settings: dict | None, plans: dict | None = None) -> dict:
    plan = rail.plan
    if plans is None:
        plans = {}
    if plan not in plans:
        plans[plan] = plan.as_dict()
    params = {
        "rdma_device": rail.rdma_device,
        "speed_gbps": rail.port.speed_gbps,
        "plan": plans[plan],
        "network": rail.network,
    }
    if rail.ethernet:
        params |= {
            "netdev": rail.netdev,
            "stats_command": commands.ethtool_stats_command(rail.netdev),
            "module_command": commands.ethtool_module_command(rail.netdev),
            "roce": settings,
        }
    return params


def commands_per_target(params: dict) -> int:
    """mlxlink; on an Ethernet port ethtool -S too, and ethtool -m when mlxlink shows no DOM."""
    return 3 if "stats_command" in params else 1


def previous_link_counters(*, project_id: int, port_id: int | None, exclude_run_id: int | None = None) -> dict | None:
    """The port's counters as last measured by link-health readings, to see whether they grow: mlxlink's
    counters from the latest reading that has them, and an Ethernet port's NIC counters (`port_counters`,
    from ethtool -S) from the latest that has those: an uploaded `ethtool -S` alone, or an uploaded mlxlink
    alone, is one half of a reading and must not hide the other half. Readings with neither (mlxlink run
    without -c, an upload of `mlxlink -m`) are skipped: they say nothing."""
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
    counters: dict | None = None
    port_counters: dict | None = None
    for metrics in readings[:RECENT_READINGS]:
        metrics = metrics or {}
        if counters is None and any(value is not None for value in (metrics.get("counters") or {}).values()):
            counters = metrics["counters"]
        if port_counters is None and metrics.get("port_counters"):
            port_counters = metrics["port_counters"]
        if counters is not None and port_counters is not None:
            break
    if counters is None and port_counters is None:
        return None
    # An Ethernet port's NIC counters ride along, so one baseline gives both.
    return {**(counters or {}), "port_counters": port_counters} if port_counters else counters


def baseline(result: CheckResult) -> dict | None:
    return previous_link_counters(
        project_id=result.run.project_id, port_id=result.port_id, exclude_run_id=result.run_id
    )


def baselines(results: list[CheckResult]) -> dict[int, dict | None]:
    """`baseline` for a chunk of one run's targets, by result id, in one query: each port's latest reading
    (the first previous_link_counters looks at). A port whose latest reading is not whole (no counters, an
    upload of `mlxlink -m`, or half of an Ethernet port's reading: an uploaded mlxlink or ethtool -S alone;
    rare) is looked further back on its own, by `baseline`. One query however many targets the chunk has."""
    run = results[0].run
    ports = {result.port_id for result in results if result.port_id is not None}
    latest = dict(
        CheckResult.objects.filter(
            port_id__in=ports, run__kind=CheckKind.LINK_HEALTH, status=ResultStatus.DONE, run__project_id=run.project_id
        )
        .exclude(run_id=run.pk)
        .annotate(recency=Window(RowNumber(), partition_by=[F("port_id")],
                                 order_by=[F("finished_at").desc(), F("id").desc()]))
        .filter(recency=1)
        .values_list("port_id", "metrics")
    ) if ports else {}
    found = {
        result.pk: _reading_counters(latest.get(result.port_id), ethernet="stats_command" in (result.params or {}))
        for result in results
    }
    return {
        result.pk: found[result.pk] if found[result.pk] is not None
        else baseline(result) if result.port_id in latest else None
        for result in results
    }


def _reading_counters(metrics: dict | None, *, ethernet: bool) -> dict | None:
    """What previous_link_counters takes from one reading when that reading is whole: its mlxlink counters
    with, on an Ethernet port, its NIC counters. None when it is half a reading (an uploaded mlxlink or
    ethtool -S alone): previous_link_counters then looks further back for the other half."""
    counters = (metrics or {}).get("counters") or {}
    if not any(value is not None for value in counters.values()):
        return None
    port_counters = (metrics or {}).get("port_counters")
    if port_counters:
        return {**counters, "port_counters": port_counters}
    return None if ethernet else counters


def execute(result: CheckResult, inputs: TargetInputs) -> Measurement:
    params = result.params
    output = inputs.runner.run(result.host, result.command, inputs.timeout)
    if not output.stdout.strip():
        return failed_to_run("mlxlink", output, f"{result.host} {params['rdma_device']}")
    try:
        parsed = mlxlink_parser.parse(output.stdout)[0]
    except ParseError as exc:
        return unparsable("mlxlink", output, exc)
    metrics = parsed.to_dict()
    metrics.pop("sections", None)  # everything printed is in the raw output already
    if "plan" in params:
        plan = criteria.LinkPlan.from_dict(params["plan"])
    else:  # stored before the plan was kept (a re-run of an old run): assume the port's full width
        plan = criteria.port_link_plan(speed_gbps=params["speed_gbps"])
    verdict = criteria.evaluate_link(parsed, plan=plan, profile=inputs.profile, baseline=inputs.baseline)
    measurement = Measurement(output.stdout, output.stderr, output.exit_code, metrics, verdict)
    if "stats_command" in params:
        _read_ethernet_port(measurement, result, inputs)
    return measurement


def _read_ethernet_port(measurement: Measurement, result: CheckResult, inputs: TargetInputs) -> None:
    """Add what the NIC counted (ethtool -S) and, when mlxlink showed none, the module's DOM (ethtool -m) to
    an Ethernet port's reading: their text to the raw output, their figures to the metrics, their findings
    to the verdict."""
    params = result.params
    settings = criteria.RoceSettings.from_dict(params.get("roce") or {})
    baseline = (inputs.baseline or {}).get("port_counters")
    reasons = list(measurement.verdict.reasons)
    stats = _run_one(inputs.runner, result.host, params["stats_command"], inputs.timeout, measurement)
    try:
        counters = stats_parser.parse(stats)[0].counters if stats is not None else None
    except ParseError as exc:
        counters = None
        reasons.append(criteria.Reason(criteria.Outcome.ERROR, f"ethtool -S output unreadable at {exc}"))
    if counters is not None:
        measurement.metrics["port_counters"] = criteria.kept_port_counters(counters)
        reasons += criteria.port_counter_reasons(counters, settings=settings, profile=inputs.profile, baseline=baseline)
    elif stats is None:
        reasons.append(criteria.Reason(criteria.Outcome.WARN, f"ethtool -S {params['netdev']} failed: the NIC's "
                                                              f"error and discard counters were not read"))
    module = measurement.metrics.get("module") or {}
    if not criteria.is_passive_copper(module) and not criteria.has_dom_readings(module):
        reasons = _dom_from_ethtool(reasons, measurement, result, inputs)
    measurement.verdict = criteria.Verdict.of(reasons)


def _dom_from_ethtool(reasons: list, measurement: Measurement, result: CheckResult, inputs: TargetInputs) -> list:
    """mlxlink showed no DOM readings: read them with ethtool -m and judge those instead of the warning."""
    text = _run_one(inputs.runner, result.host, result.params["module_command"], inputs.timeout, measurement)
    if text is None:
        return reasons
    try:
        module = ethtool_parser.parse(text)[0]
    except ParseError:
        return reasons
    dom = criteria.module_from_ethtool(module.to_dict())
    measurement.metrics["module_ethtool"] = dom
    kept = [r for r in reasons if not r.text.startswith("no DOM reported")]
    return kept + criteria.dom_reasons(dom, inputs.profile)


def _run_one(runner: Runner, host: str, command: str, timeout: float, measurement: Measurement) -> str | None:
    """Run one more command for the target; its output joins the raw output under its command line."""
    output = runner.run(host, command, timeout)
    measurement.raw_output += f"\n$ {command}\n{output.stdout}"
    if output.stderr:
        measurement.stderr += output.stderr
    if output.exit_code != 0 or not output.stdout.strip():
        measurement.stderr += f"{command} exited {output.exit_code}: {tail(output.stderr) or 'no output'}\n"
        return None
    return output.stdout


def finalise(run: CheckRun, profile: criteria.Profile) -> list[str]:
    """Each cable's result moves the cable and its ports (cabling.services.cables_link_observe): a link that
    passed (or only warned: it is up and working) is installed and up; a failed one is faulty and down,
    with the run and the first reason as its cause. A port that could not be measured says nothing."""
    ok: set[int] = set()
    failed: dict[int, str] = {}
    rows = run.results.filter(cable__isnull=False, status=ResultStatus.DONE).values_list(
        "cable_id", "verdict", "reasons"
    )
    for cable_id, verdict, reasons in rows:
        if verdict == Verdict.FAIL:
            first = next((r.get("text", "") for r in reasons or [] if r.get("level") == Verdict.FAIL), "")
            failed.setdefault(cable_id, first[:120])
        elif verdict in (Verdict.PASS, Verdict.WARN):
            ok.add(cable_id)
    if not ok and not failed:
        return []
    moved = cables_link_observe(project=run.project, ok=ok - set(failed), failed=failed, at=timezone.now(),
                                cause=f"link health run #{run.pk}", user=run.requested_by)
    return [f"cables: {len(ok - set(failed))} link(s) ok, {len(failed)} failed; {moved} cable(s) changed status"]


def figure(metrics: dict) -> str:
    if "state" not in metrics and "port_counters" in metrics:  # an uploaded ethtool -S: counters only
        return f"NIC counters ({len(metrics['port_counters'])} judged)"
    counters = metrics.get("counters") or {}
    state = metrics.get("state") or "?"
    ber = counters.get("effective_ber")
    ber_text = criteria.fmt_sci(ber) if isinstance(ber, int | float) else "—"
    return f"{state} {metrics.get('speed') or ''}, eff. BER {ber_text}".strip()


KIND = Kind(
    CheckKind.LINK_HEALTH,
    build_targets=build_targets,
    execute=execute,
    timeout_s=60,
    options={"network": Option(one_of(NETWORKS))},
    commands_per_target=commands_per_target,
    baseline=baseline,
    baselines=baselines,
    finalise=finalise,
    figure=figure,
    run_charts=("ber_per_port",),
    result_charts=("link_reading",),
)
