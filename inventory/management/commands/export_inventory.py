"""python manage.py export_inventory --project CODE [--kind K] --format csv|xlsx -o FILE

The files re-import without edits (same columns as import_inventory)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from inventory.imports.columns import KINDS
from inventory.imports.export import FORMATS, export_csv, export_xlsx
from projects.models import Project


class Command(BaseCommand):
    help = "Export racks, devices, NICs or optics as CSV, or any/all of them as XLSX sheets."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project code, e.g. ACME-72.")
        parser.add_argument("--kind", choices=KINDS, help="One kind; an XLSX without it holds every kind.")
        parser.add_argument("--format", choices=FORMATS, default="csv")
        parser.add_argument("-o", "--output", required=True, help="File to write.")

    def handle(self, *args, project, kind, format, output, **options):
        target = Project.objects.filter(code=project).first()
        if target is None:
            raise CommandError(f'No project with code "{project}".')
        if format == "csv":
            if not kind:
                raise CommandError("A CSV holds one kind: give --kind (or --format xlsx for all of them).")
            data = export_csv(target, kind)
        else:
            data = export_xlsx(target, [kind] if kind else KINDS)
        try:
            Path(output).write_bytes(data)
        except OSError as exc:
            raise CommandError(f"Cannot write {output}: {exc.strerror}") from exc
        self.stdout.write(f"Wrote {output} ({len(data)} bytes).")
