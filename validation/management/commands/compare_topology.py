"""`python manage.py compare_topology --project CODE [HOST=]FILE... [--json]`

Compares the fabric as the tools saw it (iblinkinfo, ibnetdiscover, lldpcli show neighbors in text, JSON
or keyvalue, nv show interface lldp) with the project's plan, link by link, and keeps the comparison (its
files, counts and faults) like the upload page does; the cables it saw move as the comparison says.

An LLDP table is a switch's (or host's) own view: say whose with HOST=FILE, or name the file after the
device (stor-leaf-01.json), or keep the shell prompt in the capture. `--json` prints the counts per state
and every link that is not ok, with its planned and observed ends, its cable label and the advice. A file
that could not be read is named on stderr with the line where parsing stopped; the others are compared.
The command fails (non-zero) when nothing could be compared.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.choices import JobStatus
from projects.models import Project
from validation.choices import LinkState, TopologySource
from validation.topology.reading import split_host_argument
from validation.topology.selectors import comparison_json
from validation.topology.services import TopologyInput, max_file_bytes, topology_compare_now


class Command(BaseCommand):
    help = "Compare iblinkinfo / ibnetdiscover / lldpcli / NVUE LLDP outputs with the project's cabling plan."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="[HOST=]FILE",
                            help="a tool output; HOST= names the device an LLDP table was read on")
        parser.add_argument("--project", required=True, help="project code, e.g. DEMO-72")
        parser.add_argument("--json", action="store_true", help="print the counts and the faulty links as JSON")
        parser.add_argument("--user", help="record the comparison as this user's (default: the system)")

    def handle(self, *args, files, project, json: bool, user=None, **options):
        found = Project.objects.filter(code=project).first()
        if found is None:
            raise CommandError(f"No project {project!r}.")
        requested_by = None
        if user:
            requested_by = get_user_model().objects.filter(username=user).first()
            if requested_by is None:
                raise CommandError(f"No user {user!r}.")
        inputs = []
        for argument in files:
            host, name = split_host_argument(argument)
            data = _read_bounded(name)
            inputs.append(TopologyInput(name=Path(name).name, data=data, host=host))
        try:
            comparison = topology_compare_now(project=found, user=requested_by, inputs=inputs,
                                              source=TopologySource.COMMAND)
        except ValidationError as error:
            raise CommandError(" ".join(error.messages)) from None
        for row in comparison.files.order_by("id"):
            if row.error:
                self.stderr.write(f"{row.original_name}: {row.error}")
        links = list(comparison.links.order_by("id"))
        if json:
            self.stdout.write(_dumps(comparison_json(comparison, links)))
        else:
            self._summary(comparison, links)
        if comparison.status != JobStatus.DONE:
            raise CommandError("; ".join(comparison.errors or ["the comparison failed"]))

    def _summary(self, comparison, links) -> None:
        counts = comparison.counts or {}
        self.stdout.write(
            f"Topology comparison #{comparison.pk} of {comparison.project.code}: "
            + ", ".join(f"{counts.get(state, 0)} {state}" for state in LinkState.values)
            + f" ({counts.get('in_scope', 0)} planned links in scope, {counts.get('observed', 0)} seen)"
        )
        for link in links:
            if link.state == LinkState.OK:
                continue
            planned = f"{link.planned_a} - {link.planned_b}" if link.planned_a else "not planned"
            observed = f"{link.observed_a} - {link.observed_b}" if link.observed_a else "not seen"
            self.stdout.write(f"  {link.state:<9} {link.cable_label or '-':<10} planned {planned}; seen {observed}")
            self.stdout.write(f"            {link.advice}")
        for note in comparison.notes or []:
            self.stdout.write(f"  note: {note}")


def _dumps(data: dict) -> str:
    return json.dumps(data, indent=2, allow_nan=False)


def _read_bounded(name: str) -> bytes:
    """The file's bytes, refused once past the per-file limit without reading further (a 10 GB file or
    /dev/zero costs one chunk over the limit, not the machine's memory)."""
    limit = max_file_bytes()
    try:
        with open(name, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as error:
        raise CommandError(f"{name}: cannot read the file: {error.strerror or error}") from None
    if len(data) > limit:
        raise CommandError(f"{name}: larger than {limit:,} bytes (TOPOLOGY_MAX_FILE_BYTES); nothing was compared.")
    return data
