"""Link health: mlxlink on every compute port of every GPU node, judged against the port's planned speed
and width, the profile's BER levels, the module's DOM limits and the port's counters at its previous
reading (a counter that grew since then is a link getting worse)."""

from __future__ import annotations

from django.utils import timezone

from cabling.services import cables_link_observe
from delivery.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, Verdict
from ..cluster import Node
from ..models import CheckResult, CheckRun
from ..parsers import mlxlink as mlxlink_parser
from ..parsers.base import ParseError
from ..runners import commands
from .base import Kind, Measurement, Target, TargetInputs, failed_to_run, unparsable

RECENT_READINGS = 50  # how far back to look for a reading with counters


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    """One target per compute port."""
    return [
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
        for node in nodes
        for rail in node.rails
    ]


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


def baseline(result: CheckResult) -> dict | None:
    return previous_link_counters(
        project_id=result.run.project_id, port_id=result.port_id, exclude_run_id=result.run_id
    )


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
    return Measurement(output.stdout, output.stderr, output.exit_code, metrics, verdict)


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
    baseline=baseline,
    finalise=finalise,
    figure=figure,
    run_charts=("ber_per_port",),
    result_charts=("link_reading",),
)
