"""manage.py build_report --project CODE [--out DIR] [--edition full|summary] [--user USERNAME]

Creates the next version of a project's acceptance report and renders it in this process (not through a
worker): the snapshot, the full PDF, the summary PDF and the Excel workbook, printing the progress and then
each file with its size and SHA-256. With --out, the chosen edition's PDF and the workbook are copied there."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.choices import JobStatus
from delivery.models import FILE_KINDS, FileKind
from delivery.reports.services import report_version_render, report_version_request
from projects.models import Project

EDITIONS = {"full": FileKind.PDF, "summary": FileKind.SUMMARY_PDF}


class Command(BaseCommand):
    help = ("Create the next version of a project's acceptance report and render it here (snapshot, full and "
            "summary PDF, Excel), printing each file's size and SHA-256; --out copies the PDF and the workbook.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project code, e.g. DEMO-72.")
        parser.add_argument("--out", help="A folder to copy the PDF of --edition and the Excel workbook to.")
        parser.add_argument("--edition", choices=sorted(EDITIONS), default="full",
                            help="Which PDF to copy to --out (default: full).")
        parser.add_argument("--user", help="Who asks for it (a manager of the project, or staff); "
                                           "default: nobody, the system.")

    def handle(self, *args, project: str, out: str | None, edition: str, user: str | None, **options):
        found = Project.objects.filter(code=project.strip().upper()).first()
        if found is None:
            raise CommandError(f"No project {project}.")
        requester = self._user(user)
        try:
            version = report_version_request(project=found, user=requester, enqueue=False)
        except (ValidationError, PermissionDenied) as refusal:
            raise CommandError(" ".join(getattr(refusal, "messages", [str(refusal)]))) from None
        self.stdout.write(f"{found.code}: version {version.number} (report {version.report_id}).")
        started = time.perf_counter()
        version = report_version_render(version_id=version.pk, on_progress=self._progress())
        if version.status != JobStatus.DONE:
            raise CommandError(f"Version {version.number} {version.get_status_display().lower()}: "
                               + " ".join(version.errors or []))
        self.stdout.write(f"Rendered in {time.perf_counter() - started:.1f} s.")
        for kind in ("snapshot", *FILE_KINDS):
            if kind == "snapshot" or version.has_file(kind):
                self.stdout.write(f"  {version.file_name(kind):<44} {version.size_of(kind):>12,} bytes  "
                                  f"sha256 {version.sha256_of(kind)}")
        if out:
            self._copy(version, Path(out), EDITIONS[edition])

    def _user(self, username: str | None):
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username}.")
        return user

    def _progress(self):
        """Prints each step once and its progress at most every few seconds."""
        shown = {"step": None, "at": 0.0}

        def report(step: str, done: int, total: int) -> None:
            now = time.monotonic()
            if step == shown["step"] and now - shown["at"] < 5:
                return
            shown["step"], shown["at"] = step, now
            where = f" {done:,} of {total:,}" if total else ""
            self.stdout.write(f"  {step}{where}")

        return report

    def _copy(self, version, folder: Path, pdf_kind: str) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for kind in (pdf_kind, FileKind.XLSX):
            target = folder / version.file_name(kind)
            with version.file_of(kind).open("rb") as source, target.open("wb") as copy:
                shutil.copyfileobj(source, copy, 1024 * 1024)
            self.stdout.write(f"Copied {target}")
