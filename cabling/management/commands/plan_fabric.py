"""`manage.py plan_fabric SPEC.yaml [--project CODE [--confirm] [--keep-installed]] [--dry-run] [--json]`.

A dry run plans and checks in memory (no project, no database) and prints the counts, or with --json
a document scripts can check: {"switches": {net: {"leaf", "spine", "super_spine"}}, "links": {net: n},
"planes": {net: n}, "cables": n, ...}.

With --project and without --dry-run it compares the plan with the project and prints what applying
would add, change and remove (and what is blocked: installed cables or switches in place that the
plan drops); it writes nothing and exits 0. With --confirm it applies the plan in one transaction
(cabling.services.plan_apply) and records it as a FabricPlan; --keep-installed keeps (and flags)
installed cables the plan drops instead of refusing. A refused plan exits 1 having written nothing.
"""

from __future__ import annotations

import json

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from cabling.planner import Plan, PlanError, SpecError, load_spec, plan


class Command(BaseCommand):
    help = "Plan switches, port maps, cables, labels and a bill of materials from a cluster spec (YAML)."
    requires_system_checks: list[str] = []  # a dry run touches nothing but the spec file

    def add_arguments(self, parser):
        parser.add_argument("spec", help="path of the YAML cluster spec")
        parser.add_argument("--project", help="code of the project to apply the plan to")
        parser.add_argument("--dry-run", action="store_true", help="plan and check only; no project, no database")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the summary as JSON")
        parser.add_argument("--confirm", action="store_true", help="apply the plan to --project (else: the diff)")
        parser.add_argument(
            "--keep-installed", action="store_true",
            help="keep (flagged) installed cables and switches in place that the plan drops, instead of refusing",
        )

    def handle(self, *args, spec: str, dry_run: bool, as_json: bool, **options):
        if not dry_run:
            if not options.get("project"):
                raise CommandError("give --project CODE to compare or apply the plan, or --dry-run")
            self._against_project(spec, options["project"], confirm=options["confirm"],
                                  keep_installed=options["keep_installed"], as_json=as_json)
            return
        try:
            result = plan(load_spec(spec))
        except (SpecError, PlanError) as exc:
            raise CommandError(f"{spec}: cannot plan:\n" + "\n".join(f"  {e}" for e in exc.errors)) from exc
        if as_json:
            self.stdout.write(json.dumps(result.summary(), indent=2))
        else:
            self.stdout.write(_text(result))

    def _against_project(self, path: str, code: str, *, confirm: bool, keep_installed: bool, as_json: bool):
        from cabling.services import PlanNotApplied, fabric_plan_apply_now, plan_diff, plan_of
        from projects.models import Project

        project = Project.objects.filter(code=code).first()
        if project is None:
            raise CommandError(f"--project: no project with code {code!r}")
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise CommandError(f"{path}: cannot read the spec ({exc.strerror})") from exc
        try:
            if not confirm:
                diff = plan_diff(project=project, plan=plan_of(spec_text=text)).as_dict()
                self.stdout.write(json.dumps(diff, indent=2) if as_json else _diff_text(code, diff, applied=False))
                if diff["errors"]:
                    raise CommandError(f"{path}: the plan cannot be applied to {code}:\n" + _lines(diff["errors"]))
                return
            row, result = fabric_plan_apply_now(project=project, spec_text=text, keep_installed=keep_installed)
        except PlanNotApplied as exc:
            raise CommandError(f"{path}: not applied to {code}, nothing was written:\n" + _lines(exc.messages)) from exc
        except ValidationError as exc:
            raise CommandError(f"{path}: cannot plan:\n" + _lines(exc.messages)) from exc
        diff = result.diff.as_dict()
        self.stdout.write(json.dumps(diff, indent=2) if as_json else _diff_text(code, diff, applied=True))
        if row is not None and not as_json:
            self.stdout.write(f"Recorded as fabric plan {row.pk}.")


def _lines(messages) -> str:
    return "\n".join(f"  {m}" for m in messages)


def _diff_text(code: str, diff: dict, *, applied: bool) -> str:
    counts = diff["counts"]
    if diff["is_empty"] and not counts["cables_blocked"] and not counts["switches_blocked"]:
        return f"{code}: the project already matches the plan; nothing to do."
    verb = "applied" if applied else "would apply (run again with --confirm to apply)"
    lines = [f"{code}: {verb}:"]
    for key, n in counts.items():
        if n:
            lines.append(f"  {key.replace('_', ' '):22} {n:>7}")
    for title, rows in (
        ("added", [c["label"] + "  " + " > ".join(c["ends"]) for c in diff["cables_added"]]),
        ("changed", [c["label"] + "  " + "; ".join(c["changes"]) for c in diff["cables_changed"]]),
        ("removed", [f"{c['label']}  {c['ends']} ({c['status']})" for c in diff["cables_removed"]]),
    ):
        if rows:
            lines.append(f"Cables {title} (first {len(rows)}):")
            lines += [f"  {row}" for row in rows[:20]]
    if diff["blocked"]:
        lines.append("Blocked (installed or in place; --keep-installed keeps them, flagged):")
        lines += [f"  {m}" for m in diff["blocked"]]
    if diff["warnings"]:
        lines.append("Warnings:")
        lines += [f"  {m}" for m in diff["warnings"]]
    if diff["errors"]:
        lines.append("Errors:")
        lines += [f"  {m}" for m in diff["errors"]]
    return "\n".join(lines)


def _text(result: Plan) -> str:
    lines = [f"{result.spec.name}: {len(result.servers)} servers in {len(result.racks)} racks (dry run)"]
    for net in result.networks.values():
        tiers = f"{net.leaves} leaves, {net.spines} spines" + (
            f", {net.super_spines} super-spines" if net.super_spines else ""
        )
        lines.append(
            f"  {net.key}: {net.planes} plane(s), {net.tiers} tiers: {tiers}; {net.links} links, "
            f"{net.cables} cables, {net.optics} optics"
        )
    lines.append(f"  {len(result.cables)} cables in all")
    lines.append("Bill of materials:")
    for line in result.bom:
        planes = ",".join(str(p) for p in line.planes)
        item = f"{line.item} ({line.tier})" if line.tier else line.item
        lines.append(f"  {line.network:8} planes {planes:8} {line.category:7} {item:40} {line.count:>7}")
    return "\n".join(lines)
