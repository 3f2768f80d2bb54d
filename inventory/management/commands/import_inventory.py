"""python manage.py import_inventory FILE --project CODE [--dry-run] [--kind racks|devices|nics|optics]

Checks every row first; one bad row imports nothing. The columns are documented in
inventory/imports/columns.py."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from inventory.imports.columns import KINDS
from inventory.imports.services import inventory_import
from projects.models import Project


class Command(BaseCommand):
    help = "Import racks, devices, NICs and optics from a CSV or XLSX file, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file", help="A .csv (one kind) or .xlsx (sheets racks, devices, nics, optics).")
        parser.add_argument("--project", required=True, help="Project code, e.g. ACME-72.")
        parser.add_argument("--kind", choices=KINDS, help="What a CSV holds, when its header does not tell.")
        parser.add_argument("--dry-run", action="store_true", help="Check and report; write nothing.")

    def handle(self, *args, file, project, kind, dry_run, **options):
        target = Project.objects.filter(code=project).first()
        if target is None:
            raise CommandError(f'No project with code "{project}".')
        path = Path(file)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CommandError(f"Cannot read {file}: {exc.strerror}") from exc
        result = inventory_import(project=target, filename=path.name, data=data, kind=kind, dry_run=dry_run)
        if not result.ok:
            for issue in result.issues:
                self.stderr.write(str(issue))
            raise CommandError(f"{len(result.issues)} error(s) in {path.name}; nothing was imported.")
        verb = ("would be " if dry_run else "") + "created"
        for kind_name, counts in result.counts().items():
            self.stdout.write(
                f"{kind_name}: {counts['created']} {verb}, {counts['updated']} "
                f"{'would be ' if dry_run else ''}updated, {counts['unchanged']} unchanged"
            )
        if result.plan.new_sites:
            self.stdout.write(f"new sites: {', '.join(result.plan.new_sites)}")
        if dry_run:
            self.stdout.write("Dry run: nothing was written.")
