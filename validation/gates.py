"""validation's stage gates (projects.gates), registered in ValidationConfig.ready(). validation reads
cabling and inventory, so the gates that need a cable and a check result together live here:

- cabling: every planned cable verified, and the latest topology comparison clean;
- OS and drivers: every GPU node's latest node inventory check (since the acceptance profile last
  changed) passes against the profile's pinned versions;
- link checks: every planned link's (a cable on a GPU node's compute port) latest link-health result
  passes (a warning is a working link);
- benchmarks: the latest bandwidth matrix and NCCL runs finished with every target passing;
- soak: the latest soak window elapsed (not stopped early) and no port's counters grew.

Each counts with aggregate queries (a subquery per row for "the latest result", never a row loaded per
cable) and fetches at most MISSING_EXAMPLES rows.
"""

from __future__ import annotations

from django.db.models import Count, Exists, F, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus
from cabling.models import Cable, CableEnd
from core.choices import JobStatus
from inventory.choices import DeviceRole, HardwareKind, Network
from inventory.models import Device
from projects.gates import MISSING_EXAMPLES, GateOutcome, MissingItem, outcome_of, ref_of, register_gate

from .choices import CheckKind, LinkState, ResultStatus, Verdict
from .models import AcceptanceProfile, CheckResult, CheckRun, SoakWindow, TopologyComparison
from .sql import first_per_key

CABLING = "validation.cabling"
OS_DRIVERS = "validation.os_drivers"
LINK_CHECKS = "validation.link_checks"
BENCHMARKS = "validation.benchmarks"
SOAK = "validation.soak"

PASSING = (Verdict.PASS, Verdict.WARN)  # a warning is a working link, as link health moves cables
NOT_PASSING = (Verdict.FAIL, Verdict.ERROR)


def _one(label: str, reason: str, ref: str, url: str = "") -> MissingItem:
    return MissingItem(label=label, reason=reason, ref=ref, url=url)


def _cable_item(project, cable, reason: str) -> MissingItem:
    return _one(cable.label, reason, ref_of(cable), reverse("cabling:cable-detail", args=[project.code, cable.pk]))


def _fails(missing: list[MissingItem], summary: str) -> GateOutcome:
    return GateOutcome(passed=False, missing_count=len(missing), missing=missing, summary=summary)


# --- cabling ----------------------------------------------------------------------------------------


def _comparison_problem(project) -> MissingItem | None:
    latest = (TopologyComparison.objects.filter(project=project, status=JobStatus.DONE)
              .order_by("-created_at", "-id").first())
    if latest is None:
        return _one("Topology comparison", "No topology comparison yet: compare the fabric with the plan.",
                    "gate:no-topology-comparison", reverse("validation:topology-list", args=[project.code]))
    if latest.faults:
        counts = latest.counts or {}
        seen = ", ".join(f"{counts[s]} {s}" for s in LinkState.values if s != LinkState.OK and counts.get(s))
        return _one(f"Topology comparison #{latest.pk}", f"Not clean: {seen}.", ref_of(latest),
                    reverse("validation:topology-detail", args=[project.code, latest.pk]))
    return None


def cabling_gate(project) -> GateOutcome:
    cables = Cable.objects.filter(project=project, removed_from_plan=False)
    counts = cables.aggregate(total=Count("pk"), unverified=Count("pk", filter=~Q(status=CableStatus.VERIFIED)))
    if not counts["total"]:
        return _fails([_one("Cables", "No cables planned yet: plan the fabric first.", "gate:no-cables",
                            reverse("cabling:cable-list", args=[project.code]))], "No cables planned yet.")
    comparison = _comparison_problem(project)
    examples = [comparison] if comparison else []
    unverified = cables.exclude(status=CableStatus.VERIFIED).order_by("label")[:MISSING_EXAMPLES]
    examples += [_cable_item(project, c, f"{c.get_status_display()}: not verified.") for c in unverified]
    missing = counts["unverified"] + (1 if comparison else 0)
    parts = []
    if counts["unverified"]:
        parts.append(f"{counts['unverified']} of {counts['total']} cables not verified")
    if comparison:
        parts.append(comparison.reason[0].lower() + comparison.reason[1:].rstrip("."))
    return outcome_of(missing, examples,
                      passed_summary=f"All {counts['total']} cables verified; the latest topology comparison is clean.",
                      failed_summary="; ".join(parts) + ".")


# --- link checks -------------------------------------------------------------------------------------


def _gpu_node_q(prefix: str = "") -> Q:
    return Q(**{f"{prefix}role": DeviceRole.GPU_NODE}) | Q(**{f"{prefix}hardware_model__kind": HardwareKind.GPU_SERVER})


def planned_links(project):
    """The cables a link-health run measures: compute cables with an end on a GPU node's port."""
    on_a_node = CableEnd.objects.filter(Q(cable=OuterRef("pk")) & _gpu_node_q("port__device__"))
    return Cable.objects.filter(project=project, removed_from_plan=False, network=Network.COMPUTE).filter(
        Exists(on_a_node)
    )


def _latest_verdict(kind: str, **match) -> Coalesce:
    latest = (
        CheckResult.objects.filter(run__kind=kind, status__in=(ResultStatus.DONE, ResultStatus.ERROR), **match)
        .order_by("-finished_at", "-id").values("verdict")[:1]
    )
    return Coalesce(Subquery(latest), Value(""))  # "" where nothing was measured yet


def latest_link_verdicts(project) -> dict[int, str]:
    """Cable id -> verdict of its latest settled link-health result, from one ordered query read once.

    Not a correlated subquery per cable: at 24,576 cables on PostgreSQL that cost seconds to minutes, and
    the gates are recomputed on every change of evidence."""
    results = (
        CheckResult.objects.filter(run__project=project, run__kind=CheckKind.LINK_HEALTH, cable__isnull=False,
                                   status__in=(ResultStatus.DONE, ResultStatus.ERROR))
        .order_by("cable_id", F("finished_at").desc(nulls_last=True), "-id")
        .values_list("cable_id", "verdict")
    )
    return first_per_key(rows=results, key="cable_id")  # DISTINCT ON where the database has it


def link_checks_gate(project) -> GateOutcome:
    latest = latest_link_verdicts(project)
    total = 0
    failing: list[tuple[int, str]] = []
    links = planned_links(project).order_by("label").values_list("pk", "label")
    for cable_id, label in links.iterator(chunk_size=5000):
        total += 1
        if latest.get(cable_id) not in PASSING:
            failing.append((cable_id, label))
    if not total:
        return _fails([_one("Planned links", "No compute cable reaches a GPU node yet: plan the fabric first.",
                            "gate:no-links", reverse("cabling:cable-list", args=[project.code]))],
                      "No planned links yet.")
    shown = {cable.pk: cable for cable in Cable.objects.filter(pk__in=[pk for pk, _ in failing[:MISSING_EXAMPLES]])}
    examples = [
        _cable_item(project, shown[pk], "No link-health result yet." if not latest.get(pk)
                    else f"Latest link-health result: {Verdict(latest[pk]).label.lower()}.")
        for pk, _ in failing[:MISSING_EXAMPLES]
    ]
    return outcome_of(len(failing), examples, passed_summary=f"All {total} planned links pass link health.",
                      failed_summary=f"{len(failing)} of {total} planned links without a passing "
                      "link-health result.")


# --- OS and drivers ------------------------------------------------------------------------------------


def os_drivers_gate(project) -> GateOutcome:
    profile = AcceptanceProfile.objects.filter(project=project).first()
    profile_url = reverse("validation:profile", args=[project.code])
    if profile is None or not profile.pinned_versions:
        return _fails([_one("Pinned versions", "No versions pinned in the acceptance profile: pin the driver, "
                            "firmware and library versions every node must run.", "gate:no-pinned-versions",
                            profile_url)], "No versions pinned yet.")
    # A check from before the profile last changed was judged against other pins: it does not count.
    nodes = Device.objects.filter(project=project).filter(_gpu_node_q()).annotate(
        latest=_latest_verdict(CheckKind.NODE_INVENTORY, device=OuterRef("pk"), run__created_at__gte=profile.updated_at)
    )
    counts = nodes.aggregate(total=Count("pk"), failing=Count("pk", filter=~Q(latest=Verdict.PASS)))
    if not counts["total"]:
        return _fails([_one("GPU nodes", "The project has no GPU nodes yet.", "gate:no-gpu-nodes",
                            reverse("inventory:device-list", args=[project.code]))], "No GPU nodes yet.")
    examples = [
        _one(node.name, "No node inventory check since the pins last changed." if not node.latest
             else f"Latest node inventory check: {Verdict(node.latest).label.lower()}.", ref_of(node),
             reverse("inventory:device-detail", args=[project.code, node.pk]))
        for node in nodes.exclude(latest=Verdict.PASS).order_by("name")[:MISSING_EXAMPLES]
    ]
    failing = counts["failing"]
    return outcome_of(failing, examples,
                      passed_summary=f"All {counts['total']} GPU nodes run the pinned versions.",
                      failed_summary=f"{failing} of {counts['total']} GPU nodes not shown running the pinned versions.")


# --- benchmarks and soak ----------------------------------------------------------------------------------


def _run_problems(project, kind: str) -> tuple[int, list[MissingItem]]:
    """(how many things are missing, examples) for the latest settled run of `kind`."""
    title = CheckKind(kind).label
    latest = (CheckRun.objects.filter(project=project, kind=kind, status__in=(JobStatus.DONE, JobStatus.FAILED))
              .order_by("-created_at", "-id").first())
    if latest is None:
        runs_url = reverse("validation:run-list", args=[project.code])
        return 1, [_one(title, "No run yet.", f"gate:no-{kind}-run", runs_url)]
    run_url = reverse("validation:run-detail", args=[project.code, latest.pk])
    if latest.status == JobStatus.FAILED:
        return 1, [_one(f"{title} #{latest.pk}", "Nothing could be measured.", ref_of(latest), run_url)]
    failing = latest.results.filter(verdict__in=NOT_PASSING)
    count = failing.count()
    return count, [
        _one(result.target_key, f"{title} #{latest.pk}: {Verdict(result.verdict).label.lower()}.", ref_of(result),
             reverse("validation:result-detail", args=[project.code, result.pk]))
        for result in failing.order_by("round", "id")[:MISSING_EXAMPLES]
    ]


def benchmarks_gate(project) -> GateOutcome:
    missing, examples = 0, []
    for kind in (CheckKind.BANDWIDTH_MATRIX, CheckKind.NCCL):
        count, items = _run_problems(project, kind)
        missing, examples = missing + count, examples + items
    return outcome_of(missing, examples,
                      passed_summary="The latest bandwidth matrix and NCCL runs pass the acceptance profile.",
                      failed_summary=f"{missing} benchmark target(s) or run(s) short of the acceptance profile.")


def soak_gate(project) -> GateOutcome:
    window = SoakWindow.objects.filter(project=project).select_related("run").order_by("-started_at", "-id").first()
    if window is None:
        return _fails([_one("Soak", "No soak yet: open a soak window.", "gate:no-soak",
                            reverse("uploads:soak-list", args=[project.code]))], "No soak yet.")
    url = reverse("uploads:soak-detail", args=[project.code, window.pk])
    if window.is_open:
        share = window.progress(timezone.now())
        return _fails([_one(f"Soak #{window.pk}", f"Open until {window.ends_at:%Y-%m-%d %H:%M} ({share:.0%} elapsed).",
                            ref_of(window), url)], f"Soak #{window.pk} still open.")
    if window.run.status != JobStatus.DONE:
        return _fails([_one(f"Soak #{window.pk}", "Stopped before its window elapsed: soak again.", ref_of(window),
                            url)], f"Soak #{window.pk} stopped early.")
    failing = window.run.results.filter(verdict__in=NOT_PASSING)
    count = failing.count()
    examples = [
        _one(result.target_key, f"Soak #{window.pk}: {Verdict(result.verdict).label.lower()} (counters grew or "
             "could not be read).", ref_of(result), reverse("validation:result-detail", args=[project.code, result.pk]))
        for result in failing.order_by("id")[:MISSING_EXAMPLES]
    ]
    return outcome_of(count, examples,
                      passed_summary=f"Soak #{window.pk} ran {window.duration_hours:g} h without counter growth.",
                      failed_summary=f"{count} port(s) of soak #{window.pk} with growing counters or no readings.")


def register() -> None:
    register_gate(CABLING, cabling_gate, title="Every planned cable verified and the latest topology comparison clean")
    register_gate(OS_DRIVERS, os_drivers_gate, title="Every node's latest inventory check shows the pinned versions")
    register_gate(LINK_CHECKS, link_checks_gate, title="Every planned link's latest link-health result passes")
    register_gate(BENCHMARKS, benchmarks_gate, title="Bandwidth matrix and NCCL pass the acceptance profile")
    register_gate(SOAK, soak_gate, title="The soak window elapsed without counter growth")
