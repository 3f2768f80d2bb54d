"""`manage.py load_catalogue [--file F ...] [--kind KIND]`: load hardware models into the shared catalogue
from device-type YAML files (NetBox community library format, plus our `bringup:` keys). Without --file it
loads the catalogue Bringup ships (inventory/catalogue/data), as `make run` does. A --file may be a folder
(its *.yaml files). All or nothing: one error in any file writes nothing, and the command exits 1 listing
every error by file, line and field. Loading the same files again changes nothing."""

from __future__ import annotations

import time

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from inventory.choices import HardwareKind
from inventory.services import catalogue_files_from_paths, catalogue_load
from inventory.services.catalogue import shipped_catalogue_files


class Command(BaseCommand):
    help = "Create or update hardware models with their NIC and port templates from device-type YAML files."

    def add_arguments(self, parser):
        parser.add_argument(
            "--file", action="append", dest="files", metavar="F",
            help="a device-type YAML file or a folder of them (repeatable); default: the shipped catalogue",
        )
        parser.add_argument(
            "--kind", choices=HardwareKind.values, default="",
            help="the kind of hardware for files that do not say (NetBox files never do)",
        )

    def handle(self, *args, files: list[str] | None, kind: str, **options):
        started = time.perf_counter()
        try:
            uploads = catalogue_files_from_paths(files) if files else shipped_catalogue_files()
            result = catalogue_load(files=uploads, default_kind=kind)
        except ValidationError as exc:
            raise CommandError("nothing was loaded:\n" + "\n".join(f"  {m}" for m in exc.messages)) from exc
        for warning in result.warnings:
            self.stdout.write(f"  note: {warning}")
        elapsed = time.perf_counter() - started
        self.stdout.write(f"Hardware catalogue: {result.summary()} ({len(uploads)} files, {elapsed:.1f} s).")
