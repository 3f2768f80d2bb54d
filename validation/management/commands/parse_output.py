"""`python manage.py parse_output FILE... [--tool auto|nccl|...] [--json]`

Parses saved tool output with validation.parsers (all the logic lives there) and prints either a
JSON list (one object per result found, each with the file it came from under "source") or one
summary line per result. A file that does not parse is reported on stderr with its line number;
the other files are still printed, and the command exits non-zero.
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from validation.parsers import TOOL_CHOICES, ParseError, parse


class Command(BaseCommand):
    help = "Parse saved output of nccl-tests, perftest, mlxlink, ibstat ... and print what was found."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--tool", choices=TOOL_CHOICES, default="auto", help="default: detect it")
        parser.add_argument("--json", action="store_true", help="print a JSON list of results")

    def handle(self, *args, files, tool, json, **options):
        results, failures = [], []
        for name in files:
            try:
                text = Path(name).read_text(encoding="utf-8", errors="replace")
            except OSError as error:
                failures.append(f"{name}: cannot read the file: {error.strerror or error}")
                continue
            try:
                parsed = parse(text, tool, source_name=Path(name).name)
            except ParseError as error:
                failures.append(f"{name}: {error}")
                continue
            results.extend({**result.to_dict(), "source": name} for result in parsed)
        self._print(results, as_json=json)
        for failure in failures:
            self.stderr.write(failure)
        if failures:
            raise CommandError(f"{len(failures)} of {len(files)} file(s) could not be parsed")

    def _print(self, results: list[dict], *, as_json: bool) -> None:
        if as_json:
            self.stdout.write(_dumps(results))
            return
        for result in results:
            self.stdout.write(_summary(result))


def _dumps(results: list[dict]) -> str:
    return json.dumps(results, indent=2, allow_nan=False)


def _summary(result: dict) -> str:
    """One line a person can scan: the tool, what it was about, and whether it looks bad."""
    subject = next(
        (str(result[key]) for key in ("test", "device", "ca", "interface") if result.get(key) is not None),
        "",
    )
    details = []
    for key in ("port", "state", "width", "speed", "avg_busbw_gbps", "link_type", "qps"):
        if result.get(key) is not None:
            details.append(f"{key}={result[key]}")
    for key in ("rows", "nodes", "links", "stages"):
        if key in result:
            details.append(f"{key}={len(result[key])}")
    if result.get("failed"):
        details.append("FAILED")
    return f"{result['source']}: {result['tool']} {subject} {' '.join(details)}".rstrip()
