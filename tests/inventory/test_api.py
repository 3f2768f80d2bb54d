"""The inventory API: writes through the services, 400s that name the field (never a 500), rack
power, filters, token and session auth, and list query counts that do not grow with the rows.
Who may see and write what is in tests/projects/test_api_scoping.py."""

import pytest
from django.db import IntegrityError
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.exceptions import ValidationError
from rest_framework.test import APIClient

from core.api.exceptions import django_errors_as_400
from inventory import services
from inventory.choices import HardwareKind, OpticStatus, PortKind, PortStatus
from inventory.models import Device, DeviceUnit, Nic, Optic, Port, PortTemplate, Rack, Site
from projects.choices import Role
from tests.factories import (
    HardwareModelFactory,
    MembershipFactory,
    OpticFactory,
    ProjectFactory,
    RackFactory,
    SiteFactory,
    gpu_server_model,
)
from tests.support import count_queries

pytestmark = pytest.mark.django_db

GPU_PN = "TEST-B300-8GPU"  # gpu_server_model(): 10U, 8 x 800G ports of 4 lanes, BMC


@pytest.fixture
def gpu_model(db):
    return gpu_server_model()


@pytest.fixture
def rack(project):
    rack = RackFactory(project=project, name="R1", row="A", position=1, height_u=48, power_budget_w=40000)
    rack.site.name = "Hall 0"
    rack.site.save()
    return rack


@pytest.fixture
def gpu(project, rack, gpu_model):
    """gpu-001: a 10U GPU server at U1-U10 of R1, made by the service with its NICs, ports and lanes."""
    return services.device_create(
        project=project, hardware_model=gpu_model, name="gpu-001", rack=rack, position_u=1, serial="SN-001"
    )


@pytest.fixture
def tech_api(api_for, technician):
    return api_for(technician)


def url(basename: str, pk=None) -> str:
    return reverse(f"{basename}-list") if pk is None else reverse(f"{basename}-detail", args=[pk])


# --- devices through the services -------------------------------------------------------------


def test_creating_a_device_makes_its_nics_ports_lanes_and_unit_claims(tech_api, project, rack, gpu_model):
    response = tech_api.post(
        url("device"),
        {
            "project": project.code,
            "name": "gpu-002",
            "hardware_model": gpu_model.part_number,
            "rack": "R1",
            "position_u": 11,
            "role": "gpu_node",
            "serial": "SN-002",
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["rack"], body["position_u"], body["project"]) == ("R1", 11, project.code)
    assert (body["port_count"], body["lane_count"]) == (9, 32)  # 8 x 800G + BMC; 8 x 4 plane lanes
    device = Device.objects.get(pk=body["id"])
    assert device.nics.count() == 8
    assert sorted(device.ports.filter(parent__name="ib3").values_list("plane", flat=True)) == [0, 1, 2, 3]
    assert sorted(
        DeviceUnit.objects.filter(device=device, face="front").values_list("unit", flat=True)
    ) == list(range(11, 21))


def test_moving_a_device_reclaims_its_units(tech_api, gpu):
    response = tech_api.patch(url("device", gpu.pk), {"position_u": 21}, format="json")
    assert response.status_code == 200, response.json()
    units = set(DeviceUnit.objects.filter(device=gpu).values_list("unit", flat=True))
    assert units == set(range(21, 31))


def test_hardware_model_of_a_device_cannot_change(tech_api, gpu):
    other = HardwareModelFactory(part_number="PN-SWITCH")
    response = tech_api.patch(url("device", gpu.pk), {"hardware_model": "PN-SWITCH"}, format="json")
    assert response.status_code == 400 and "hardware_model" in response.json()
    gpu.refresh_from_db()
    assert gpu.hardware_model_id != other.pk


def test_project_of_a_row_cannot_change(api_for, tech_api, technician, gpu):
    second = ProjectFactory(code="SECOND-1")
    MembershipFactory(user=technician, project=second, role=Role.TECHNICIAN)
    response = api_for(technician).patch(url("device", gpu.pk), {"project": "SECOND-1"}, format="json")
    assert response.status_code == 400 and "project" in response.json()
    gpu.refresh_from_db()
    assert gpu.project.code == "ACME-72"


# --- 400s that name the field -----------------------------------------------------------------


@pytest.fixture
def scene(project, other_project, rack, gpu, gpu_model):
    """What the bad payloads bump into: gpu-001 at U1-10 of R1 with an optic in ib0/0, a rack and a
    port of another project, a 1U box that could go at U20."""
    their_rack = RackFactory(project=other_project, name="R-THEIRS")
    their_rack.site.name = "Hall THEIRS"
    their_rack.site.save()
    theirs = services.device_create(project=other_project, hardware_model=gpu_model, name="gpu-900")
    seated = OpticFactory(project=project, serial="MT-SEATED")
    services.optic_install(optic=seated, port=gpu.ports.get(name="ib0/0"))
    return {
        "gpu_id": gpu.pk,
        "box": HardwareModelFactory(part_number="PN-1U", height_u=1),
        "occupied_port": gpu.ports.get(name="ib0/0").pk,
        "free_port": gpu.ports.get(name="ib1/0").pk,
        "their_port": theirs.ports.get(name="ib0/0").pk,
        "lone_optic": OpticFactory(project=project, serial="MT-LONE").pk,
        "nic_of_gpu": gpu.nics.get(slot="nic0").pk,
        "other_device": services.device_create(
            project=project,
            hardware_model=HardwareModelFactory(part_number="PN-0U", height_u=1),
            name="pdu-01",
        ).pk,
    }


def device_payload(**overrides):
    return {
        "project": "ACME-72",
        "name": "box-01",
        "hardware_model": "PN-1U",
        "rack": "R1",
        "position_u": 20,
        **overrides,
    }


def optic_payload(**overrides):
    return {
        "project": "ACME-72",
        "vendor": "NVIDIA",
        "part_number": "980-9I693-00NS00",
        "serial": "MT-NEW",
        "form_factor": "osfp",
        "speed_gbps": 800,
        **overrides,
    }


def rack_payload(**overrides):
    return {
        "project": "ACME-72",
        "site": "Hall 0",
        "name": "R2",
        "row": "B",
        "position": 1,
        "height_u": 48,
        "power_budget_w": 30000,
        **overrides,
    }


def without(payload: dict, key: str) -> dict:
    return {k: v for k, v in payload.items() if k != key}


def post(case: str, basename: str, payload, field: str):
    """A bad create. `payload` is a dict, or a function of the scene for ids known only at run time."""
    return pytest.param("post", basename, None, payload, field, id=case)


def patch(case: str, basename: str, target: str, payload, field: str):
    """A bad change of scene[target]."""
    return pytest.param("patch", basename, target, payload, field, id=case)


def port_payload(on: str = "gpu_id", **overrides):
    return lambda s: {"device": s[on], "name": "p9", "kind": "ethernet", "speed_gbps": 1, **overrides}


BAD_PAYLOADS = [
    post("device bad choice", "device", device_payload(status="exploded"), "status"),
    post("device bad face", "device", device_payload(face="side"), "face"),
    post("device missing model", "device", without(device_payload(), "hardware_model"), "hardware_model"),
    post("device missing name", "device", without(device_payload(), "name"), "name"),
    post("device unknown model", "device", device_payload(hardware_model="NOPE"), "hardware_model"),
    post("device overlap", "device", device_payload(position_u=5), "position_u"),
    post("device sticks out", "device", device_payload(position_u=48, hardware_model=GPU_PN), "position_u"),
    post("device U zero", "device", device_payload(position_u=0), "position_u"),
    post("device non-numeric U", "device", device_payload(position_u="five"), "position_u"),
    post("device U without rack", "device", device_payload(rack=None), "position_u"),
    post("device rack of another project", "device", device_payload(rack="R-THEIRS"), "rack"),
    post("device duplicate name", "device", device_payload(name="gpu-001"), "name"),
    post("device duplicate serial", "device", device_payload(serial="SN-001"), "serial"),
    post("device bad address", "device", device_payload(oob_address="10.0.0.300"), "oob_address"),
    patch(
        "device moved onto another", "device", "other_device", {"rack": "R1", "position_u": 3}, "position_u"
    ),
    patch("device renamed to a taken name", "device", "other_device", {"name": "gpu-001"}, "name"),
    post("optic duplicate serial", "optic", optic_payload(serial="MT-SEATED"), "serial"),
    post("optic bad form factor", "optic", optic_payload(form_factor="sfp99"), "form_factor"),
    post("optic non-numeric speed", "optic", optic_payload(speed_gbps="fast"), "speed_gbps"),
    post("second optic in a port", "optic", lambda s: optic_payload(port=s["occupied_port"]), "port"),
    patch(
        "second optic moved into a port",
        "optic",
        "lone_optic",
        lambda s: {"port": s["occupied_port"]},
        "port",
    ),
    post("optic into another project's port", "optic", lambda s: optic_payload(port=s["their_port"]), "port"),
    post("optic installed without a port", "optic", optic_payload(status="installed"), "port"),
    post(
        "optic in a port but in stock",
        "optic",
        lambda s: optic_payload(port=s["free_port"], status="in_stock"),
        "status",
    ),
    post("rack missing budget", "rack", without(rack_payload(), "power_budget_w"), "power_budget_w"),
    post("rack bad status", "rack", rack_payload(status="on_fire"), "status"),
    post("rack non-numeric height", "rack", rack_payload(height_u="tall"), "height_u"),
    post("rack too tall", "rack", rack_payload(height_u=99), "height_u"),
    post("rack duplicate name", "rack", rack_payload(name="R1"), "name"),
    post("rack site of another project", "rack", rack_payload(site="Hall THEIRS"), "site"),
    post("rack position taken", "rack", rack_payload(row="A", position=1), "position"),
    post(
        "nic duplicate slot", "nic", lambda s: {"device": s["gpu_id"], "slot": "nic0", "model": "CX8"}, "slot"
    ),
    post("nic unknown device", "nic", {"device": 999999, "slot": "x", "model": "CX8"}, "device"),
    post("port bad kind", "port", port_payload(kind="pigeon"), "kind"),
    post(
        "port nic of another device",
        "port",
        lambda s: {**port_payload(on="other_device")(s), "nic": s["nic_of_gpu"]},
        "nic",
    ),
    post("port lane without parent", "port", port_payload(lane=2), "lane"),
    post("port duplicate name", "port", port_payload(name="ib0"), "name"),
    post("site duplicate name", "site", {"project": "ACME-72", "name": "Hall 0"}, "name"),
]


@pytest.mark.parametrize(("method", "basename", "target", "payload", "field"), BAD_PAYLOADS)
def test_bad_input_gets_400_naming_the_field(tech_api, scene, method, basename, target, payload, field):
    models = {"device": Device, "optic": Optic, "rack": Rack, "nic": Nic, "port": Port, "site": Site}
    before = models[basename].objects.count()
    endpoint = url(basename, scene[target] if target else None)
    response = getattr(tech_api, method)(
        endpoint, payload(scene) if callable(payload) else payload, format="json"
    )
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert models[basename].objects.count() == before


def test_the_overlap_error_says_where_and_with_whom(tech_api, scene):
    response = tech_api.post(url("device"), device_payload(position_u=5), format="json")
    assert response.json()["position_u"] == ["U5 of rack R1 is already taken by gpu-001."]


def test_a_refused_device_leaves_no_ports_or_claims_behind(tech_api, scene):
    ports, units = Port.objects.count(), DeviceUnit.objects.count()
    response = tech_api.post(
        url("device"), device_payload(position_u=48, hardware_model=GPU_PN), format="json"
    )
    assert response.status_code == 400
    assert (Port.objects.count(), DeviceUnit.objects.count()) == (ports, units)


@pytest.mark.parametrize(
    "message",
    [
        "UNIQUE constraint failed: inventory_device.project_id, inventory_device.name",
        'duplicate key value violates unique constraint "device_name_unique_in_project"\n'
        "DETAIL:  Key (project_id, name)=(1, gpu-001) already exists.",
    ],
    ids=["sqlite", "postgresql"],
)
def test_a_unique_rule_lost_to_a_race_is_a_400_on_the_field(message):
    """validate() checks names first; if another request wins in between, the database's refusal
    still becomes a 400 on the field, not a 500."""
    with pytest.raises(ValidationError) as refused, django_errors_as_400({"project", "name", "serial"}):
        raise IntegrityError(message)
    assert set(refused.value.detail) == {"name"}


def test_deleting_a_rack_that_holds_devices_is_a_409_not_a_500(tech_api, gpu, rack):
    response = tech_api.delete(url("rack", rack.pk))
    assert response.status_code == 409
    assert "gpu-001" in response.json()["detail"]


# --- optics -----------------------------------------------------------------------------------


def test_optic_is_seated_in_a_port_and_taken_out_again(tech_api, project, gpu):
    optic = OpticFactory(project=project, serial="MT-1")
    port = gpu.ports.get(name="ib2/1")
    seated = tech_api.patch(url("optic", optic.pk), {"port": port.pk}, format="json")
    assert seated.status_code == 200, seated.json()
    assert (seated.json()["status"], seated.json()["device"], seated.json()["port_name"]) == (
        OpticStatus.INSTALLED,
        "gpu-001",
        "ib2/1",
    )
    assert Port.objects.get(pk=port.pk).optic.serial == "MT-1"
    out = tech_api.patch(url("optic", optic.pk), {"port": None, "status": "faulty"}, format="json")
    assert out.status_code == 200, out.json()
    assert (out.json()["port"], out.json()["status"]) == (None, OpticStatus.FAULTY)


def test_optic_created_straight_into_a_port_is_installed(tech_api, gpu):
    port = gpu.ports.get(name="ib5")
    response = tech_api.post(url("optic"), optic_payload(port=port.pk), format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["status"] == OpticStatus.INSTALLED
    assert Optic.objects.get(serial="MT-NEW").port_id == port.pk


# --- racks and power --------------------------------------------------------------------------


def test_rack_exposes_power_used_budget_headroom_and_flag(api_for, customer, project, gpu_model):
    rack = RackFactory(project=project, name="R-PWR", power_budget_w=32000)
    services.device_create(project=project, hardware_model=gpu_model, name="gpu-a", rack=rack, position_u=1)
    api = api_for(customer)
    body = api.get(url("rack", rack.pk)).json()
    assert (body["power_used_w"], body["power_budget_w"], body["device_count"]) == (14300, 32000, 1)
    assert body["headroom"] == pytest.approx(0.553, abs=0.001)
    assert body["power_flagged"] is False
    services.device_create(project=project, hardware_model=gpu_model, name="gpu-b", rack=rack, position_u=11)
    body = api.get(url("rack", rack.pk)).json()
    assert body["power_used_w"] == 28600
    assert body["headroom"] == pytest.approx(0.106, abs=0.001)  # under the 20% rule
    assert body["power_flagged"] is True


# --- hardware catalogue -----------------------------------------------------------------------


def test_hardware_model_detail_nests_its_nic_and_port_templates(api_for, customer, gpu_model):
    body = api_for(customer).get(url("hardware-model", gpu_model.pk)).json()
    assert body["port_count"] == 9
    assert [n["slot"] for n in body["nic_templates"]] == [f"nic{i}" for i in range(8)]
    ib0 = next(p for p in body["port_templates"] if p["name"] == "ib0")
    assert (ib0["speed_gbps"], ib0["breakout_lanes"], ib0["lane_speed_gbps"], ib0["nic_slot"]) == (
        800,
        4,
        200,
        "nic0",
    )
    assert next(p for p in body["port_templates"] if p["name"] == "bmc")["nic_slot"] is None


# --- filters ----------------------------------------------------------------------------------


def test_port_filter_by_device_and_plane_gives_the_eight_lanes_of_that_plane(
    tech_api, project, gpu, gpu_model
):
    services.device_create(project=project, hardware_model=gpu_model, name="gpu-002")
    body = tech_api.get(url("port"), {"device": "gpu-001", "plane": 2}).json()
    assert len(body["results"]) == 8 and body["next"] is None
    assert sorted(p["name"] for p in body["results"]) == [f"ib{i}/2" for i in range(8)]
    assert {(p["device_name"], p["plane"], p["lane"], p["speed_gbps"]) for p in body["results"]} == {
        ("gpu-001", 2, 2, 200)
    }
    assert all(p["parent"] is not None and p["nic"] is not None for p in body["results"])


def test_an_outsider_filtering_by_the_project_code_sees_no_port_and_cannot_patch_one(
    api_for, outsider, project, gpu
):
    api = api_for(outsider)
    assert api.get(url("port"), {"project": project.code, "device": "gpu-001"}).json()["results"] == []
    port = gpu.ports.get(name="ib0")
    assert api.patch(f"{url('port')}{port.pk}/", {"status": PortStatus.DOWN}, format="json").status_code == 404
    port.refresh_from_db()
    assert port.status != PortStatus.DOWN


@pytest.mark.parametrize(
    ("basename", "query", "expected"),
    [
        ("device", {"rack": "R1"}, ["gpu-001"]),
        ("device", {"kind": "gpu_server", "q": "002"}, ["gpu-002"]),
        ("rack", {"q": "R1"}, ["R1"]),
        ("nic", {"device": "gpu-002", "model": "connectx"}, [f"nic{i}" for i in range(8)]),
        ("optic", {"status": "installed"}, ["MT-IN"]),
        ("optic", {"device": "gpu-001"}, ["MT-IN"]),
        ("port", {"device": "gpu-002", "is_lane": "false", "kind": "bmc"}, ["bmc"]),
        ("hardware-model", {"kind": "gpu_server"}, ["TEST-B300-8GPU"]),
    ],
)
def test_filters_narrow_the_lists(tech_api, project, rack, gpu, gpu_model, basename, query, expected):
    services.device_create(project=project, hardware_model=gpu_model, name="gpu-002")
    RackFactory(project=project, name="R2")
    HardwareModelFactory(kind=HardwareKind.PDU)
    services.optic_install(
        optic=OpticFactory(project=project, serial="MT-IN"), port=gpu.ports.get(name="ib0")
    )
    OpticFactory(project=project, serial="MT-SPARE")
    key = {
        "device": "name",
        "rack": "name",
        "nic": "slot",
        "optic": "serial",
        "port": "name",
        "hardware-model": "part_number",
    }[basename]
    unfiltered = tech_api.get(url(basename)).json()  # one page holds them all: no next
    body = tech_api.get(url(basename), query).json()
    assert sorted(row[key] for row in body["results"]) == sorted(expected)
    assert len(body["results"]) < len(unfiltered["results"]) and unfiltered.get("next") is None


# --- authentication ---------------------------------------------------------------------------


def test_token_obtained_with_a_password_authenticates(technician, rack):
    api = APIClient()
    response = api.post(
        reverse("api-token"), {"username": "tech", "password": "pw-for-tests-1"}, format="json"
    )
    assert response.status_code == 200, response.json()
    token = response.json()["token"]
    assert token == Token.objects.get(user=technician).key
    assert APIClient().get(url("rack")).status_code in (401, 403)
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    body = api.get(url("rack")).json()
    assert [r["name"] for r in body["results"]] == ["R1"]


def test_a_created_token_authenticates_writes(technician, project, rack, gpu_model):
    token = Token.objects.create(user=technician)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = api.post(
        url("device"),
        {"project": project.code, "name": "gpu-t", "hardware_model": gpu_model.part_number},
        format="json",
    )
    assert response.status_code == 201, response.json()
    assert Device.objects.get(name="gpu-t").history.first().history_user == technician


def test_a_wrong_token_is_refused(technician):
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert api.get(url("rack")).status_code in (401, 403)


def test_session_login_works_for_the_api(client, technician, rack):
    client.force_login(technician)
    response = client.get(url("rack"))
    assert response.status_code == 200
    assert [r["name"] for r in response.json()["results"]] == ["R1"]


# --- query counts -----------------------------------------------------------------------------


def _grow(basename: str, project, user, n: int) -> None:
    """Add n rows that `user` can see to the list behind `basename`, with the relations it shows."""
    if basename == "site":
        SiteFactory.create_batch(n, project=project)
    elif basename == "rack":
        RackFactory.create_batch(n, project=project)
    elif basename == "device":
        model = HardwareModelFactory(height_u=1)
        for i in range(n):
            services.device_create(
                project=project,
                hardware_model=model,
                name=f"d{n}-{i}",
                rack=RackFactory(project=project),
                position_u=1,
            )
    elif basename in ("nic", "port"):
        device = services.device_create(project=project, hardware_model=HardwareModelFactory(), name=f"h{n}")
        for i in range(n):
            nic = Nic.objects.create(device=device, slot=f"s{i}", model="CX8")
            if basename == "port":
                parent = (
                    Port.objects.create(
                        device=device, nic=nic, name=f"p{i}", kind=PortKind.ETHERNET, speed_gbps=400
                    )
                    if i % 2
                    else None
                )
                Port.objects.create(
                    device=device,
                    nic=nic,
                    parent=parent,
                    lane=0 if parent else None,
                    name=f"p{i}/0",
                    kind=PortKind.ETHERNET,
                    speed_gbps=200,
                )
    elif basename == "optic":
        device = services.device_create(project=project, hardware_model=HardwareModelFactory(), name=f"o{n}")
        for i in range(n):
            optic = OpticFactory(project=project)
            if i % 2:
                port = Port.objects.create(
                    device=device, name=f"q{i}", kind=PortKind.ETHERNET, speed_gbps=400
                )
                services.optic_install(optic=optic, port=port)
    elif basename == "membership":
        MembershipFactory.create_batch(n, project=project, role=Role.CUSTOMER)
    elif basename == "project":
        for _ in range(n):
            MembershipFactory(user=user, project=ProjectFactory(), role=Role.CUSTOMER)
    elif basename == "hardware-model":
        for _ in range(n):
            PortTemplate.objects.create(
                hardware_model=HardwareModelFactory(), name="eth0", kind=PortKind.ETHERNET, speed_gbps=100
            )


CURSOR_LISTS = {"device", "nic", "port", "optic"}  # core.api.pagination.BigListPagination


@pytest.mark.parametrize(
    "basename", ["site", "rack", "device", "nic", "port", "optic", "membership", "project", "hardware-model"]
)
def test_list_query_count_is_the_same_with_5_and_50_rows(
    api_for, manager, project, django_assert_num_queries, basename
):
    api = api_for(manager)
    _grow(basename, project, manager, 5)
    first = {}
    few = count_queries(lambda: first.update(api.get(url(basename)).json()))
    _grow(basename, project, manager, 45)
    with django_assert_num_queries(few):
        second = api.get(url(basename)).json()
    assert len(first["results"]) >= 5
    assert len(second["results"]) >= len(first["results"]) + 45 and second.get("next") is None  # one page
    # Numbered pages: the count and the rows, joined; cursor pages (the big lists): the rows alone.
    assert few == (1 if basename in CURSOR_LISTS else 2)
