"""Bandwidth matrix: every pair of GPU nodes once, all rails one after another inside the pair's test, in
rounds where no node is in two tests at once. Once every pair is measured, pairs well below the run's
median are flagged, and a node whose every pair is slow or failing is named as the likely cause."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from projects.models import Project

from .. import criteria
from ..choices import CheckKind, ResultStatus, Verdict
from ..cluster import Node, roce_settings
from ..models import CheckRun
from ..runners.schedule import round_robin_rounds
from .base import (
    Kind,
    Measurement,
    Option,
    Target,
    TargetInputs,
    boolean,
    gbps,
    node_pairs_list,
    reasons_from_json,
    shortened_names,
)
from .perftest import bandwidth_metrics, perftest_params, run_pair


def only_the_named(nodes: list[Node], names: list[str] | None) -> list[Node]:
    """The nodes the `nodes` option names (all without the option): a matrix of one scalable unit, or of the
    racks handed over so far, is n(n-1)/2 pairs of those only. The option was checked as a list of at least two
    distinct host names (base.node_pairs_list); here a list longer than the project's GPU nodes, or a name that
    is none of them, is refused (a few of the unknown names echoed, shortened)."""
    if names is None:
        return nodes
    if len(names) > len(nodes):
        raise ValidationError({"options.nodes": f"names {len(names):,} nodes; the project has {len(nodes):,} "
                                                "GPU nodes"})
    known = {node.name for node in nodes}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ValidationError({"options.nodes": f"not GPU nodes of the project: {shortened_names(unknown)}"})
    wanted = set(names)
    return [node for node in nodes if node.name in wanted]


def build_targets(nodes: list[Node], options: dict, project: Project) -> list[Target]:
    nodes = only_the_named(nodes, options.get("nodes"))
    gpu = options.get("use_cuda", True)
    rails = min((len(n.rails) for n in nodes), default=0)
    # A RoCE fabric's tests carry the project's GID index and traffic class, as the per-rail kinds' do.
    roce = roce_settings(project) if any(r.ethernet for n in nodes for r in n.rails) else None
    targets = []
    for round_no, pairs in enumerate(round_robin_rounds(nodes)):
        for a, b in pairs:
            rail_params = [perftest_params(a, b, r, gpu=gpu, roce=roce) for r in range(rails)]
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


def execute(result, inputs: TargetInputs) -> Measurement:
    """A node pair: every rail in turn, so the pair's tests never compete with each other."""
    raws, stderrs, rails, reasons = [], [], [], []
    exit_code = 0
    for params in result.params["rails"]:
        raw, stderr, code, parsed = run_pair(inputs.runner, params, inputs.timeout)
        raws.append(raw)
        stderrs.append(stderr)
        exit_code = exit_code or code
        where = f"rail {params['rail']}"
        if isinstance(parsed, criteria.Verdict):
            reasons += [criteria.Reason(r.level, f"{where}: {r.text}") for r in parsed.reasons]
            continue
        metrics = bandwidth_metrics(parsed, params)
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


def commands_per_target(params: dict) -> int:
    """One ib_write_bw per rail."""
    return max(len(params.get("rails") or ()), 1)


def finalise(run: CheckRun, profile: criteria.Profile) -> list[str]:
    flag_slow_pairs(run, profile)
    return [f"every pair with {node} is slow or failing: {node} is the likely cause" for node in matrix_suspects(run)]


def flag_slow_pairs(run: CheckRun, profile: criteria.Profile) -> None:
    """Warn on pairs whose slowest rail is below the profile's share of the run's median."""
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
        verdict = criteria.Verdict.of([*reasons_from_json(result.reasons), reason])
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


def figure(metrics: dict) -> str:
    low, mean = metrics.get("min_gbps"), metrics.get("mean_gbps")
    return f"slowest rail {gbps(low)}, mean {gbps(mean)}" if low is not None else ""


KIND = Kind(
    CheckKind.BANDWIDTH_MATRIX,
    build_targets=build_targets,
    execute=execute,
    timeout_s=120,
    # use_cuda: GPU memory for the matrix (default true); nodes: only these nodes' pairs (default every node)
    options={"use_cuda": Option(boolean), "nodes": Option(node_pairs_list)},
    commands_per_target=commands_per_target,
    finalise=finalise,
    between_nodes=True,
    figure=figure,
    run_charts=("matrix_heatmap",),
    result_charts=("matrix_rails",),
)
