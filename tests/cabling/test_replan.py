"""Re-planning a project that already has a plan: the diff (added, removed, changed cables and switches),
the apply of it, installed cables and switches in place never removed silently, networks the spec does
not mention left alone, and `plan_fabric --project` (the diff without --confirm, the apply with it)."""

from __future__ import annotations

import json
from io import StringIO

import pytest
import yaml
from django.core.management import CommandError, call_command

from cabling.choices import CableStatus, CableType, FabricPlanSource, Side
from cabling.models import Cable, CableEnd, FabricPlan
from cabling.services import PlanNotApplied, plan_apply, plan_diff, plan_of
from core.choices import JobStatus
from inventory.choices import DeviceRole, DeviceStatus, Network
from inventory.models import Device, DeviceUnit, Port
from tests.cabling.test_plan_apply import fabric72_catalogue, small_spec, snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def eight(project, manager):
    """8 servers applied: 8 leaves (one per rail) and 1 spine, 64 + 64 cables."""
    fabric72_catalogue()
    plan_apply(project=project, spec_text=small_spec(8), user=manager)
    return project


def cables_in_db(project) -> dict[str, tuple]:
    """label -> sorted ends (side, leg, device, port), read back from the database."""
    found: dict[str, list] = {}
    for label, side, position, device, port in CableEnd.objects.filter(cable__project=project).values_list(
        "cable__label", "side", "position", "port__device__name", "port__name"
    ):
        found.setdefault(label, []).append((side, position, device, port))
    return {label: tuple(sorted(ends)) for label, ends in found.items()}


def cables_planned(spec_text: str) -> dict[str, tuple]:
    return {
        c.label: tuple(sorted((e.side, e.position, e.port.device, e.port.name) for e in c.ends))
        for c in plan_of(spec_text=spec_text).cables
    }


def cable_on(project, device: str, port: str) -> Cable:
    return Cable.objects.get(project=project, ends__port__device__name=device, ends__port__name=port)


# --- more servers ---------------------------------------------------------------------------------------


def test_more_servers_shows_the_added_cables_and_applies_them(eight, manager):
    bigger = small_spec(12)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=bigger))
    counts = diff.counts()
    new_servers = {f"gpu-{n:03d}" for n in range(9, 13)}
    node_cables = [c for c in diff.cables_added if c.a_end.device in new_servers]
    assert len(node_cables) == 4 * 8 and counts["servers_added"] == 4
    assert {c.b_ends[0].device for c in node_cables} == {f"ib-leaf-{i:02d}" for i in range(1, 9)}
    # The first 64 node cables keep their ends and labels. Uplinks come after every node cable, so they
    # are renumbered: leaf-01's first 8 keep their ends (relabelled), the others move to other spine ports.
    assert counts["cables_unchanged"] == 64 and counts["cables_changed"] == 8
    assert all(changes[0].startswith("label: C000") for _, _, changes in diff.cables_changed)
    assert counts["cables_added"] == 32 + 88 and counts["cables_removed"] == 56 and not diff.blocked
    shown = diff.as_dict()
    assert shown["counts"] == counts and len(shown["cables_added"]) == 100  # the stored preview is capped
    assert not Device.objects.filter(project=eight, name="gpu-009").exists()  # a diff writes nothing

    plan_apply(project=eight, spec_text=bigger, user=manager)
    assert cables_in_db(eight) == cables_planned(bigger)  # labels reused by other cables included
    assert Device.objects.filter(project=eight, role=DeviceRole.GPU_NODE).count() == 12
    assert plan_diff(project=eight, plan=plan_of(spec_text=bigger)).is_empty


def test_a_relabel_keeps_the_cable_rows_and_their_status(eight, manager):
    installed = cable_on(eight, "gpu-003", "ib2")
    Cable.objects.filter(pk=installed.pk).update(status=CableStatus.INSTALLED)
    spec = small_spec(8, label_prefix="X")
    diff = plan_diff(project=eight, plan=plan_of(spec_text=spec))
    assert diff.counts()["cables_changed"] == 128 and not diff.blocked and not diff.cables_added
    assert diff.cables_changed[0][2] == ["label: C00001 -> X00001"]
    plan_apply(project=eight, spec_text=spec, user=manager)
    installed.refresh_from_db()
    assert installed.label == f"X{installed.label[1:]}" and installed.status == CableStatus.INSTALLED
    assert set(Cable.objects.filter(project=eight).values_list("label", flat=True)) == set(cables_planned(spec))


def test_longer_runs_change_the_cable_lengths(eight, manager):
    spec = yaml.safe_load(small_spec(8))
    spec["room"]["slack_m"] = 6.0
    text = yaml.safe_dump(spec)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=text))
    assert diff.counts()["cables_changed"] == 128
    assert all(any(c.startswith("length_m: ") for c in changes) for _, _, changes in diff.cables_changed)
    plan_apply(project=eight, spec_text=text, user=manager)
    lengths = {c.label: c.length_m for c in plan_of(spec_text=text).cables}
    assert all(float(c.length_m) == lengths[c.label] for c in Cable.objects.filter(project=eight))


# --- installed cables are never removed silently ----------------------------------------------------------


def test_a_replan_that_would_remove_an_installed_cable_is_blocked(eight, manager):
    installed = cable_on(eight, "gpu-008", "ib0")
    Cable.objects.filter(pk=installed.pk).update(status=CableStatus.VERIFIED)
    fewer = small_spec(4)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=fewer))
    assert [c.id for c in diff.cables_blocked] == [installed.pk]
    assert diff.blocked == [
        f"cable {installed.label} (verified) gpu-008:ib0 - ib-leaf-01:p8 is installed and the new plan drops it"
    ]
    before = snapshot(eight)
    with pytest.raises(PlanNotApplied) as caught:
        plan_apply(project=eight, spec_text=fewer, user=manager)
    assert caught.value.messages[0] == diff.blocked[0]
    assert "keep_installed" in caught.value.messages[-1]
    assert snapshot(eight) == before


def test_keep_installed_keeps_the_cable_flagged_and_applies_the_rest(eight, manager):
    installed = cable_on(eight, "gpu-008", "ib0")
    Cable.objects.filter(pk=installed.pk).update(status=CableStatus.INSTALLED)
    fewer = small_spec(4)
    plan_apply(project=eight, spec_text=fewer, user=manager, keep_installed=True)
    old_label = installed.label
    installed.refresh_from_db()
    assert installed.removed_from_plan and installed.status == CableStatus.INSTALLED
    assert installed.ends.count() == 2 and installed.label == f"{old_label}-out"
    assert Cable.objects.get(project=eight, label=old_label).pk != installed.pk  # the plan reuses the label
    others = Cable.objects.filter(project=eight, ends__port__device__name="gpu-005")
    assert not others.exists()  # the planned cables of dropped servers are deleted
    assert Device.objects.filter(project=eight, name="gpu-008").exists()  # servers are never deleted
    # The next apply of the same spec is a no-op: the kept cable is known, not blocked again.
    again = plan_diff(project=eight, plan=plan_of(spec_text=fewer))
    assert again.is_empty and not again.blocked and again.counts()["cables_kept"] == 1


def test_a_kept_cable_holding_a_port_the_plan_wants_is_an_error(eight, manager):
    uplink = Cable.objects.get(project=eight, ends__port__device__name="ib-spine-01", ends__port__name="p9")
    Cable.objects.filter(pk=uplink.pk).update(status=CableStatus.INSTALLED)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=small_spec(12)))
    assert any(m.startswith(f"ib-spine-01:p9: already taken by cable {uplink.label} (installed)") for m in diff.errors)
    with pytest.raises(PlanNotApplied):
        plan_apply(project=eight, spec_text=small_spec(12), user=manager, keep_installed=True)


# --- switches -----------------------------------------------------------------------------------------------


def four_rails(servers: int = 8) -> str:
    spec = yaml.safe_load(small_spec(servers))
    spec["servers"][0]["ports"][0]["count"] = 4
    return yaml.safe_dump(spec)


def test_switches_the_plan_drops_are_removed_with_their_cables(eight, manager):
    diff = plan_diff(project=eight, plan=plan_of(spec_text=four_rails()))
    assert sorted(d.name for d in diff.switches_removed) == [f"ib-leaf-{i:02d}" for i in range(5, 9)]
    plan_apply(project=eight, spec_text=four_rails(), user=manager)
    assert not Device.objects.filter(project=eight, name="ib-leaf-05").exists()
    assert not Port.objects.filter(device__project=eight, device__name="ib-leaf-05").exists()
    assert not CableEnd.objects.filter(cable__project=eight, port__device__name="gpu-001", port__name="ib7").exists()
    assert cables_in_db(eight) == cables_planned(four_rails())


def test_a_switch_in_place_is_blocked_not_removed(eight, manager):
    Device.objects.filter(project=eight, name="ib-leaf-08").update(status=DeviceStatus.POWERED)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=four_rails()))
    assert diff.blocked == ["switch ib-leaf-08 (powered): it is in place and the new plan drops it"]
    with pytest.raises(PlanNotApplied):
        plan_apply(project=eight, spec_text=four_rails(), user=manager)
    plan_apply(project=eight, spec_text=four_rails(), user=manager, keep_installed=True)
    assert Device.objects.filter(project=eight, name="ib-leaf-08").exists()
    assert not Device.objects.filter(project=eight, name="ib-leaf-07").exists()


def test_planned_switches_move_and_switches_in_place_do_not(eight, manager):
    spec = yaml.safe_load(small_spec(8))
    spec["room"]["network_first_u"] = 10
    text = yaml.safe_dump(spec)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=text))
    assert len(diff.switches_moved) == 9 and not diff.errors
    plan_apply(project=eight, spec_text=text, user=manager)
    leaf = Device.objects.get(project=eight, name="ib-leaf-01")
    assert leaf.position_u == 10
    assert sorted(DeviceUnit.objects.filter(device=leaf).values_list("unit", flat=True).distinct()) == [10, 11, 12, 13]
    Device.objects.filter(pk=leaf.pk).update(status=DeviceStatus.RACKED)
    spec["room"]["network_first_u"] = 2
    with pytest.raises(PlanNotApplied, match=r"ib-leaf-01 \(racked\) stands in N01 U10; the plan moves it to N01 U2"):
        plan_apply(project=eight, spec_text=yaml.safe_dump(spec), user=manager)


def test_a_label_held_by_a_cable_the_plan_does_not_manage_is_an_error(eight):
    storage = Cable.objects.create(project=eight, label="C00150", network=Network.STORAGE,
                                   cable_type=CableType.FIBER, length_m=5, speed_gbps=400)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=small_spec(12)))
    assert any(m.startswith("cable label C00150: already used by a storage cable") for m in diff.errors)
    assert storage.pk


def test_networks_the_spec_does_not_mention_are_left_alone(eight, manager):
    gpu, leaf = Port.objects.get(device__project=eight, device__name="gpu-001", name="bmc"), Port.objects.get(
        device__project=eight, device__name="ib-leaf-01", name="mgmt0"
    )
    oob = Cable.objects.create(project=eight, label="O00001", network=Network.OOB, cable_type=CableType.CAT6,
                               length_m=5, speed_gbps=1)
    CableEnd.objects.create(cable=oob, side=Side.A, port=gpu)
    CableEnd.objects.create(cable=oob, side=Side.B, port=leaf)
    diff = plan_diff(project=eight, plan=plan_of(spec_text=small_spec(8)))
    assert diff.is_empty
    plan_apply(project=eight, spec_text=small_spec(4), user=manager)
    assert Cable.objects.filter(pk=oob.pk).exists()


# --- the command ------------------------------------------------------------------------------------------


def test_command_without_confirm_prints_the_diff_and_writes_nothing(project, tmp_path):
    fabric72_catalogue()
    path = tmp_path / "mini.yaml"
    path.write_text(small_spec(4))
    before = snapshot(project)
    out = StringIO()
    call_command("plan_fabric", str(path), "--project", project.code, stdout=out)
    text = out.getvalue()
    assert f"{project.code}: would apply (run again with --confirm to apply):" in text
    assert "cables added" in text and "64" in text and "C00001  A01-U12-gpu-001-ib0 > N01-U05-ib-leaf-01-p1" in text
    assert snapshot(project) == before
    data = json.loads(_run(path, project, "--json"))
    assert data["counts"]["cables_added"] == 64 and data["counts"]["switches_added"] == 9


def _run(path, project, *args) -> str:
    out = StringIO()
    call_command("plan_fabric", str(path), "--project", project.code, *args, stdout=out)
    return out.getvalue()


def test_command_with_confirm_applies_and_records_the_plan(project, tmp_path):
    fabric72_catalogue()
    path = tmp_path / "mini.yaml"
    path.write_text(small_spec(4))
    text = _run(path, project, "--confirm")
    assert f"{project.code}: applied:" in text and "Recorded as fabric plan" in text
    assert Cable.objects.filter(project=project).count() == 64
    row = FabricPlan.objects.get(project=project)
    assert (row.status, row.source) == (JobStatus.DONE, FabricPlanSource.COMMAND)
    assert row.spec_text == small_spec(4)
    assert "nothing to do" in _run(path, project, "--confirm")
    assert FabricPlan.objects.filter(project=project).count() == 1


def test_command_refuses_a_blocked_plan_with_exit_1(eight, tmp_path):
    Cable.objects.filter(pk=cable_on(eight, "gpu-008", "ib0").pk).update(status=CableStatus.INSTALLED)
    path = tmp_path / "fewer.yaml"
    path.write_text(small_spec(4))
    assert "Blocked (installed or in place" in _run(path, eight)
    with pytest.raises(CommandError, match="nothing was written") as caught:
        _run(path, eight, "--confirm")
    assert caught.value.returncode == 1
    assert "gpu-008" in _run(path, eight, "--confirm", "--keep-installed")


def test_command_names_an_unknown_project(tmp_path):
    path = tmp_path / "mini.yaml"
    path.write_text(small_spec(4))
    with pytest.raises(CommandError, match="--project: no project with code 'NOPE'"):
        call_command("plan_fabric", str(path), "--project", "NOPE")


def test_another_switch_model_replaces_planned_switches_but_not_switches_in_place(eight, manager):
    from tests.cabling.test_plan_apply import switch_model

    switch_model("Q3400-RB")
    spec = small_spec(8, switch="Q3400-RB")
    old_ids = set(Device.objects.filter(project=eight, name__startswith="ib-").values_list("id", flat=True))
    diff = plan_diff(project=eight, plan=plan_of(spec_text=spec))
    assert len(diff.switches_removed) == len(diff.switches_added) == 9
    assert diff.counts()["cables_removed"] == diff.counts()["cables_added"] == 128  # they ended on the old ports
    plan_apply(project=eight, spec_text=spec, user=manager)
    switches = Device.objects.filter(project=eight, name__startswith="ib-")
    assert set(switches.values_list("hardware_model__part_number", flat=True)) == {"Q3400-RB"}
    assert not old_ids & set(switches.values_list("id", flat=True))
    assert cables_in_db(eight) == cables_planned(spec)
    switches.filter(name="ib-spine-01").update(status=DeviceStatus.READY)
    with pytest.raises(PlanNotApplied, match=r"ib-spine-01 \(ready\) is a Q3400-RB; the plan wants a Q3400-RA"):
        plan_apply(project=eight, spec_text=small_spec(8), user=manager)


def test_a_switch_is_not_replaced_while_an_installed_cable_stays_on_it(eight, manager):
    from tests.cabling.test_plan_apply import switch_model

    switch_model("Q3400-RB")
    Cable.objects.filter(pk=cable_on(eight, "gpu-001", "ib0").pk).update(status=CableStatus.INSTALLED)
    spec = small_spec(8, switch="Q3400-RB")
    diff = plan_diff(project=eight, plan=plan_of(spec_text=spec))
    label = cable_on(eight, "gpu-001", "ib0").label
    assert f"ib-leaf-01 would be replaced by another model, but cables {label} stay on it" in diff.errors
    with pytest.raises(PlanNotApplied):
        plan_apply(project=eight, spec_text=spec, user=manager, keep_installed=True)
