"""python manage.py run_checks --project CODE --kind KIND [--runner simulated|local|ssh] [--wait]

Starts a check run (or re-runs the failed targets of one with --rerun-failed RUN_ID) and, with
--wait, follows it until it finishes, then prints the verdicts and every target that did not pass.
Without a broker the run executes right here (eager mode), so it is finished when the command
returns from starting it.
"""

from __future__ import annotations

import json
import time

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.management.base import BaseCommand, CommandError

from projects.models import Project
from validation import services
from validation.choices import EXECUTING_RUNNERS, ResultStatus, RunnerKind, Verdict
from validation.kinds import STARTABLE_CHECK_KINDS
from validation.models import CheckRun


def _option_pair(text: str) -> tuple[str, object]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise CommandError(f"--option {text!r}: use NAME=VALUE, e.g. --option use_cuda=false")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value  # a bare word, e.g. launcher=srun


class Command(BaseCommand):
    help = "Start a validation check run for a project, optionally waiting for it to finish."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="Project code, e.g. DEMO-72.")
        parser.add_argument(
            "--kind", choices=[k.value for k in STARTABLE_CHECK_KINDS], help="What to check."
        )
        parser.add_argument(
            "--runner", choices=[r.value for r in EXECUTING_RUNNERS], default=RunnerKind.SIMULATED
        )
        parser.add_argument("--seed", type=int, help="Simulated runner: where the faults go.")
        parser.add_argument(
            "--option",
            action="append",
            default=[],
            metavar="NAME=VALUE",
            help="A run option (JSON value), e.g. use_cuda=false, group_size=8, launcher=srun.",
        )
        parser.add_argument("--user", help="Run on behalf of this user (their role must allow it).")
        parser.add_argument(
            "--rerun-failed",
            type=int,
            metavar="RUN_ID",
            help="Re-run only the failed targets of this run instead of starting a new one.",
        )
        parser.add_argument("--wait", action="store_true", help="Follow the run until it finishes.")
        parser.add_argument(
            "--poll", type=float, default=2.0, help="Seconds between progress checks with --wait."
        )
        parser.add_argument(
            "--wait-timeout",
            type=float,
            default=24 * 3600,
            help="Give up waiting after this many seconds (the run itself goes on).",
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(code=opts["project"]).first()
        if project is None:
            raise CommandError(f"No project with code {opts['project']!r}.")
        user = self._user(opts["user"])
        try:
            run = self._start(project, user, opts)
        except (ValidationError, PermissionDenied) as exc:
            raise CommandError(_message(exc)) from exc
        self.stdout.write(
            f"Run #{run.pk}: {run.get_kind_display()} on {project.code}, {run.progress_total} target(s), "
            f"{run.runner} runner"
        )
        if opts["wait"]:
            run = self._follow(run, opts["poll"], opts["wait_timeout"])
        run.refresh_from_db()
        self._summary(run)

    def _user(self, username: str | None):
        if not username:
            return None
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user {username!r}.")
        return user

    def _start(self, project: Project, user, opts) -> CheckRun:
        if opts["rerun_failed"]:
            parent = CheckRun.objects.filter(project=project, pk=opts["rerun_failed"]).first()
            if parent is None:
                raise CommandError(f"No run #{opts['rerun_failed']} in {project.code}.")
            return services.check_run_rerun_failed(run=parent, requested_by=user)
        if not opts["kind"]:
            raise CommandError("Give --kind (or --rerun-failed RUN_ID).")
        options = dict(_option_pair(text) for text in opts["option"])
        if opts["seed"] is not None:
            options["seed"] = opts["seed"]
        return services.check_run_start(
            project=project, kind=opts["kind"], runner=opts["runner"], requested_by=user, options=options
        )

    def _follow(self, run: CheckRun, poll: float, timeout: float) -> CheckRun:
        last = None
        deadline = time.monotonic() + timeout
        while True:
            run.refresh_from_db()
            progress = (run.status, run.progress_done)
            if progress != last:
                self.stdout.write(f"  {run.status}: {run.progress_done}/{run.progress_total}")
                last = progress
            if run.is_finished:
                return run
            if time.monotonic() >= deadline:
                raise CommandError(
                    f"Run #{run.pk} is still {run.status} after {timeout:g} s; it goes on without us."
                )
            time.sleep(poll)

    def _summary(self, run: CheckRun) -> None:
        counts = {v: run.results.filter(verdict=v).count() for v in Verdict.values}
        pending = run.results.filter(status__in=[ResultStatus.PENDING, ResultStatus.RUNNING]).count()
        self.stdout.write(
            f"Status {run.status}: "
            + ", ".join(f"{n} {v}" for v, n in counts.items())
            + (f", {pending} not finished" if pending else "")
        )
        problems = run.results.exclude(verdict__in=["", Verdict.PASS]).order_by("round", "id")
        for result in problems[:50]:
            texts = [r["text"] for r in result.reasons if r.get("level") != Verdict.PASS]
            self.stdout.write(f"  {result.verdict.upper():5} {result.target_key}: {'; '.join(texts[:3])}")
        if problems.count() > 50:
            self.stdout.write(f"  ... and {problems.count() - 50} more")


def _message(exc: Exception) -> str:
    if isinstance(exc, ValidationError) and hasattr(exc, "message_dict"):
        return "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in exc.message_dict.items())
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc)
