"""Push a project's as-built to a live NetBox: a dry run by default, --apply to write. The API token comes
from an environment variable (never the command line, where `ps` and shell history would show it)."""

import os

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from core.choices import JobStatus
from delivery.handover.services import netbox_push_record, netbox_push_run
from projects.models import Project


class Command(BaseCommand):
    help = ("Compare a project's as-built with a NetBox and list what would be created, updated or left unchanged "
            "(a dry run); with --apply, create and update it. The push is recorded on the project's handover page.")

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True, help="The project's code, e.g. ACME-72.")
        parser.add_argument("--url", required=True, help="NetBox's root address, e.g. https://netbox.example.com.")
        parser.add_argument("--token-env", required=True, metavar="VAR",
                            help="The environment variable holding the API token.")
        parser.add_argument("--apply", action="store_true", help="Write to NetBox (default: a dry run).")

    def handle(self, *args, **options):
        project = Project.objects.filter(code=options["project"]).first()
        if project is None:
            raise CommandError(f"No project with the code {options['project']!r}.")
        token = os.environ.get(options["token_env"], "").strip()
        if not token:
            raise CommandError(f"The environment variable {options['token_env']} holds no API token.")
        try:
            push = netbox_push_record(project=project, url=options["url"], apply=options["apply"])
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        push = netbox_push_run(push_id=push.pk, token=token)
        self._summary(push)
        if push.status != JobStatus.DONE:
            raise CommandError("\n".join(push.errors) or f"The push ended {push.status}.")

    def _summary(self, push) -> None:
        verb = "applied" if push.apply else "dry run"
        self.stdout.write(f"NetBox {push.netbox_url} (API {push.netbox_version or '?'}), {verb}, push {push.pk}:")
        self.stdout.write(f"  {'objects':<26} {'create':>8} {'update':>8} {'unchanged':>10}")
        for step in push.steps:
            self.stdout.write(f"  {step['title']:<26} {step['create']:>8} {step['update']:>8} {step['unchanged']:>10}")
            for label in step["examples"]["create"]:
                self.stdout.write(f"      + {label}")
            for change in step["examples"]["update"]:
                fields = ", ".join(f"{name}: {old!r} -> {new!r}" for name, (old, new) in change["changes"].items())
                self.stdout.write(f"      ~ {change['object']}: {fields}")
