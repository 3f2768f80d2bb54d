"""plan_apply writes in bulk (rows, not model instances; COPY on PostgreSQL) with a history row for every row it
creates, copied by the database: its queries do not grow with the fabric, and the history names the plan and
who applied it, on the rows' pages too. COPY takes hostile text exactly; a refusal of the database (a port or a
rack unit taken since the check, a value a column cannot hold) is a refusal in words with nothing written."""

from __future__ import annotations

from decimal import Decimal

import pytest
import yaml
from django.db import connection, transaction
from django.urls import reverse

from cabling.models import Cable, CableEnd
from cabling.services import plan_apply
from cabling.services.diff import PlanNotApplied
from cabling.services.plan_rules import plan_of
from core.bulk_history import insert_rows, reserve_ids
from core.history import history_rows
from inventory.models import Device, DeviceUnit, HardwareModel, Nic, Port, Rack
from inventory.services.devices import components_create
from tests.cabling.test_plan_apply import fabric72_catalogue, small_spec, snapshot
from tests.factories import ProjectFactory
from tests.support import count_queries, postgresql_only

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalogue(db):
    fabric72_catalogue()


def test_the_queries_of_an_apply_do_not_grow_with_the_fabric(catalogue):
    queries = {}
    for servers in (4, 16):
        project = ProjectFactory(code=f"BULK-{servers}")
        queries[servers] = count_queries(lambda project=project, servers=servers: plan_apply(
            project=project, spec_text=small_spec(servers)))
        assert Device.objects.filter(project=project, hardware_model__part_number="B300-8GPU").count() == servers
        assert Cable.objects.filter(project=project).count() > 0
    assert queries[4] == queries[16], queries
    # Every row the apply made is there, with its ends on distinct ports (the database keeps one end per port).
    ends = CableEnd.objects.filter(cable__project__code="BULK-16")
    assert ends.count() == 2 * Cable.objects.filter(project__code="BULK-16").count()
    assert ends.values("port").distinct().count() == ends.count()


def test_every_created_row_has_a_history_row_naming_the_plan(catalogue, project, manager, client_for):
    plan_apply(project=project, spec_text=small_spec(4), user=manager)
    reason = "Fabric plan mini-4 applied"
    for model, rows in (
        (Rack, Rack.objects.filter(project=project)),
        (Device, Device.objects.filter(project=project)),
        (Nic, Nic.objects.filter(device__project=project)),
        (Port, Port.objects.filter(device__project=project)),
        (Cable, Cable.objects.filter(project=project)),
        (CableEnd, CableEnd.objects.filter(cable__project=project)),
    ):
        history = model.history.filter(id__in=rows.values("pk"))
        assert history.count() == rows.count() > 0, model
        assert set(history.values_list("history_type", "history_user", "history_change_reason")) == {
            ("+", manager.pk, reason)}, model
        assert history.values("history_date").distinct().count() == 1  # one apply, one moment
    # The history row is the row as it was written: a lane's plane, a cable's label.
    cable = Cable.objects.filter(project=project).order_by("label").first()
    assert cable.history.get().label == cable.label
    lane = Port.objects.filter(device__project=project, lane__isnull=False).first()
    assert lane.history.get().plane == lane.plane
    (shown,) = history_rows(cable.history.all())
    assert (shown.kind, shown.user, shown.reason) == ("Created", manager.username, reason)
    body = client_for(manager).get(reverse("cabling:cable-detail", args=[project.code, cable.pk]))
    section = body.content.decode().split('id="history"', 1)[1]
    assert "Created" in section and reason in section and manager.username in section


def test_an_outsider_does_not_see_an_applied_cable(catalogue, project, outsider, client_for):
    plan_apply(project=project, spec_text=small_spec(4))
    cable = Cable.objects.filter(project=project).first()
    address = reverse("cabling:cable-detail", args=[project.code, cable.pk])
    assert client_for(outsider).get(address).status_code == 404


HOSTILE = ["tab\there", "line\nfeed", "crlf\r\nend", "back\\slash\\", "\\N", "=1+2", "", "'; DROP TABLE x; --",
           "\\.", "quote\"d", "ünïcødé ✓"]


def test_copy_takes_hostile_text_and_nulls_exactly_as_given(project):
    """COPY's text format gives tab, newline, backslash and \\N meanings of their own: every value must come back as
    it was sent, a None as NULL and the text "\\N" as that text."""
    postgresql_only("COPY")
    rows = [{"project_id": project.pk, "label": f"H{i:02d}", "part_number": text, "serial": text, "status_cause": text,
             "cable_type": "dac", "length_m": Decimal("1.5"), "speed_gbps": 800, "network": "compute",
             "plane": None if i % 2 else i, "verified_at": None}
            for i, text in enumerate(HOSTILE)]
    ids = insert_rows(Cable, rows)
    back = {c.pk: c for c in Cable.objects.filter(pk__in=ids)}
    for pk, row in zip(ids, rows, strict=True):
        cable = back[pk]
        assert (cable.label, cable.part_number, cable.serial, cable.status_cause) == (
            row["label"], row["part_number"], row["serial"], row["status_cause"])
        assert (cable.plane, cable.verified_at, cable.length_m) == (row["plane"], None, Decimal("1.5"))


def test_a_port_taken_while_the_plan_is_applied_refuses_it_and_writes_nothing(catalogue, project):
    """The cable ends' insert (COPY on PostgreSQL) hits the one-cable-per-port constraint: the apply is refused
    with words, not a 500, and every row it wrote is rolled back."""
    text = small_spec(4)
    first = plan_of(spec_text=text).cables[0].ends[0].port

    def squat(step, done, total):
        if (step, done) == ("cables", 0):  # after the check, before the ends are written: another writer
            port = Port.objects.get(device__project=project, device__name=first.device, name=first.name)
            cable = Cable.objects.create(project=project, label="SQUAT", network="compute", cable_type="dac",
                                         length_m=Decimal("1.0"), speed_gbps=800)
            CableEnd.objects.create(cable=cable, side="A", port=port)

    before = snapshot(project)
    with pytest.raises(PlanNotApplied) as refused:
        plan_apply(project=project, spec_text=text, progress=squat)
    assert refused.value.messages == [
        "A port was taken by another cable while the plan was applied; nothing was applied."]
    assert snapshot(project) == before


def test_a_rack_unit_taken_while_the_plan_is_applied_names_the_device_and_writes_nothing(catalogue, project):
    """The rack units' insert (COPY on PostgreSQL) hits the one-device-per-U constraint after the check: the
    refusal names the device whose unit was taken and by whom."""
    text = small_spec(4)
    server = plan_of(spec_text=text).servers[0]

    def squat(step, done, total):
        if (step, done) == ("devices", 0):  # checked free, not claimed yet
            rack = Rack.objects.get(project=project, name=server.rack)
            squatter = Device.objects.create(project=project, hardware_model=HardwareModel.objects.get(
                part_number="B300-8GPU"), name="squatter")
            DeviceUnit.objects.create(device=squatter, rack=rack, unit=server.position_u + 1, face="front")

    before = snapshot(project)
    with pytest.raises(PlanNotApplied) as refused:
        plan_apply(project=project, spec_text=text, progress=squat)
    assert refused.value.messages == [
        f"{server.name}: U{server.position_u + 1} of rack {server.rack} is already taken by squatter."]
    assert snapshot(project) == before


def test_a_value_the_database_cannot_hold_is_refused_with_words(catalogue, project):
    """A spec's transceiver part with a NUL, which PostgreSQL text cannot hold (a part too long for its column is
    refused by the diff, naming the spec field): COPY raises a DataError, which the apply turns into a refusal
    (no 500), and nothing is written."""
    postgresql_only("COPY")
    data = yaml.safe_load(small_spec(4))
    data["servers"][0]["ports"][0]["optic"] = "OSFP\x00800G"
    before = snapshot(project)
    with pytest.raises(PlanNotApplied) as refused:
        plan_apply(project=project, spec_text=yaml.safe_dump(data, sort_keys=False))
    (message,) = refused.value.messages
    assert message.startswith("The database refused a value of the plan's cables (") and message.endswith(
        "); nothing was applied.")
    assert snapshot(project) == before


def test_ids_reserved_by_a_rolled_back_write_never_clash_with_a_later_row(project):
    """Reserve and write, roll back, reserve again. PostgreSQL's sequence never gives an id twice; SQLite rolls
    its sqlite_sequence back with the rows, so it may give the same ids again, but no row holds them. Either way
    the later write and a row saved the ordinary way afterwards get ids no row has."""
    site = project.sites.create(name="Hall 9")

    def racks(prefix):
        return [{"project_id": project.pk, "site_id": site.pk, "name": f"{prefix}{i}", "row": "Z", "position": i,
                 "power_budget_w": 0} for i in range(3)]

    with pytest.raises(RuntimeError), transaction.atomic():
        first = insert_rows(Rack, racks("GONE-"))
        assert Rack.objects.filter(pk__in=first).count() == 3
        raise RuntimeError("roll back")
    assert not Rack.objects.filter(pk__in=first).exists()
    again = reserve_ids(Rack, 3)
    assert again == sorted(again) and len(set(again)) == 3
    if connection.vendor == "postgresql":
        assert not set(first) & set(again)
    kept = insert_rows(Rack, racks("KEPT-"))
    assert not set(kept) & set(again)  # reserved ids are not given out again within the transaction
    later = Rack.objects.create(project=project, site=site, name="R-LATER", row="Z", position=9, power_budget_w=0)
    assert later.pk > max(kept + again)
    assert insert_rows(DeviceUnit, []) == []


@pytest.mark.django_db(transaction=True)
def test_reserving_ids_outside_a_transaction_is_refused_on_sqlite(catalogue):
    """On SQLite the reservation is only safe inside the transaction that writes the rows: outside one it refuses,
    and components_create (whose ids are reserved) opens its own."""
    project = ProjectFactory(code="RESERVE")
    if connection.vendor == "sqlite":
        with pytest.raises(RuntimeError, match="inside transaction.atomic"):
            reserve_ids(Rack, 2)
    device = Device.objects.create(project=project, hardware_model=HardwareModel.objects.get(
        part_number="B300-8GPU"), name="gpu-bare")
    ports = components_create([device])
    assert ports and Port.objects.filter(device=device).count() == len(ports)
