"""`manage.py plan_fabric SPEC.yaml [--project CODE] [--dry-run] [--json]`: plan a fabric from a spec.

A dry run plans and checks in memory (no project, no database) and prints the counts, or with --json
a document scripts can check: {"switches": {net: {"leaf", "spine", "super_spine"}}, "links": {net: n},
"planes": {net: n}, "cables": n, ...}. Writing the plan to a project is plan_apply's job (to come).
"""

from __future__ import annotations

import json

from django.core.management.base import BaseCommand, CommandError

from cabling.planner import Plan, PlanError, SpecError, load_spec, plan

NOT_BUILT_EXIT = 2


class Command(BaseCommand):
    help = "Plan switches, port maps, cables, labels and a bill of materials from a cluster spec (YAML)."
    requires_system_checks: list[str] = []  # a dry run touches nothing but the spec file

    def add_arguments(self, parser):
        parser.add_argument("spec", help="path of the YAML cluster spec")
        parser.add_argument("--project", help="code of the project to apply the plan to")
        parser.add_argument("--dry-run", action="store_true", help="plan and check only; write nothing")
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the summary as JSON")

    def handle(self, *args, spec: str, dry_run: bool, as_json: bool, **options):
        if not dry_run:
            raise CommandError("applying needs plan_apply (not built yet); use --dry-run", returncode=NOT_BUILT_EXIT)
        try:
            result = plan(load_spec(spec))
        except (SpecError, PlanError) as exc:
            raise CommandError(f"{spec}: cannot plan:\n" + "\n".join(f"  {e}" for e in exc.errors)) from exc
        if as_json:
            self.stdout.write(json.dumps(result.summary(), indent=2))
        else:
            self.stdout.write(_text(result))


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
