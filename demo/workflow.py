"""DEMO-72 mid-delivery: what `manage.py seed_demo` does after the demo's check runs and topology comparison,
so that a manager who logs in right after `make run` finds a delivery under way rather than nine stages
not started.

The demo manager walks the first stages through the workflow services, as the stages pages would:

- site readiness is started and completed under a waiver naming rack B09 (the demo's rack short of power
  headroom on purpose: the customer accepted it until B09's second feed is in);
- racking is started, the technician confirms every device in its rack (inventory.services.device_rack,
  what a racking scan calls), and the stage completes on a passing gate;
- cabling is started and stays blocked: the demo's topology comparison found miswires, a missing and a
  degraded link, so the gate lists those cables and the comparison. Starting cabling queues a comparison of
  its own (the stage's work); the demo cancels it through validation's service, because the seeded one above
  is the evidence and a second comparison would cost as long again (stage_start takes no run options, so it
  cannot ask for the demo's seed).

The punch list is the existing sync's (gates_recompute_run, the recompute task's body, run here and now as
the demo's check runs are): one item per planted fault. The manager adds two items by hand, one internal and
one the customer sees, and assigns the miswires to the technician with due dates.

Demo-only backdating (the one write around the services, documented here): a delivery takes weeks, the demo
is built in a minute. device_rack takes the moment of the racking, so the devices are racked over the project's
first three days through the service itself. What no service dates is moved into the past afterwards by plain
UPDATEs, consistently and deterministically (relative to today): the stages' starts and completions, the site
waiver, the manual punch items' opening, and the cables' verification, spread evenly over the HISTORY_DAYS
days since cabling started, oldest labels first, so the dashboard's burn-up has a slope and a forecast. Most
cables are verified by the fabric's word (the comparison saw them ok; the burn-up reads `fabric_verified_at`
for those, which a later comparison keeps, not `fabric_checked_at`, which it moves); the three of gpu-001 by
the technician's scans (their `verified_at`, the scans' times and the ends' confirmations move together).
History rows keep the moment they were written.

Idempotent: nothing happens once site readiness has left "not started" (a second seed_demo walks nothing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, time, timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cabling.choices import CableStatus
from cabling.models import Cable, CableEnd, ScanEvent
from delivery.choices import PunchObjectKind, PunchSeverity, PunchSource, StageStatus
from delivery.models import PunchItem, Stage, Waiver
from delivery.punch.services import punch_item_open, punch_item_update
from delivery.stages.services import gates_recompute_run, stage_complete, stage_start, waiver_record
from demo.build import FLOOR_TECHNICIAN, OVER_BUDGET_RACK, REPORT_MANAGER
from inventory.models import Device, Rack
from inventory.services import device_rack
from projects.gates import ref_of
from projects.models import Project
from validation.models import CheckRun
from validation.services import check_run_cancel

MANAGER, TECHNICIAN = REPORT_MANAGER, FLOOR_TECHNICIAN  # the demo's manager and technician walk it
DONE_STAGES = ("site_readiness", "racking")
BLOCKED_STAGE = "cabling"
HISTORY_DAYS = 18  # the cables' verification is spread over this many days before today, since cabling started
SITE_WAIVER_REASON = (
    f"{OVER_BUDGET_RACK} runs on its 66 kW feed until the facility adds the second 75 kW feed (scheduled for "
    f"week 6). The customer accepted 12% headroom for {OVER_BUDGET_RACK} meanwhile; its four nodes stay under "
    "the power cap."
)

# Days before today when each step happened (the backdating); the project started 21 days ago (demo.py).
RACKED_DAYS_AGO = (21, 19)  # the devices were confirmed in their racks over the first three days
SITE_DONE_DAYS_AGO = 20
RACKING_DONE_DAYS_AGO = HISTORY_DAYS
CABLING_STARTED_DAYS_AGO = HISTORY_DAYS  # in the morning; the first cables were verified that afternoon
MANUAL_ITEMS_DAYS_AGO = 3


@dataclass(frozen=True)
class ManualItem:
    title: str
    severity: str
    assignee: str
    due_in_days: int
    customer_visible: bool
    description: str
    object_kind: str = ""
    object_label: str = ""


MANUAL_ITEMS = (
    ManualItem("Replace the bent rail kit under gpu-069", PunchSeverity.MINOR, TECHNICIAN, 4, False,
               "Noticed while confirming its rack: the rail holds, but the kit is bent. Internal: the spare kit is "
               "in the cage.", PunchObjectKind.DEVICE, "gpu-069"),
    ManualItem(f"Second power feed for rack {OVER_BUDGET_RACK}", PunchSeverity.MAJOR, MANAGER, 24, True,
               f"{OVER_BUDGET_RACK} runs on one 66 kW feed (12% headroom) until the facility installs the second "
               "75 kW feed; site readiness was completed under a waiver for it.", "", OVER_BUDGET_RACK),
)
MISWIRE_DUE_IN_DAYS = 2  # the miswires are the technician's, due before the cabling target


@dataclass
class DeliveryWalk:
    """What the walk did, for seed_demo to print."""

    done: list[str] = field(default_factory=list)
    blocked: str = ""
    waivers: int = 0
    punch_items: int = 0


def _at(days_ago: int, hour: int = 10, minute: int = 0) -> datetime:
    """A moment `days_ago` days before today, in working hours of the local time zone."""
    day = timezone.localdate() - timedelta(days=days_ago)
    return timezone.make_aware(datetime.combine(day, time(hour, minute)))


def _stage(project: Project, key: str) -> Stage:
    return Stage.objects.select_related("project").get(project=project, key=key)


def already_walked(project: Project) -> bool:
    return Stage.objects.filter(project=project, key=DONE_STAGES[0]).exclude(status=StageStatus.NOT_STARTED).exists()


def _rack_every_device(project: Project, technician) -> int:
    """The technician confirms every device not yet confirmed in its planned place (device_rack, what the
    racking scan calls), over the project's first three days, rack by rack."""
    devices = list(Device.objects.filter(project=project, racked_at=None, rack__isnull=False)
                   .select_related("rack").order_by("rack__name", "position_u", "name"))
    racks = {rack.pk: rack for rack in Rack.objects.filter(project=project)}
    first, last = RACKED_DAYS_AGO
    for index, device in enumerate(devices):
        days_ago = first - (index * (first - last + 1)) // max(len(devices), 1)
        device_rack(device=device, rack=racks[device.rack_id], position_u=device.position_u, user=technician,
                    at=_at(days_ago, hour=9 + index % 8, minute=index % 60))
    return len(devices)


def _walk_stages(project: Project, manager, walk: DeliveryWalk) -> None:
    site = stage_start(stage=_stage(project, "site_readiness"), user=manager)
    short = Rack.objects.get(project=project, name=OVER_BUDGET_RACK)
    waiver_record(stage=site, user=manager, reason=SITE_WAIVER_REASON, items=[ref_of(short)])
    walk.waivers += 1
    stage_complete(stage=site, user=manager)
    racking = stage_start(stage=_stage(project, "racking"), user=manager)
    stage_complete(stage=racking, user=manager)
    walk.done = [site.title, racking.title]
    cabling = stage_start(stage=_stage(project, BLOCKED_STAGE), user=manager)
    for run in CheckRun.objects.filter(pk__in=[pk for _, pk in cabling.jobs]):
        check_run_cancel(run=run, user=manager)  # the seeded comparison is the evidence (module docstring)
    walk.blocked = cabling.title


def _punch_items(project: Project, manager, technician, walk: DeliveryWalk) -> None:
    users = {MANAGER: manager, TECHNICIAN: technician}
    today = timezone.localdate()
    devices = dict(Device.objects.filter(project=project, name__in=[i.object_label for i in MANUAL_ITEMS])
                   .values_list("name", "pk"))
    for item in MANUAL_ITEMS:
        object_id = devices.get(item.object_label) if item.object_kind else None
        punch_item_open(project=project, user=manager, title=item.title, severity=item.severity,
                        description=item.description, object_kind=item.object_kind if object_id else "",
                        object_id=object_id, object_label=item.object_label, assignee=users[item.assignee],
                        due_date=today + timedelta(days=item.due_in_days), customer_visible=item.customer_visible)
        walk.punch_items += 1
    miswires = PunchItem.objects.filter(project=project, source=PunchSource.TOPOLOGY).order_by("id")
    for item in miswires:
        punch_item_update(item=item, user=manager, title=item.title, severity=item.severity,
                          description=item.description, assignee=technician,
                          due_date=today + timedelta(days=MISWIRE_DUE_IN_DAYS))


# --- demo-only backdating ------------------------------------------------------------------------------


def verified_day_of(index: int, count: int) -> int:
    """Days before today the `index`-th of `count` cables (in label order) was verified: spread evenly
    over HISTORY_DAYS, the oldest labels first, none today (today's comparison confirmed them)."""
    return HISTORY_DAYS - (index * HISTORY_DAYS) // max(count, 1)


def _backdate_cables(project: Project) -> None:
    verified = list(Cable.objects.filter(project=project, status=CableStatus.VERIFIED).order_by("label")
                    .values_list("pk", flat=True))
    by_day: dict[int, list[int]] = {}
    for index, pk in enumerate(verified):
        by_day.setdefault(verified_day_of(index, len(verified)), []).append(pk)
    for days_ago, ids in by_day.items():
        moment = _at(days_ago, hour=16)
        Cable.objects.filter(pk__in=ids, verified_at=None).update(fabric_verified_at=moment)
        scanned = Cable.objects.filter(pk__in=ids, verified_at__isnull=False)
        CableEnd.objects.filter(cable__in=scanned).update(confirmed_at=moment)
        ScanEvent.objects.filter(project=project, cable__in=scanned).update(scanned_at=moment)
        scanned.update(verified_at=moment)


def _backdate_stages(project: Project) -> None:
    stages = Stage.objects.filter(project=project)
    stages.filter(key="site_readiness").update(started_at=_at(RACKED_DAYS_AGO[0], 8),
                                               completed_at=_at(SITE_DONE_DAYS_AGO, 17))
    Waiver.objects.filter(stage__project=project, stage__key="site_readiness").update(
        recorded_at=_at(SITE_DONE_DAYS_AGO, 16))
    stages.filter(key="racking").update(started_at=_at(RACKED_DAYS_AGO[0], 8),
                                        completed_at=_at(RACKING_DONE_DAYS_AGO, 8))
    stages.filter(key=BLOCKED_STAGE).update(started_at=_at(CABLING_STARTED_DAYS_AGO, 9))
    PunchItem.objects.filter(project=project, source=PunchSource.MANUAL).update(
        opened_at=_at(MANUAL_ITEMS_DAYS_AGO, 11))


@transaction.atomic
def demo_delivery_ensure(project: Project) -> DeliveryWalk | None:
    """Walk DEMO-72 to mid-delivery (module docstring); None when it was walked already."""
    if already_walked(project):
        return None
    User = get_user_model()
    manager, technician = User.objects.get(username=MANAGER), User.objects.get(username=TECHNICIAN)
    walk = DeliveryWalk()
    _rack_every_device(project, technician)
    # The gates as the evidence stands, and the punch list's sync: the recompute task's body, run here as the
    # demo's check runs are (a seed inside a transaction, as on the PostgreSQL tests, sends no task).
    gates_recompute_run(project_id=project.pk)
    _walk_stages(project, manager, walk)
    _punch_items(project, manager, technician, walk)
    walk.punch_items = PunchItem.objects.filter(project=project).count()
    _backdate_cables(project)
    _backdate_stages(project)
    return walk


def demo_delivery_line(project: Project, walk: DeliveryWalk) -> str:
    """What seed_demo prints about the walk."""
    blocked = Stage.objects.get(project=project, key=BLOCKED_STAGE)
    return (f"{project.code}: mid-delivery: {', '.join(walk.done)} done ({walk.waivers} waiver); {walk.blocked} "
            f"blocked ({blocked.gate_summary}); {walk.punch_items} punch items: /p/{project.code}/dashboard/")


def blocked_stages(project: Project):
    """The stages a manager sees blocked: waiting for a reopened dependency, or started with a failing gate."""
    return Stage.objects.filter(project=project).filter(
        Q(status=StageStatus.BLOCKED) | Q(status=StageStatus.IN_PROGRESS, gate_passed=False))
