"""cabling.sql, each function against the ORM query it stands for, on the same rows (the fabric of
tests/cabling/conftest.py): the suite runs on SQLite here and on PostgreSQL in CI, so each holds on both. The
same instances (every concrete field, the relations loaded), in the same order; the same rows moved, with the
same history. update_returning_supported is held to the database's version in test_fabric_states.py."""

from __future__ import annotations

import pytest
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cabling import sql
from cabling.choices import CableStatus, FabricState
from cabling.models import Cable, CableEnd
from cabling.scan_selectors import END_RELATIONS
from inventory.choices import OpticStatus, PortStatus
from inventory.models import Device, Optic, Port
from tests.factories import OpticFactory
from tests.support import history_as_rows_now, postgresql_only

pytestmark = pytest.mark.django_db

KEPT = [PortStatus.DISABLED]


def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def same(built: list, loaded: list, *relations: str) -> None:
    """The same rows in the same order, every concrete field equal, and each dotted relation loaded on both to
    the same row."""
    assert [field_values(b) for b in built] == [field_values(row) for row in loaded]
    for b, row in zip(built, loaded, strict=True):
        for relation in relations:
            mine, theirs = b, row
            for name in relation.split("__"):
                assert getattr(type(mine), name).is_cached(mine), relation  # loaded: no query to reach it
                mine, theirs = getattr(mine, name), getattr(theirs, name)
                if theirs is None:
                    assert mine is None, relation
                    break
                assert field_values(mine) == field_values(theirs), relation


# --- the scan's reads --------------------------------------------------------------------------------------


def test_a_cables_ends_with_places_are_what_select_related_loads(fabric, technician):
    CableEnd.objects.filter(cable=fabric.breakout, side="B", position=1).update(
        confirmed_by=technician, confirmed_at=timezone.now())
    for cable in (fabric.c1, fabric.breakout, fabric.oob):
        loaded = list(CableEnd.objects.select_related(*END_RELATIONS).filter(cable=cable).order_by("side", "position"))
        built = sql.cable_ends_with_places(cable_id=cable.pk)
        assert [field_values(end) for end in built] == [field_values(end) for end in loaded]
        for mine, theirs in zip(built, loaded, strict=True):
            assert field_values(mine.port) == field_values(theirs.port)
            assert field_values(mine.port.device) == field_values(theirs.port.device)
            # Only what the answer shows of these is read: the rack's name, the model's height, the user's names.
            assert (mine.port.device.rack.pk, mine.port.device.rack.name) == (theirs.port.device.rack.pk,
                                                                              theirs.port.device.rack.name)
            assert (mine.port.device.hardware_model.pk, mine.port.device.hardware_model.height_u) == (
                theirs.port.device.hardware_model.pk, theirs.port.device.hardware_model.height_u)
            assert (getattr(mine.confirmed_by, "username", None) == getattr(theirs.confirmed_by, "username", None))
    assert sql.cable_ends_with_places(cable_id=fabric.c1.pk + 10_000) == []


def test_the_locked_cable_is_the_cable(fabric):
    with transaction.atomic():
        assert field_values(sql.cable_locked(cable_id=fabric.c1.pk)) == field_values(Cable.objects.get(pk=fabric.c1.pk))
    with pytest.raises(Cable.DoesNotExist), transaction.atomic():
        sql.cable_locked(cable_id=fabric.foreign.pk + 10_000)


def test_a_devices_written_out_read_loads_what_select_related_loads(fabric, technician):
    racked = Device.objects.filter(project=fabric.project, rack__isnull=False).first()
    Device.objects.filter(pk=racked.pk).update(racked_by=technician, racked_at=timezone.now())
    unplaced = Device.objects.create(project=fabric.project, name="spare-01", hardware_model=racked.hardware_model)
    for device in (racked, unplaced):
        by_orm = Device.objects.select_related("rack", "hardware_model", "racked_by").get(pk=device.pk)
        built = sql.device_with_place(device_id=device.pk)
        same([built], [by_orm], "rack", "hardware_model")
        assert getattr(built.racked_by, "pk", None) == getattr(by_orm.racked_by, "pk", None)
    assert sql.device_with_place(device_id=racked.pk).racked_by.username == technician.username
    with pytest.raises(Device.DoesNotExist):
        sql.device_with_place(device_id=unplaced.pk + 1000)


# --- the lookups of a code ---------------------------------------------------------------------------------


@pytest.mark.parametrize("lock", [False, True])
def test_cable_ends_by_code_are_the_orms_iexact(fabric, lock):
    project = fabric.project
    for label, side, limit in (("C00005", "B", 20), ("c00005", "B", 1), ("c00001", "A", 20),
                               ("C00001-FOREIGN", "A", 20), ("nothing", "A", 20)):
        ends = CableEnd.objects.select_related("cable", "port__device")
        loaded = list(ends.filter(cable__project=project, cable__label__iexact=label, side=side)
                      .order_by("position")[:limit])
        with transaction.atomic():
            built = sql.cable_ends_by_code(project_id=project.pk, label=label, side=side, limit=limit, lock=lock)
        same(built, loaded, "cable", "port", "port__device")


def test_ports_by_name_are_the_orms_iexact(fabric):
    project = fabric.project
    for device, port, limit in (("LEAF-01", "P1", 20), ("leaf-01", "p1", 1), ("gpu-001", "IB0/0", 20),
                                ("foreign-sw", "p1", 20), ("leaf-01", "nothing", 20)):
        loaded = list(Port.objects.select_related("device").filter(
            device__project=project, device__name__iexact=device, name__iexact=port
        ).order_by("device_id", "id")[:limit])
        same(sql.ports_by_name(project_id=project.pk, device=device, port=port, limit=limit), loaded, "device")


def test_port_by_names_is_the_orms_exact_match(fabric):
    project = fabric.project
    for device, port in (("leaf-01", "p1"), ("LEAF-01", "p1"), ("gpu-003", "ib0"), ("foreign-sw", "p1")):
        loaded = Port.objects.select_related("device").filter(device__project=project, device__name=device,
                                                              name=port).first()
        built = sql.port_by_names(project_id=project.pk, device=device, port=port)
        same([built] if built else [], [loaded] if loaded else [], "device")


def test_cables_devices_and_optics_by_text_are_the_orms_iexact(fabric):
    project = fabric.project
    Device.objects.filter(pk=fabric.gpu2.pk).update(serial="SN-0002", asset_tag="AT-0002")
    Device.objects.filter(pk=fabric.leaf1.pk).update(serial="at-0002")  # another device, matched by serial
    seated = OpticFactory(project=project, serial="MT-1", part_number="B", status=OpticStatus.INSTALLED,
                          port=Port.objects.get(device=fabric.leaf1, name="p1"))
    spare = OpticFactory(project=project, serial="mt-1", part_number="A")
    OpticFactory(project=fabric.foreign.project, serial="MT-1")
    assert seated.port_id and spare.port_id is None
    for text, limit in (("c00001", 20), ("C00001-FOREIGN", 20), ("at-0002", 20), ("AT-0002", 1), ("GPU-001", 20),
                        ("sn-0002", 20), ("Mt-1", 20), ("mt-1", 1), ("nothing", 20)):
        same(sql.cables_by_label(project_id=project.pk, text=text, limit=limit),
             list(Cable.objects.filter(project=project, label__iexact=text).order_by("label")[:limit]))
        same(sql.devices_by_text(project_id=project.pk, text=text, limit=limit),
             list(Device.objects.filter(Q(serial__iexact=text) | Q(asset_tag__iexact=text) | Q(name__iexact=text),
                                        project=project).order_by("name")[:limit]))
        same(sql.optics_by_serial(project_id=project.pk, text=text, limit=limit),
             list(Optic.objects.select_related("port__device").filter(project=project, serial__iexact=text)
                  .order_by("part_number", "serial")[:limit]), "port", "port__device")


# --- a topology comparison's moves -------------------------------------------------------------------------


def _ports_moving(ids, target) -> list[int]:
    """What the ORM says a move to `target` moves: the ports named, not in `target`, nor kept."""
    return sorted(Port.objects.filter(pk__in=list(ids)).exclude(status=target).exclude(status__in=KEPT)
                  .values_list("pk", flat=True))


def _fabric_ports(fabric) -> list[int]:
    ports = list(CableEnd.objects.filter(cable__project=fabric.project).order_by("port_id")
                 .values_list("port_id", flat=True))
    Port.objects.filter(pk=ports[0]).update(status=PortStatus.DISABLED)  # a person's: kept
    Port.objects.filter(pk__in=ports[1:4]).update(status=PortStatus.UP)  # moved already
    return ports


def test_ports_move_returning_moves_what_the_orm_would(fabric):
    if not sql.update_returning_supported():
        pytest.skip("this SQLite has no UPDATE ... RETURNING: fabric_states locks, reads and updates instead")
    ports = _fabric_ports(fabric)
    expected = _ports_moving(ports[:10], PortStatus.UP)
    with transaction.atomic():
        moved = sql.ports_move_returning(ports=ports[:10], target=PortStatus.UP, cause="seen", kept=KEPT)
    assert sorted(moved) == expected and len(expected) == 6
    # The same move named by a query of port ids, as fabric_states names the ports of the cables it saw.
    seen = CableEnd.objects.filter(cable__project=fabric.project).order_by().values("port_id")
    expected = _ports_moving(ports, PortStatus.DOWN)
    with transaction.atomic():
        moved = sql.ports_move_returning(ports=seen, target=PortStatus.DOWN, cause="gone", kept=KEPT)
    assert sorted(moved) == expected and len(expected) == len(ports) - 1
    assert set(Port.objects.filter(pk__in=ports).values_list("status", "status_cause")) == {
        (PortStatus.DISABLED, ""), (PortStatus.DOWN, "gone")}


def test_ports_move_recorded_moves_and_records_what_the_orm_would(fabric, technician):
    postgresql_only("a port move with its history rows in one statement")
    ports = _fabric_ports(fabric)
    seen = CableEnd.objects.filter(cable__project=fabric.project).order_by().values("port_id")
    expected = _ports_moving(ports, PortStatus.UP)
    at = timezone.now()
    with transaction.atomic():
        moved = sql.ports_move_recorded(ports=seen, target=PortStatus.UP, cause="seen", kept=KEPT, user=technician,
                                        at=at)
    assert moved == len(expected) == len(ports) - 4
    assert sorted(Port.objects.filter(status_cause="seen").values_list("pk", flat=True)) == expected
    assert history_as_rows_now(Port, at, "seen") == (moved, 0)  # one history row each, the row as it now is
    assert set(Port.history.filter(history_date=at).values_list("history_user", "history_type")) == {
        (technician.pk, "~")}


def test_cables_update_recorded_updates_and_records_what_the_orm_would(fabric, technician):
    postgresql_only("a cable update with its history rows in one statement")
    ids = [fabric.c1.pk, fabric.c2.pk, fabric.foreign.pk]
    at = timezone.now()
    values = {"status": CableStatus.VERIFIED, "fabric_state": FabricState.OK, "fabric_checked_at": at,
              "status_cause": "seen"}
    with transaction.atomic():
        changed = sql.cables_update_recorded(ids=ids, values=values, user=technician, reason="seen", at=at)
    assert changed == Cable.objects.filter(pk__in=ids, **values).count() == 3
    assert history_as_rows_now(Cable, at, "seen") == (3, 0)
