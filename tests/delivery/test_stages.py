"""Stages driven by their gates: a small project walked through every stage through the real services (scans,
check runs on the simulated cluster, checklist, waivers), a regression that reopens the right stages and
sends one email, the recompute queued on commit by a scan, and the pages as every kind of person."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from cabling.choices import CableStatus, ScanAction, ScanSource
from cabling.codes import cable_end_code
from cabling.models import Cable
from cabling.services import cable_status_set, scan_record
from delivery.choices import StageStatus
from delivery.models import GateRecompute, Stage, StageTemplate, Waiver
from delivery.stages.data import DEFAULT_STAGES
from delivery.stages.services import (
    checklist_item_confirm,
    gates_recompute,
    stage_complete,
    stage_skip,
    stage_start,
    stages_create_from_template,
    waiver_record,
)
from projects.gates import gates
from tests.factories import UserFactory
from tests.support import count_queries

from .stages_world import build_world

pytestmark = pytest.mark.django_db


def stage(project, key) -> Stage:
    return Stage.objects.get(project=project, key=key)


def refs(stage_row) -> list[str]:
    return [item["ref"] for item in stage_row.gate_missing]


def scan_rack(project, user, device):
    return scan_record(user=user, project=project, action=ScanAction.RACK, code=device.name,
                       rack=device.rack.name, position_u=device.position_u, source=ScanSource.PAGE)


def scan_cable(project, user, cable):
    for end in cable.ends.select_related("port__device").order_by("side", "position"):
        scan_record(user=user, project=project, action=ScanAction.CABLE_END,
                    code=cable_end_code(cable.label, end.side, end.position, b_ends=1),
                    port_code=f"{end.port.device.name}:{end.port.name}", source=ScanSource.PAGE)


@pytest.fixture
def world(project, manager, technician, customer):
    manager.email = "mgr@example.com"
    manager.save()
    return build_world(project)


# --- the default template and the registry ------------------------------------------------------------


def test_the_default_template_is_data_with_the_nine_stages_and_registered_gates(world):
    template = StageTemplate.objects.get()  # loaded by delivery's migrations
    assert [s["key"] for s in template.stages] == [s["key"] for s in DEFAULT_STAGES]
    assert len(template.stages) == 9
    for spec in template.stages:
        assert spec["gate"] == "checklist" or spec["gate"] in gates, spec
    assert list(Stage.objects.filter(project=world.project).values_list("key", flat=True)) == [
        s["key"] for s in DEFAULT_STAGES]
    assert stages_create_from_template(project=world.project) == []  # a second application writes nothing


def test_a_template_with_a_cycle_or_an_unknown_gate_is_refused(world):
    bad = StageTemplate(name="Bad", stages=[
        {"key": "a", "title": "A", "gate": "inventory.racking", "depends_on": ["b"]},
        {"key": "b", "title": "B", "gate": "no.such.gate"},
    ])
    with pytest.raises(ValidationError) as refused:
        bad.full_clean()
    text = " ".join(refused.value.messages)
    assert "Stage 1 (a): depends_on" in text and "Stage 2 (b): unknown gate 'no.such.gate'" in text


# --- the walk -------------------------------------------------------------------------------------------


def test_a_project_walks_through_every_stage(world, manager, technician, client_for,
                                             django_capture_on_commit_callbacks):
    project = world.project
    gates_recompute(project=project)

    # Site readiness: the racks keep their headroom.
    assert stage(project, "site_readiness").gate_passed
    stage_complete(stage=stage(project, "site_readiness"), user=manager)
    done = stage(project, "site_readiness")  # completed without a start: it started when it was done
    assert done.started_at == done.completed_at and done.started_by == manager

    # Racking: refused, naming every device not confirmed by a scan, until a technician scans them.
    racking = stage_start(stage=stage(project, "racking"), user=manager)
    assert racking.jobs == []  # racking starts no work: it happens on the floor
    with pytest.raises(ValidationError) as refused:
        stage_complete(stage=racking, user=manager)
    assert all(name in refused.value.messages[0] for name in ("gpu-001", "gpu-002", "leaf-01"))
    assert stage(project, "racking").gate_missing_count == 3
    for device in world.devices:
        with django_capture_on_commit_callbacks(execute=True):  # the recompute runs when the scan commits
            scan_rack(project, technician, device)
    assert stage(project, "racking").gate_passed
    stage_complete(stage=stage(project, "racking"), user=manager)

    # Cabling: starting it compares the simulated fabric with the plan; scans verify both cables; the
    # comparison's planted miswires stay, and a waiver of that one item lets the stage complete.
    with django_capture_on_commit_callbacks(execute=True):
        cabling = stage_start(stage=stage(project, "cabling"), user=manager)
    assert [job_type for job_type, _ in cabling.jobs] == ["validation.checkrun"]
    for cable in (world.c1, world.c2):
        with django_capture_on_commit_callbacks(execute=True):
            scan_cable(project, technician, cable)
    assert set(Cable.objects.filter(project=project).values_list("status", flat=True)) == {CableStatus.VERIFIED}
    cabling = stage(project, "cabling")
    assert not cabling.gate_passed and [r.split(":")[0] for r in refs(cabling)] == ["validation.topologycomparison"]
    with pytest.raises(ValidationError, match="Topology comparison"):
        stage_complete(stage=cabling, user=manager)
    with django_capture_on_commit_callbacks(execute=True):
        waiver = waiver_record(stage=cabling, user=manager, items=refs(cabling),
                               reason="Miswires of the simulated fabric; the customer re-checks on site.")
    stage_complete(stage=stage(project, "cabling"), user=manager)
    assert stage(project, "cabling").status == StageStatus.DONE
    assert waiver.recorded_by == manager and waiver.items == refs(cabling)

    # OS and drivers: no pins, no pass; pin what the nodes run, then the stage's check shows it.
    assert refs(stage(project, "os_drivers")) == ["gate:no-pinned-versions"]
    from validation.choices import CheckKind
    from validation.models import CheckResult
    from validation.services import acceptance_profile_update, check_run_start

    with django_capture_on_commit_callbacks(execute=True):
        probe = check_run_start(project=project, kind=CheckKind.NODE_INVENTORY, requested_by=manager)
    versions = CheckResult.objects.filter(run=probe).first().metrics["versions"]
    acceptance_profile_update(project=project, user=manager, pinned_versions=versions)
    with django_capture_on_commit_callbacks(execute=True):
        stage_start(stage=stage(project, "os_drivers"), user=manager)
    assert stage(project, "os_drivers").gate_passed, stage(project, "os_drivers").gate_missing
    stage_complete(stage=stage(project, "os_drivers"), user=manager)

    # Network configuration: a checklist technicians confirm (with who and when), through the page.
    network = stage_start(stage=stage(project, "network_config"), user=manager)
    client = client_for(technician)
    for item in network.checklist.all():
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(reverse("stages:checklist-confirm", args=[project.code, "network_config", item.pk]))
        assert response.status_code == 302
    assert network.checklist.filter(confirmed_by=technician, confirmed_at__isnull=False).count() == 6
    assert stage(project, "network_config").gate_passed
    stage_complete(stage=stage(project, "network_config"), user=manager)

    # Link checks, benchmarks: each start runs its checks; the gate lists what the results say.
    for key in ("link_checks", "benchmarks"):
        with django_capture_on_commit_callbacks(execute=True):
            started = stage_start(stage=stage(project, key), user=manager)
        assert started.jobs
        current = stage(project, key)
        assert current.gate_computed_at is not None
        if not current.gate_passed:
            with django_capture_on_commit_callbacks(execute=True):
                waiver_record(stage=current, user=manager, all_items=True, reason="Simulated faults, accepted.")
        stage_complete(stage=stage(project, key), user=manager)

    # Soak: its start opens the window; the gate says it is open; a manager skips it with a reason.
    with django_capture_on_commit_callbacks(execute=True):
        soak = stage_start(stage=stage(project, "soak"), user=manager)
    assert stage(project, "soak").gate_missing[0]["reason"].startswith("Open until")
    assert soak.jobs and soak.jobs[0][0] == "validation.checkrun"
    with pytest.raises(ValidationError):
        stage_skip(stage=soak, user=manager, reason="  ")
    stage_skip(stage=soak, user=manager, reason="The customer runs the 72 h soak on their own training job.")

    # Acceptance: no report exists yet, so it completes with a waiver only.
    acceptance = stage(project, "acceptance")
    gates_recompute(project=project)
    with pytest.raises(ValidationError, match="Acceptance report"):
        stage_complete(stage=stage(project, "acceptance"), user=manager)
    waiver_record(stage=stage(project, "acceptance"), user=manager, all_items=True, reason="Signed on paper.")
    stage_complete(stage=acceptance, user=manager)

    statuses = dict(Stage.objects.filter(project=project).values_list("key", "status"))
    assert statuses == {**{s["key"]: StageStatus.DONE for s in DEFAULT_STAGES}, "soak": StageStatus.SKIPPED}
    assert Waiver.objects.filter(stage__project=project).count() >= 2


def test_a_stage_cannot_start_before_its_dependencies(world, manager):
    with pytest.raises(ValidationError, match="Racking cannot start before Site readiness"):
        stage_start(stage=stage(world.project, "racking"), user=manager)


def test_only_managers_start_complete_skip_and_waive(world, technician, customer):
    for person in (technician, customer):
        with pytest.raises(PermissionDenied):
            stage_start(stage=stage(world.project, "site_readiness"), user=person)
        with pytest.raises(PermissionDenied):
            stage_skip(stage=stage(world.project, "site_readiness"), user=person, reason="x")
    item = stage(world.project, "network_config").checklist.first()
    with pytest.raises(PermissionDenied):
        checklist_item_confirm(item=item, user=customer)
    checklist_item_confirm(item=item, user=technician)
    with pytest.raises(ValidationError, match="already confirmed by tech"):
        checklist_item_confirm(item=item, user=technician)


def test_a_waiver_must_name_missing_items_and_a_reason(world, manager):
    gates_recompute(project=world.project)
    stage_complete(stage=stage(world.project, "site_readiness"), user=manager)
    racking = stage(world.project, "racking")
    with pytest.raises(ValidationError) as refused:
        waiver_record(stage=racking, user=manager, items=["inventory.device:999999"], reason="")
    assert set(refused.value.message_dict) == {"reason", "items"}
    waiver_record(stage=racking, user=manager, items=refs(racking)[:1], reason="Racked by the customer's staff.")
    with pytest.raises(ValidationError, match="gpu-002"):  # one of three waived: the others still refuse
        stage_complete(stage=stage(world.project, "racking"), user=manager)


# --- regression -------------------------------------------------------------------------------------------


def _walk_to_link_checks(world, manager, technician, capture):
    """Site readiness, racking and cabling done on their gates (the cables verified by scan, the comparison's
    miswires waived), and link checks in progress."""
    project = world.project
    gates_recompute(project=project)
    stage_complete(stage=stage(project, "site_readiness"), user=manager)
    stage_start(stage=stage(project, "racking"), user=manager)
    for device in world.devices:
        scan_rack(project, technician, device)
    for cable in (world.c1, world.c2):
        scan_cable(project, technician, cable)
    gates_recompute(project=project)
    stage_complete(stage=stage(project, "racking"), user=manager)
    stage_skip(stage=stage(project, "os_drivers"), user=manager, reason="Nodes imaged by the customer.")
    for key in ("cabling", "network_config"):
        Stage.objects.filter(project=project, key=key).update(status=StageStatus.IN_PROGRESS)
    # A clean comparison is evidence of its own: waive the "no comparison yet" item instead of faking one.
    gates_recompute(project=project)
    waiver_record(stage=stage(project, "cabling"), user=manager, items=["gate:no-topology-comparison"],
                  reason="Compared by the customer's own tools.")
    stage_complete(stage=stage(project, "cabling"), user=manager)
    stage_skip(stage=stage(project, "network_config"), user=manager, reason="Configured by the customer.")
    Stage.objects.filter(project=project, key="link_checks").update(status=StageStatus.IN_PROGRESS)


def test_a_verified_cable_marked_faulty_reopens_cabling_blocks_what_depends_on_it_and_mails_once(
    world, manager, technician, django_capture_on_commit_callbacks
):
    project = world.project
    _walk_to_link_checks(world, manager, technician, django_capture_on_commit_callbacks)
    assert stage(project, "cabling").status == StageStatus.DONE
    mail.outbox.clear()

    with django_capture_on_commit_callbacks(execute=True):
        cable_status_set(cables=[world.c1], status=CableStatus.FAULTY, user=technician, reason="Bent past its radius")

    cabling = stage(project, "cabling")
    assert cabling.status == StageStatus.IN_PROGRESS
    assert "C00001" in [item["label"] for item in cabling.gate_missing]
    assert cabling.status_reason.startswith("Reopened") and "1 of 2 cables not verified" in cabling.status_reason
    link_checks = stage(project, "link_checks")
    assert link_checks.status == StageStatus.BLOCKED and "Waits for Cabling" in link_checks.status_reason
    # Not reopened: what does not depend on cabling, and what was never started.
    assert stage(project, "racking").status == StageStatus.DONE
    assert stage(project, "os_drivers").status == StageStatus.SKIPPED
    assert stage(project, "benchmarks").status == StageStatus.NOT_STARTED
    assert len(mail.outbox) == 1
    assert mail.outbox[0].bcc == ["mgr@example.com"] and "Cabling" in mail.outbox[0].subject
    assert "C00001" in mail.outbox[0].body and "Link checks" in mail.outbox[0].body
    assert cabling.history.first().history_change_reason == "gate regressed"

    gates_recompute(project=project)  # again: nothing new regresses, no second email
    assert len(mail.outbox) == 1

    # Fixed and scanned again: cabling completes, and link checks picks up where it was.
    Cable.objects.filter(pk=world.c1.pk).update(status=CableStatus.INSTALLED)
    world.c1.ends.update(confirmed_at=None, confirmed_by=None)
    with django_capture_on_commit_callbacks(execute=True):
        scan_cable(project, technician, world.c1)
    stage_complete(stage=stage(project, "cabling"), user=manager)
    assert stage(project, "link_checks").status == StageStatus.IN_PROGRESS


def test_a_stage_done_under_a_waiver_does_not_regress_on_the_items_it_waived(world, manager):
    project = world.project
    gates_recompute(project=project)
    stage_complete(stage=stage(project, "site_readiness"), user=manager)
    racking = stage(project, "racking")
    waiver_record(stage=racking, user=manager, all_items=True, reason="Racked before the scanners arrived.")
    stage_complete(stage=stage(project, "racking"), user=manager)
    assert gates_recompute(project=project) == []
    assert stage(project, "racking").status == StageStatus.DONE


def test_a_waiver_of_all_items_does_not_cover_a_new_fault_in_place_of_a_fixed_one(world, manager, technician):
    from inventory.choices import DeviceRole
    from inventory.services import device_create

    project = world.project
    gates_recompute(project=project)
    stage_complete(stage=stage(project, "site_readiness"), user=manager)
    waiver_record(stage=stage(project, "racking"), user=manager, all_items=True, reason="Scanners arrive Monday.")
    stage_complete(stage=stage(project, "racking"), user=manager)
    scan_rack(project, technician, world.gpu1)  # one waived device fixed, and a new one not confirmed: 3 again
    device_create(project=project, hardware_model=world.leaf.hardware_model, name="leaf-02",
                  rack=world.network_rack, position_u=5, role=DeviceRole.LEAF)
    regressed = gates_recompute(project=project)
    racking = stage(project, "racking")
    assert racking.gate_missing_count == 3
    assert [s.key for s in regressed] == ["racking"]
    assert racking.status == StageStatus.IN_PROGRESS and racking.status_reason.startswith("Reopened")
    assert "leaf-02" in [item["label"] for item in racking.gate_missing]


# --- recompute on evidence, debounced ----------------------------------------------------------------------


def test_a_verifying_scan_recomputes_the_gates_on_commit_and_a_queued_recompute_is_not_queued_twice(
    world, technician, django_capture_on_commit_callbacks
):
    project = world.project
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        scan_cable(project, technician, world.c1)
        assert stage(project, "cabling").gate_computed_at is None  # nothing before commit
    assert callbacks
    cabling = stage(project, "cabling")
    assert cabling.gate_computed_at is not None  # the (eager) task ran once the scans committed
    assert "C00001" not in [item["label"] for item in cabling.gate_missing]
    assert not GateRecompute.objects.get(project=project).pending

    # While a recompute is queued (the flag set, its task not yet run), more evidence queues nothing more.
    GateRecompute.objects.filter(project=project).update(pending=True)
    with django_capture_on_commit_callbacks(execute=True):
        scan_cable(project, technician, world.c2)
    assert stage(project, "cabling").gate_computed_at == cabling.gate_computed_at


def test_many_changes_in_one_transaction_ask_for_one_recompute(world, technician, monkeypatch,
                                                              django_capture_on_commit_callbacks):
    from delivery.stages import services

    asked = []
    monkeypatch.setattr(services, "gates_recompute_request", lambda *, project_id: asked.append(project_id))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        scan_cable(world.project, technician, world.c1)
        scan_cable(world.project, technician, world.c2)
    assert len([c for c in callbacks if getattr(c, "gates_project_id", None) == world.project.pk]) > 1
    assert asked == [world.project.pk]  # the first callback to run asks for all of them

    with django_capture_on_commit_callbacks(execute=True):  # the next transaction asks again
        scan_cable(world.project, technician, world.c1)
    assert asked == [world.project.pk, world.project.pk]


def test_a_request_claims_the_flag_once_until_the_task_clears_it_and_a_project_without_stages_asks_nothing(
    world, monkeypatch
):
    from delivery.stages import services
    from projects.services import project_create

    queued = []
    monkeypatch.setattr(services, "enqueue_on_commit",
                        lambda task, project_id, countdown=None: queued.append((project_id, countdown)))
    bare = project_create(code="BARE-1", name="No stages", customer_name="Nobody")
    assert not services.gates_recompute_request(project_id=bare.pk)
    assert not GateRecompute.objects.filter(project=bare).exists()  # no row made for a project without stages

    project = world.project
    GateRecompute.objects.filter(project=project).delete()
    assert services.gates_recompute_request(project_id=project.pk)  # the row made, pending
    assert not services.gates_recompute_request(project_id=project.pk)  # queued already: nothing more
    row = GateRecompute.objects.get(project=project)
    assert row.pending and row.requested_at is not None
    GateRecompute.objects.filter(pk=row.pk).update(pending=False)  # as the task does first
    assert services.gates_recompute_request(project_id=project.pk)
    # Each after the delay that lets a burst of scans coalesce into one recompute.
    assert queued == [(project.pk, settings.GATES_RECOMPUTE_DELAY_S)] * 2

    # Queued already, the usual answer in a burst of scans: one statement on PostgreSQL, and it writes nothing
    # (an UPDATE matching no row: no row lock, nothing for the commit to flush).
    with CaptureQueriesContext(connection) as captured:
        assert not services.gates_recompute_request(project_id=project.pk)
    statements = [q["sql"] for q in captured.captured_queries]
    assert len(statements) == (1 if connection.vendor == "postgresql" else 2), statements
    assert not any(sql.lstrip().upper().startswith("INSERT") for sql in statements)

    # A recompute asked for long ago and never run (its task lost with a broker's data) blocks nothing.
    long_ago = timezone.now() - timedelta(seconds=settings.GATES_RECOMPUTE_STALE_S + 60)
    GateRecompute.objects.filter(project=project).update(pending=True, requested_at=long_ago)
    assert services.gates_recompute_request(project_id=project.pk)
    assert len(queued) == 3 and GateRecompute.objects.get(project=project).requested_at > long_ago


def test_the_recompute_task_clears_the_flag_and_stores_the_gates(world):
    from delivery.tasks import gates_recompute_task

    GateRecompute.objects.create(project=world.project, pending=True)
    assert gates_recompute_task(world.project.pk) == 0
    assert gates_recompute_task(world.project.pk) == 0  # safe to run twice
    row = GateRecompute.objects.get(project=world.project)
    assert not row.pending and row.computed_at is not None
    assert not Stage.objects.filter(project=world.project, gate_computed_at=None).exists()


# --- pages ---------------------------------------------------------------------------------------------------


def test_the_stages_page_shows_each_gate_with_its_missing_items_linked(world, client_for, customer):
    gates_recompute(project=world.project)
    body = client_for(customer).get(reverse("stages:list", args=[world.project.code])).content.decode()
    assert "Racking" in body and "3 missing" in body
    assert reverse("inventory:device-detail", args=[world.project.code, world.gpu1.pk]) in body
    assert "Complete" not in body and "Recompute the gates now" not in body  # a customer reads only
    home = client_for(customer).get(reverse("delivery:project-home", args=[world.project.code])).content.decode()
    assert reverse("stages:list", args=[world.project.code]) in home and "Site readiness" in home


def test_the_stage_page_shows_buttons_by_role(world, client_for, manager, technician, customer):
    gates_recompute(project=world.project)
    url = reverse("stages:detail", args=[world.project.code, "network_config"])
    as_manager = client_for(manager).get(url).content.decode()
    assert "Complete" in as_manager and "Record the waiver" in as_manager and ">Confirm<" in as_manager
    as_technician = client_for(technician).get(url).content.decode()
    assert ">Confirm<" in as_technician and "Record the waiver" not in as_technician
    as_customer = client_for(customer).get(url).content.decode()
    assert ">Confirm<" not in as_customer and "Complete" not in as_customer


def test_people_outside_the_project_get_404_and_wrong_roles_403(world, client_for, outsider, technician, customer):
    code = world.project.code
    for url in (reverse("stages:list", args=[code]), reverse("stages:detail", args=[code, "racking"])):
        assert client_for(outsider).get(url).status_code == 404
    complete = reverse("stages:complete", args=[code, "site_readiness"])
    assert client_for(outsider).post(complete).status_code == 404
    assert client_for(technician).post(complete).status_code == 403
    assert client_for(customer).post(complete).status_code == 403
    item = stage(world.project, "network_config").checklist.first()
    confirm = reverse("stages:checklist-confirm", args=[code, "network_config", item.pk])
    assert client_for(customer).post(confirm).status_code == 403
    assert client_for(outsider).post(confirm).status_code == 404
    assert client_for(customer).get(reverse("stages:detail", args=[code, "no_such"])).status_code == 404


def test_a_refused_completion_says_what_is_missing_on_the_page(world, client_for, manager):
    gates_recompute(project=world.project)
    client = client_for(manager)
    client.post(reverse("stages:complete", args=[world.project.code, "site_readiness"]))
    response = client.post(reverse("stages:complete", args=[world.project.code, "racking"]), follow=True)
    body = response.content.decode()
    assert "gpu-001" in body and "record a waiver" in body
    assert stage(world.project, "racking").status == StageStatus.NOT_STARTED


def test_the_stages_page_query_count_does_not_grow(world, client_for, manager, django_assert_num_queries):
    from delivery.stages.services import stage_add_custom

    project = world.project
    gates_recompute(project=project)
    client = client_for(manager)
    url = reverse("stages:list", args=[project.code])
    client.get(url)
    few = count_queries(lambda: client.get(url))
    for n in range(8):
        stage_add_custom(project=project, user=manager, title=f"Extra {n}", checklist=["a", "b"], depends_on=[])
    UserFactory.create_batch(3)
    gates_recompute(project=project)
    with django_assert_num_queries(few):
        assert client.get(url).status_code == 200


def test_a_waiver_names_its_items_and_the_gate_shows_them_waived(world, manager, client_for):
    """The issue: a waiver showed as `cabling.cable:962` and its items stayed in the missing list as if
    nothing had been decided. The stage page names them (device, port, cable, checklist item) and marks the
    gate's missing items a waiver covers."""
    from delivery.stages.selectors import ref_labels
    from inventory.models import Device, Port

    gates_recompute(project=world.project)
    stage_complete(stage=stage(world.project, "site_readiness"), user=manager)
    racking = stage(world.project, "racking")
    waived, kept = refs(racking)[:1], refs(racking)[1:]
    waiver_record(stage=racking, user=manager, items=waived, reason="Racked by the customer's staff.")
    device = Device.objects.get(pk=int(waived[0].split(":")[1]))
    port = Port.objects.filter(device=device).first()
    assert ref_labels([f"inventory.port:{port.pk}", f"cabling.cable:{world.c1.pk}", "inventory.device:999999",
                       "gate:no-topology-comparison"], project=world.project) == {
        f"inventory.port:{port.pk}": f"port {device.name}:{port.name}", f"cabling.cable:{world.c1.pk}": "cable C00001"}
    body = client_for(manager).get(reverse("stages:detail", args=[world.project.code, "racking"])).content.decode()
    record = body[body.index('class="waiver-record"'):].split("</p>")[0]
    assert f"device {device.name}" in record and waived[0] not in record
    gate = body[body.index('id="gate"'):body.index('</section>', body.index('id="gate"'))]
    assert gate.count('class="waived"') == 1 and f">{device.name}</a>" in gate.split('class="waived"')[1][:400]
    assert gate.count("<li") == len(kept) + 1  # the others still missing, plainly


def test_another_projects_object_keeps_its_ref(world, other_project):
    from delivery.stages.selectors import ref_labels
    from tests.factories import RackFactory

    theirs = RackFactory(project=other_project)
    assert ref_labels([f"inventory.rack:{theirs.pk}"], project=world.project) == {}
