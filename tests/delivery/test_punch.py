"""The punch list's services and its sync from the evidence: items opened from failed link-health results
and from a topology comparison's miswires, one per fault whatever the re-runs and re-syncs; fixed becomes
verified only on a later passing check; won't fix needs a manager and a reason; the sync runs in the gates
recompute task when evidence changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from core.choices import JobStatus
from delivery.choices import PunchObjectKind, PunchSource, PunchStatus
from delivery.models import PunchItem
from delivery.punch.services import punch_item_open, punch_item_set_status, punch_items_sync_from_evidence
from projects.evidence import evidence_changed_send
from validation.choices import CheckKind, LinkState, ResultStatus, Verdict
from validation.models import CheckResult, CheckRun, TopologyComparison, TopologyLink

from .stages_world import build_world

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(project, manager, technician, customer):
    return build_world(project)


def link_health(world, verdicts: dict, *, at=None):
    """A finished link-health run with one result per cable ({cable: verdict}), finished at `at`."""
    at = at or timezone.now()
    run = CheckRun.objects.create(project=world.project, kind=CheckKind.LINK_HEALTH, status=JobStatus.DONE,
                                  progress_total=len(verdicts), progress_done=len(verdicts), finished_at=at)
    for cable, verdict in verdicts.items():
        end = cable.ends.select_related("port__device").order_by("side").first()
        CheckResult.objects.create(
            run=run, target_key=f"{end.port.device.name}:{end.port.name}", status=ResultStatus.DONE,
            device=end.port.device, port=end.port, cable=cable, verdict=verdict, finished_at=at,
            reasons=[{"level": verdict, "text": "Effective BER 1e-9 above 1e-12."}] if verdict == Verdict.FAIL else [],
        )
    return run


def comparison(world, links: dict, *, at=None):
    """A finished topology comparison whose faulty links are {key: (state, cable)}."""
    at = at or timezone.now()
    found = TopologyComparison.objects.create(project=world.project, status=JobStatus.DONE, finished_at=at,
                                              counts={"ok": 1, **{s: 1 for s, _ in links.values()}})
    TopologyLink.objects.bulk_create(
        TopologyLink(comparison=found, key=key, state=state, cable=cable, cable_label=cable.label if cable else "",
                     advice="Swap the two ends at the leaf.")
        for key, (state, cable) in links.items()
    )
    return found


def sync(world):
    return punch_items_sync_from_evidence(project=world.project)


def items(world):
    return list(PunchItem.objects.filter(project=world.project).order_by("id"))


def test_a_failed_link_health_result_opens_one_item_however_many_reruns_and_syncs(world):
    link_health(world, {world.c1: Verdict.FAIL, world.c2: Verdict.PASS})
    assert sync(world)["opened"] == 1
    [item] = items(world)
    assert (item.status, item.source, item.object_kind, item.object_id) == (
        PunchStatus.OPEN, PunchSource.CHECK_RESULT, PunchObjectKind.CABLE, world.c1.pk)
    assert item.fingerprint == f"link_health:cable:{world.c1.pk}"
    assert "C00001" in item.title and "BER" in item.description and not item.customer_visible
    assert item.object_url.endswith(f"/cabling/{world.c1.pk}/")
    # Re-syncing reads the same result again; two re-runs fail the same cable: still one item.
    assert sync(world)["opened"] == 0
    for _ in range(2):
        link_health(world, {world.c1: Verdict.FAIL}, at=timezone.now() + timedelta(seconds=1))
        assert sync(world)["opened"] == 0
    assert len(items(world)) == 1
    assert items(world)[0].history.count() == 1  # a re-run saying the same thing writes no history row


def test_an_error_opens_a_minor_item_and_a_warning_opens_none(world):
    link_health(world, {world.c1: Verdict.ERROR, world.c2: Verdict.WARN})
    sync(world)
    [item] = items(world)
    assert item.object_id == world.c1.pk and item.severity == "minor"


def test_a_miswire_opens_one_item_per_fault_across_comparisons(world):
    comparison(world, {"C00001": (LinkState.MISWIRED, world.c1),
                       "obs:leaf-01/p9~gpu-002/ib3": (LinkState.UNPLANNED, None)})
    assert sync(world)["opened"] == 2
    miswire = PunchItem.objects.get(fingerprint="topology:miswired:C00001")
    assert miswire.object_kind == PunchObjectKind.MISWIRE and miswire.severity == "major"
    assert "Swap the two ends" in miswire.description
    second = comparison(world, {"C00001": (LinkState.MISWIRED, world.c1)}, at=timezone.now() + timedelta(seconds=1))
    assert sync(world)["opened"] == 0
    miswire.refresh_from_db()
    assert miswire.object_id == second.pk  # it links the comparison that saw it last
    assert PunchItem.objects.filter(project=world.project).count() == 2


def test_fixed_becomes_verified_only_after_a_later_passing_check(world, technician):
    link_health(world, {world.c1: Verdict.FAIL})
    sync(world)
    [item] = items(world)
    # Passing before anyone said "fixed": the item stays open, marked as passing again.
    link_health(world, {world.c1: Verdict.PASS}, at=timezone.now() + timedelta(seconds=1))
    sync(world)
    item.refresh_from_db()
    assert item.status == PunchStatus.OPEN and item.passing_since is not None
    punch_item_set_status(item=item, user=technician, status=PunchStatus.FIXED, note="Reseated the optic.")
    item.refresh_from_db()
    assert item.status == PunchStatus.FIXED and item.fixed_by == technician and item.passing_since is None
    # A sync with nothing newer than the fix verifies nothing (the earlier pass is not a re-check).
    sync(world)
    item.refresh_from_db()
    assert item.status == PunchStatus.FIXED
    # A result taken before the fix but landing now does not count either.
    link_health(world, {world.c1: Verdict.PASS}, at=item.fixed_at - timedelta(seconds=1))
    sync(world)
    item.refresh_from_db()
    assert item.status == PunchStatus.FIXED
    # The re-check after the fix passes: verified, by the evidence, not a person.
    link_health(world, {world.c1: Verdict.PASS}, at=timezone.now() + timedelta(seconds=5))
    assert sync(world)["verified"] == 1
    item.refresh_from_db()
    assert item.status == PunchStatus.VERIFIED and item.verified_at and item.verified_by is None


def test_a_fix_that_fails_its_recheck_reopens_the_same_item(world, technician):
    link_health(world, {world.c1: Verdict.FAIL})
    sync(world)
    [item] = items(world)
    punch_item_set_status(item=item, user=technician, status=PunchStatus.FIXED)
    link_health(world, {world.c1: Verdict.FAIL}, at=timezone.now() + timedelta(seconds=5))
    assert sync(world) == {"opened": 0, "reopened": 1, "verified": 0}
    item.refresh_from_db()
    assert item.status == PunchStatus.OPEN and len(items(world)) == 1


def test_a_cleared_miswire_verifies_its_fixed_item_on_the_next_comparison(world, technician):
    comparison(world, {"C00001": (LinkState.MISWIRED, world.c1)})
    sync(world)
    item = PunchItem.objects.get(fingerprint="topology:miswired:C00001")
    punch_item_set_status(item=item, user=technician, status=PunchStatus.FIXED, note="Swapped at the leaf.")
    comparison(world, {}, at=timezone.now() + timedelta(seconds=5))  # clean
    sync(world)
    item.refresh_from_db()
    assert item.status == PunchStatus.VERIFIED


def test_nobody_sets_verified_by_hand_and_wont_fix_needs_a_manager_and_a_reason(world, manager, technician, customer):
    item = punch_item_open(project=world.project, user=technician, title="Bent latch", object_kind="cable",
                           object_id=world.c1.pk, object_label="C00001")
    with pytest.raises(ValidationError, match="not by hand"):
        punch_item_set_status(item=item, user=manager, status=PunchStatus.VERIFIED)
    with pytest.raises(PermissionDenied, match="manager"):
        punch_item_set_status(item=item, user=technician, status=PunchStatus.WONT_FIX, note="Cosmetic.")
    with pytest.raises(ValidationError) as refused:
        punch_item_set_status(item=item, user=manager, status=PunchStatus.WONT_FIX, note="  ")
    assert "note" in refused.value.error_dict
    with pytest.raises(PermissionDenied):
        punch_item_set_status(item=item, user=customer, status=PunchStatus.FIXED)
    with pytest.raises(PermissionDenied):
        punch_item_open(project=world.project, user=customer, title="Mine")
    with pytest.raises(PermissionDenied, match="manager"):
        punch_item_open(project=world.project, user=technician, title="Shown", customer_visible=True)
    item = punch_item_set_status(item=item, user=manager, status=PunchStatus.WONT_FIX,
                                 note="Cosmetic; the customer agrees.")
    assert item.status == PunchStatus.WONT_FIX and item.wont_fix_reason == "Cosmetic; the customer agrees."
    assert item.history.first().history_user == manager


def test_a_fixed_item_opened_by_hand_on_a_cable_is_verified_by_its_next_passing_check(world, technician):
    item = punch_item_open(project=world.project, user=technician, title="Dust cap left on", object_kind="cable",
                           object_id=world.c2.pk, object_label="C00002")
    punch_item_set_status(item=item, user=technician, status=PunchStatus.FIXED)
    link_health(world, {world.c2: Verdict.PASS}, at=timezone.now() + timedelta(seconds=5))
    sync(world)
    item.refresh_from_db()
    assert item.status == PunchStatus.VERIFIED


def test_evidence_changed_runs_the_sync_in_the_gates_recompute_task(world, django_capture_on_commit_callbacks):
    link_health(world, {world.c1: Verdict.FAIL})
    with django_capture_on_commit_callbacks(execute=True):
        evidence_changed_send(project_id=world.project.pk, what="check_run")
    assert PunchItem.objects.filter(project=world.project, fingerprint=f"link_health:cable:{world.c1.pk}").exists()


# --- one item per cause ----------------------------------------------------------------------------------


def matrix(world, nodes, verdicts: dict, *, at=None):
    """A finished bandwidth-matrix run with one result per pair ({(a, b): verdict}) of `nodes` (devices)."""
    at = at or timezone.now()
    run = CheckRun.objects.create(project=world.project, kind=CheckKind.BANDWIDTH_MATRIX, status=JobStatus.DONE,
                                  progress_total=len(verdicts), progress_done=len(verdicts), finished_at=at)
    for (a, b), verdict in verdicts.items():
        CheckResult.objects.create(
            run=run, target_key=f"{nodes[a].name}~{nodes[b].name}", status=ResultStatus.DONE, device=nodes[a],
            peer_device=nodes[b], verdict=verdict, finished_at=at,
            reasons=[{"level": verdict, "text": "GPU RDMA 210 Gb/s below 350."}] if verdict == Verdict.FAIL else [],
        )
    return run


@pytest.fixture
def nodes(world):
    from inventory.choices import DeviceRole
    from inventory.services import device_create
    from tests.factories import RackFactory, gpu_server_model

    racks = [RackFactory(project=world.project, site=world.servers_rack.site, name=f"M0{r}", row="M", position=r)
             for r in (1, 2)]
    return [device_create(project=world.project, hardware_model=gpu_server_model(), name=f"node-{n}",
                          rack=racks[n // 4], position_u=1 + 10 * (n % 4), role=DeviceRole.GPU_NODE) for n in range(5)]


def test_a_slow_node_is_one_item_listing_its_pairs_and_a_rerun_updates_it(world, nodes, technician):
    """The issue: one slow node opened 23 items, one per pair. Node 0 fails every pair it is in; the pair of
    nodes 3 and 4 fails on its own (no node in two failing pairs): one item each, the node's listing its pairs."""
    pairs = {(a, b): Verdict.FAIL if a == 0 or (a, b) == (3, 4) else Verdict.PASS
             for a in range(5) for b in range(a + 1, 5)}
    matrix(world, nodes, pairs, at=timezone.now() - timedelta(hours=2))
    sync(world)
    by_kind = {item.object_kind: item for item in items(world)}
    assert len(by_kind) == 2
    node_item, pair_item = by_kind[PunchObjectKind.DEVICE], by_kind[PunchObjectKind.NODE_PAIR]
    assert (node_item.object_kind, node_item.object_id, node_item.object_label) == (
        PunchObjectKind.DEVICE, nodes[0].pk, "node-0")
    assert "fails on 4 pairs" in node_item.title and "node-1, node-2, node-3, node-4" in node_item.description
    assert pair_item.object_kind == PunchObjectKind.NODE_PAIR and pair_item.object_label == "node-3 ↔ node-4"
    # A re-run after a partial fix: node 0 still fails with two of them; the same item says so, quietly.
    history = node_item.history.count()
    matrix(world, nodes, {**pairs, (0, 1): Verdict.PASS, (0, 2): Verdict.PASS})
    sync(world)
    node_item.refresh_from_db()
    assert len(items(world)) == 2 and "fails on 2 pairs" in node_item.title
    assert "node-3, node-4" in node_item.description and "node-1" not in node_item.description
    assert node_item.history.count() == history  # no history row per re-run that says the same thing
    # Fixed, then every pair of node 0 passes: its item is verified by the evidence.
    punch_item_set_status(item=node_item, user=technician, status=PunchStatus.FIXED, note="new NIC")
    matrix(world, nodes, {pair: Verdict.PASS for pair in pairs}, at=timezone.now() + timedelta(minutes=1))
    sync(world)
    node_item.refresh_from_db()
    assert node_item.status == PunchStatus.VERIFIED
