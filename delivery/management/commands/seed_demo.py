import time

from django.core.management.base import BaseCommand

from delivery.demo import build_demo


class Command(BaseCommand):
    help = (
        "Create the demo projects DEMO-72 (the 72-node reference cluster) and LAB-8, with demo users. "
        "Idempotent: only missing rows are created."
    )

    def handle(self, *args, **options):
        started = time.perf_counter()
        result = build_demo()
        elapsed = time.perf_counter() - started
        if result.created:
            made = ", ".join(f"{n} {what}" for what, n in result.created.items())
            self.stdout.write(f"Demo data: created {made} in {elapsed:.1f} s.")
        else:
            self.stdout.write(f"Demo data already complete: nothing to do ({elapsed:.1f} s).")
        self.stdout.write(self.style.SUCCESS("Demo logins:"))
        for login in result.logins:
            password = login.password or "(own password, unchanged)"
            self.stdout.write(f"  {login.username:<15} {password:<20} {login.role} of {login.project}")
