"""Write a project's as-built as NetBox bulk-import files (one CSV per kind of object, in import order, and a
README.txt of that order) into a folder."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from delivery.handover.export import write_directory
from projects.models import Project


class Command(BaseCommand):
    help = ("Write the as-built of a project as NetBox bulk-import CSV files, numbered in import order, with a "
            "README.txt saying where each goes in NetBox.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's code, e.g. ACME-72.")
        parser.add_argument("--out", required=True, help="The folder to write into (created if missing).")

    def handle(self, *args, **options):
        project = Project.objects.filter(code=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with the code {options['project']!r}.")
        folder = Path(options["out"])
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"Cannot create {folder}: {exc.strerror}.") from None
        counts = write_directory(folder, project)
        for name, rows in counts.items():
            self.stdout.write(f"  {name:<28} {rows:>7} rows")
        self.stdout.write(self.style.SUCCESS(f"{project.code}: {len(counts)} files and README.txt in {folder}"))
