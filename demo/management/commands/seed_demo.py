import time

from django.core.management.base import BaseCommand

from demo.build import DEMO_CODE, LAB_CODE, build_demo, demo_report_ensure, demo_report_line
from demo.checks import demo_checks_ensure, demo_topology_ensure
from demo.workflow import demo_delivery_ensure, demo_delivery_line
from projects.models import Project

# The steps a first run prints as "[n/6] ...", each followed by its own progress lines and its time.
STEPS = (
    "the demo data: racks, servers, the fabric, optics, users",
    "DEMO-72's check runs on the simulated cluster",
    "LAB-8's check runs",
    "DEMO-72's fabric compared with the plan",
    "DEMO-72 walked to mid-delivery",
    "DEMO-72's acceptance report",
)


class Command(BaseCommand):
    help = (
        "Create the demo projects DEMO-72 (the 72-node reference cluster) and LAB-8, with demo users, and "
        "run their check runs on the simulated cluster (link health, bandwidth matrix, NCCL), then walk DEMO-72 "
        "to mid-delivery (stages done, one blocked, punch items, a burn-up with history). "
        "Idempotent: only missing rows and runs are created. Prints each step with its progress as it goes."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--no-check-runs", action="store_true",
            help="Build the inventory, fabric and users only; do not run the demo's check runs.",
        )

    def handle(self, *args, **options):
        self._started = time.perf_counter()
        self._steps = 1 if options["no_check_runs"] else len(STEPS)
        self._step(1)
        started = time.perf_counter()
        result = build_demo(say=self._say)
        elapsed = time.perf_counter() - started
        if result.created:
            made = ", ".join(f"{n} {what}" for what, n in result.created.items())
            self.stdout.write(f"Demo data: created {made} in {elapsed:.1f} s.")
        else:
            self.stdout.write(f"Demo data already complete: nothing to do ({elapsed:.1f} s).")
        if not options["no_check_runs"]:
            self._run_checks()
            self._delivery()  # after the runs and the comparison: they are the gates' evidence
            self._report()  # last: the report freezes the runs and the comparison above
        self.stdout.write(f"seed_demo done in {time.perf_counter() - self._started:.1f} s.")
        self.stdout.write(self.style.SUCCESS("Demo logins:"))
        for login in result.logins:
            password = login.password or "(own password, unchanged)"
            self.stdout.write(f"  {login.username:<15} {password:<20} {login.role} of {login.project}")

    def _say(self, line: str) -> None:
        self.stdout.write(line)
        self.stdout.flush()

    def _step(self, number: int) -> None:
        """The step's headline, with the time since the command started."""
        self._say(f"[{number}/{self._steps}] {STEPS[number - 1]} "
                  f"(at {time.perf_counter() - self._started:.0f} s)")

    def _report(self) -> None:
        self._step(6)
        started = time.perf_counter()
        version = demo_report_ensure(Project.objects.get(code=DEMO_CODE))
        if version is not None:
            self.stdout.write(demo_report_line(version, seconds=time.perf_counter() - started))

    def _delivery(self) -> None:
        self._step(5)
        started = time.perf_counter()
        project = Project.objects.get(code=DEMO_CODE)
        walk = demo_delivery_ensure(project)
        if walk is not None:
            self.stdout.write(f"{demo_delivery_line(project, walk)} ({time.perf_counter() - started:.1f} s)")

    def _run_checks(self) -> None:
        for number, code in ((2, DEMO_CODE), (3, LAB_CODE)):
            self._step(number)
            started = time.perf_counter()
            runs = demo_checks_ensure(Project.objects.get(code=code), say=self._say)
            if runs:
                kinds = ", ".join(run.get_kind_display() for run in runs)
                self.stdout.write(f"{code}: ran {kinds} in {time.perf_counter() - started:.1f} s.")
        # After the link checks, as on a site: the fabric is compared once the links are up.
        self._step(4)
        started = time.perf_counter()
        comparison = demo_topology_ensure(Project.objects.get(code=DEMO_CODE), say=self._say)
        if comparison is not None:
            counts = comparison.counts or {}
            found = ", ".join(f"{counts.get(state, 0)} {state}" for state in ("miswired", "missing", "degraded"))
            self.stdout.write(f"{DEMO_CODE}: compared the fabric with the plan (comparison #{comparison.pk}: "
                              f"{counts.get('ok', 0)} ok, {found}) in {time.perf_counter() - started:.1f} s.")
