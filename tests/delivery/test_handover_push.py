"""The push of the as-built to a live NetBox (delivery.handover.push and services), against the fake
NetBox of tests/delivery/fake_netbox.py: a real HTTP server in this process, since no test reaches a real
NetBox. Dry run, apply, a second apply that writes nothing, updates, NetBox's refusals, the token's life,
the page and the netbox_push command."""

from __future__ import annotations

import io
import math
import socket
import time

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from cabling.choices import CableStatus
from cabling.models import Cable
from core.choices import JobStatus
from delivery.handover import push as push_module
from delivery.handover.services import (
    TOKEN_TTL,
    _fernet,
    netbox_push_record,
    netbox_push_run,
    netbox_push_start,
    token_unseal,
)
from delivery.models import NetBoxPush
from inventory.choices import PortKind
from inventory.models import Device, Optic, Port
from tests.cabling.conftest import fabric  # noqa: F401 - the fixture under `world`
from tests.delivery.fake_netbox import TOKEN, FakeNetBox
from tests.delivery.test_handover_export import handover_extras

pytestmark = pytest.mark.django_db

STEPS = ("sites", "racks", "manufacturers", "device_types", "device_roles", "devices", "interfaces", "lanes",
         "cables", "inventory_items")


@pytest.fixture
def world(request):
    """tests/delivery/test_handover_export.py's world: the cabling tests' fabric and the handover's extras."""
    return handover_extras(request.getfixturevalue("fabric"))


@pytest.fixture
def netbox():
    with FakeNetBox() as fake:
        yield fake


def run(project, url: str, *, apply: bool, token: str = TOKEN) -> NetBoxPush:
    """A push run in this process with its token, as the netbox_push command runs one."""
    push = netbox_push_record(project=project, url=url, apply=apply)
    return netbox_push_run(push_id=push.pk, token=token)


def counts(push: NetBoxPush) -> dict[str, tuple[int, int, int]]:
    return {step["key"]: (step["create"], step["update"], step["unchanged"]) for step in push.steps}


def expected_sizes(project) -> dict[str, int]:
    ports = Port.objects.filter(device__project=project, kind__in=[PortKind.ETHERNET, PortKind.INFINIBAND,
                                                                     PortKind.BMC])
    return {
        "devices": Device.objects.filter(project=project).count(),
        "interfaces": ports.filter(parent__isnull=True).count(),
        "lanes": ports.filter(parent__isnull=False).count(),
        "cables": Cable.objects.filter(project=project).count(),
        "inventory_items": Optic.objects.filter(project=project, port__isnull=False).count(),
    }


def test_a_dry_run_lists_what_would_be_created_and_writes_nothing(world, netbox):
    push = run(world.project, netbox.url, apply=False)
    assert push.status == JobStatus.DONE, push.errors
    assert tuple(counts(push)) == STEPS
    sizes = expected_sizes(world.project)
    for key, size in sizes.items():
        assert counts(push)[key] == (size, 0, 0), key
    assert counts(push)["sites"] == (1, 0, 0) and counts(push)["device_roles"] == (3, 0, 0)
    devices = next(step for step in push.steps if step["key"] == "devices")
    assert devices["examples"]["create"] == ["gpu-001", "gpu-002", "gpu-003", "leaf-01", "leaf-02"]
    assert netbox.writes() == []
    assert push.netbox_version == "4.2"


def test_an_apply_creates_everything_in_bulk_and_netbox_holds_the_as_built(world, netbox):
    push = run(world.project, netbox.url, apply=True)
    assert push.status == JobStatus.DONE, push.errors
    sizes = expected_sizes(world.project)
    assert len(netbox.objects("dcim/devices")) == sizes["devices"]
    assert len(netbox.objects("dcim/interfaces")) == sizes["interfaces"] + sizes["lanes"]
    # One POST per kind of object (fewer than BATCH of each here), never one per object.
    posts = [(path, n) for method, path, n in netbox.writes() if method == "POST"]
    assert len(posts) == len(STEPS)
    assert sum(n for _, n in posts) == sum(sum(c[:1]) for c in counts(push).values())

    interfaces = {(i["device"]["name"], i["name"]): i for i in netbox.objects("dcim/interfaces")}
    lane = interfaces[("gpu-001", "ib0/0")]
    assert lane["parent"]["id"] == interfaces[("gpu-001", "ib0")]["id"]
    assert (lane["type"]["value"], lane["speed"], lane["wwn"]) == ("infiniband-hdr", 200_000_000,
                                                                  "04:3F:72:03:00:AA:BB:CC")
    cables = {c["label"]: c for c in netbox.objects("dcim/cables")}
    breakout = cables["C00005"]
    assert [t["object"]["name"] for t in breakout["a_terminations"]] == ["ib0"]
    assert sorted((t["object"]["device"]["name"], t["object"]["name"]) for t in breakout["b_terminations"]) == [
        ("leaf-01", "p3"), ("leaf-02", "p3")]
    assert (breakout["length"], breakout["length_unit"]["value"], breakout["status"]["value"]) == (7.0, "m", "planned")
    [optic] = netbox.objects("dcim/inventory-items")
    assert (optic["device"]["name"], optic["serial"], optic["component"]["name"], optic["part_id"]) == (
        "gpu-001", "MT2420FT0001", "ib0", "980-9I693-00NS00")
    device = next(d for d in netbox.objects("dcim/devices") if d["name"] == "gpu-001")
    assert (device["rack"]["name"], device["position"], device["face"]["value"], device["serial"]) == (
        "A01", 1.0, "front", "SN-0001")


def test_a_second_apply_changes_nothing(world, netbox):
    assert run(world.project, netbox.url, apply=True).status == JobStatus.DONE
    netbox.clear_log()
    again = run(world.project, netbox.url, apply=True)
    assert again.status == JobStatus.DONE, again.errors
    assert netbox.writes() == []
    assert all(create == update == 0 for create, update, _ in counts(again).values())
    assert sum(unchanged for *_, unchanged in counts(again).values()) == again.progress_total


def test_a_change_in_bringup_is_an_update_and_only_the_changed_fields_are_sent(world, netbox):
    assert run(world.project, netbox.url, apply=True).status == JobStatus.DONE
    Cable.objects.filter(pk=world.c1.pk).update(status=CableStatus.VERIFIED)
    Device.objects.filter(pk=world.gpu2.pk).update(serial="SN-0002")
    netbox.clear_log()
    dry = run(world.project, netbox.url, apply=False)
    assert counts(dry)["devices"] == (0, 1, 5) and counts(dry)["cables"][1] == 1
    devices = next(step for step in dry.steps if step["key"] == "devices")
    assert devices["examples"]["update"] == [{"object": "gpu-002", "changes": {"serial": ["", "SN-0002"]}}]
    assert netbox.writes() == []
    applied = run(world.project, netbox.url, apply=True)
    assert applied.status == JobStatus.DONE
    patches = [(path, n) for method, path, n in netbox.writes() if method == "PATCH"]
    assert patches == [("/api/dcim/devices/", 1), ("/api/dcim/cables/", 1)]
    cable = next(c for c in netbox.objects("dcim/cables") if c["label"] == "C00001")
    assert cable["status"]["value"] == "connected"
    assert run(world.project, netbox.url, apply=False).status_figures() == {
        "create": 0, "update": 0, "unchanged": applied.progress_total}


def test_what_netbox_has_already_is_matched_by_its_natural_keys(world, netbox):
    site = netbox.add("dcim/sites", name="Hall 1", slug="hall1-customer", physical_address="Customer street 1")
    netbox.add("dcim/manufacturers", name="nvidia", slug="nvidia-corp")
    rack = netbox.add("dcim/racks", site=site, name="a01", status="planned", u_height=48,
                      description="Row A, position 1")
    role = netbox.add("dcim/device-roles", name="GPU node", slug="gpu")
    kind = netbox.add("dcim/device-types", manufacturer=netbox.add("dcim/manufacturers", name="Example",
                                                                  slug="example"),
                      model="B300 8-GPU", slug="b300", u_height=10.0)
    netbox.add("dcim/devices", name="gpu-001", site=site, rack=rack, role=role, device_type=kind, position=1.0,
               face="front", status="planned", serial="SN-0001", asset_tag="AT-0001")
    push = run(world.project, netbox.url, apply=True)
    assert push.status == JobStatus.DONE, push.errors
    assert counts(push)["sites"] == (0, 0, 1)  # by name, though the slug differs: its slug is left as it is
    assert counts(push)["manufacturers"] == (0, 0, 2)  # "nvidia" is NVIDIA whatever the case
    assert counts(push)["racks"] == (1, 0, 1)  # A01 is the customer's "a01"; N01 is new
    assert counts(push)["devices"][2] == 1
    assert len(netbox.objects("dcim/sites")) == 1 and len(netbox.objects("dcim/manufacturers")) == 2
    assert netbox.objects("dcim/sites")[0]["physical_address"] == "Customer street 1"  # nothing blank is sent


def test_a_cable_netbox_has_under_another_label_is_relabelled_not_duplicated(world, netbox):
    assert run(world.project, netbox.url, apply=True).status == JobStatus.DONE
    cable = next(c for c in netbox.objects("dcim/cables") if c["label"] == "C00002")
    with netbox.lock:
        netbox.store.rows["dcim/cables"][cable["id"]]["label"] = "old-label"
    push = run(world.project, netbox.url, apply=True)
    assert counts(push)["cables"][:2] == (0, 1)
    assert sorted(c["label"] for c in netbox.objects("dcim/cables")).count("C00002") == 1


def test_interfaces_are_sent_in_batches(world, netbox, monkeypatch):
    monkeypatch.setattr(push_module, "BATCH", 40)
    push = run(world.project, netbox.url, apply=True)
    assert push.status == JobStatus.DONE
    sizes = expected_sizes(world.project)
    posts = [n for method, path, n in netbox.writes() if method == "POST" and path == "/api/dcim/interfaces/"]
    assert posts and max(posts) <= 40
    assert len(posts) == math.ceil(sizes["interfaces"] / 40) + math.ceil(sizes["lanes"] / 40)


def test_reads_are_paged(world, netbox, monkeypatch):
    assert run(world.project, netbox.url, apply=True).status == JobStatus.DONE
    monkeypatch.setattr(push_module, "PAGE", 25)
    netbox.clear_log()
    push = run(world.project, netbox.url, apply=False)
    assert push.status_figures()["create"] == 0
    interface_pages = [r for r in netbox.requests if r[0] == "GET" and r[1] == "/api/dcim/interfaces/"]
    total = sum(expected_sizes(world.project)[key] for key in ("interfaces", "lanes"))
    assert len(interface_pages) == math.ceil(total / 25)


# --- NetBox's refusals ------------------------------------------------------------------------------------


def test_a_refused_token_fails_the_job_clearly(world, netbox):
    push = run(world.project, netbox.url, apply=False, token="f" * 40)
    assert push.status == JobStatus.FAILED
    assert "403" in push.errors[0] and "Invalid token" in push.errors[0] and "token" in push.errors[0]


def test_a_read_only_token_fails_an_apply_at_its_first_write(world):
    with FakeNetBox(read_only_token="r" * 40) as fake:
        assert run(world.project, fake.url, apply=False, token="r" * 40).status == JobStatus.DONE
        push = run(world.project, fake.url, apply=True, token="r" * 40)
    assert push.status == JobStatus.FAILED
    assert "403" in push.errors[0] and "creating sites" in push.errors[0]


def test_an_unreachable_netbox_fails_the_job_clearly(world):
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    push = run(world.project, f"http://127.0.0.1:{port}", apply=False)
    assert push.status == JobStatus.FAILED
    assert "cannot be reached" in push.errors[0] and f"127.0.0.1:{port}" in push.errors[0]


def test_a_redirect_is_not_followed(world, netbox):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Redirect(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            self.send_response(302)
            self.send_header("Location", netbox.url + self.path)
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Redirect)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        push = run(world.project, f"http://127.0.0.1:{server.server_address[1]}", apply=False)
    finally:
        server.shutdown()
    assert push.status == JobStatus.FAILED
    assert netbox.requests == []  # the NetBox it pointed to was never called


def test_a_url_that_is_not_netbox_fails_clearly(world, netbox):
    push = run(world.project, f"{netbox.url}/elsewhere", apply=False)
    assert push.status == JobStatus.FAILED
    assert "404" in push.errors[0]


@pytest.mark.parametrize("shape", ["list", "indexed"])
def test_netbox_s_field_errors_on_a_bulk_create_name_the_object_and_field(world, shape):
    with FakeNetBox(bulk_errors=shape) as fake:
        # The customer's NetBox already has a cable Bringup does not know, on one of Bringup's ports.
        first = run(world.project, fake.url, apply=True)
        assert first.status == JobStatus.DONE
        interfaces = {(i["device"]["name"], i["name"]): i["id"] for i in fake.objects("dcim/interfaces")}
        with fake.lock:
            for cable in list(fake.store.rows["dcim/cables"].values()):
                fake.store.delete("dcim/cables", cable["id"])
        # Its A end is no port of ours, its B end is leaf-01:p1, where Bringup's C00001 ends.
        fake.add("dcim/cables", label="THEIRS", a_terminations=[
            {"object_type": "dcim.interface", "object_id": interfaces[("gpu-002", "bmc")]}],
            b_terminations=[{"object_type": "dcim.interface", "object_id": interfaces[("leaf-01", "p1")]}])
        push = run(world.project, fake.url, apply=True)
    assert push.status == JobStatus.FAILED
    [message] = [m for m in push.errors if "C00001" in m]
    assert "creating cables (400)" in message and "b_terminations" in message and "already connected" in message
    assert push.steps[-1]["key"] == "lanes"  # the steps before the refusal are kept, with what they did
    assert "apply again" in push.errors[-1]


def test_a_netbox_error_without_field_errors_is_shown_with_its_detail(world, netbox):
    netbox.fail_next("POST", 500, {"detail": "Database is locked"})
    push = run(world.project, netbox.url, apply=True)
    assert push.status == JobStatus.FAILED
    assert push.errors[0] == "NetBox refused creating sites (500): Database is locked"


# --- the token ----------------------------------------------------------------------------------------------


def test_the_token_is_sealed_on_the_row_until_the_job_runs_then_wiped(world, netbox,
                                                                      django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        push = netbox_push_start(project=world.project, user=None, url=netbox.url, token=TOKEN, apply=False)
    stored = NetBoxPush.objects.get(pk=push.pk)
    assert stored.token_sealed and TOKEN not in stored.token_sealed
    assert token_unseal(stored.token_sealed) == TOKEN
    for callback in callbacks:  # the task, sent with the row's id only, runs eagerly
        callback()
    stored.refresh_from_db()
    assert stored.status == JobStatus.DONE, stored.errors
    assert stored.token_sealed == ""
    assert TOKEN not in f"{stored.log} {stored.errors} {stored.summary}"


def test_a_failed_job_forgets_the_token_too(world, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        push = netbox_push_start(project=world.project, user=None, url="http://127.0.0.1:9", token=TOKEN)
    push.refresh_from_db()
    assert push.status == JobStatus.FAILED and push.token_sealed == ""


def test_a_token_sealed_too_long_ago_is_refused(world, netbox):
    push = netbox_push_record(project=world.project, url=netbox.url, apply=False)
    old = Fernet.encrypt_at_time(_fernet(), TOKEN.encode(), int(time.time()) - TOKEN_TTL - 60).decode()
    NetBoxPush.objects.filter(pk=push.pk).update(token_sealed=old)
    push = netbox_push_run(push_id=push.pk)
    assert push.status == JobStatus.FAILED and "expired" in push.errors[0]
    assert NetBoxPush.objects.get(pk=push.pk).token_sealed == ""
    assert netbox.requests == []


@pytest.mark.parametrize(("url", "token", "field"), [
    ("ftp://netbox.example.com", TOKEN, "netbox_url"),
    ("https://admin:secret@netbox.example.com", TOKEN, "netbox_url"),
    ("http://169.254.169.254", TOKEN, "netbox_url"),  # a cloud's metadata service
    ("http://[fe80::1]:8000", TOKEN, "netbox_url"),
    ("https://netbox.example.com", "", "token"),
    ("https://netbox.example.com", "has spaces in it", "token"),
])
def test_a_bad_url_or_token_is_refused_on_its_field(world, url, token, field):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        netbox_push_start(project=world.project, user=None, url=url, token=token)
    assert field in refused.value.error_dict
    assert not NetBoxPush.objects.exists()


def test_an_internal_host_name_without_a_domain_is_a_netbox_url(world):
    push = netbox_push_record(project=world.project, url="http://netbox:8000", apply=False)
    assert push.netbox_url == "http://netbox:8000"


def test_a_second_run_of_the_task_leaves_a_finished_push_alone(world, netbox):
    push = run(world.project, netbox.url, apply=False)
    netbox.clear_log()
    assert netbox_push_run(push_id=push.pk).status == JobStatus.DONE
    assert netbox.requests == []


# --- the page and the command ---------------------------------------------------------------------------


def test_a_manager_starts_a_dry_run_and_reads_its_summary(world, netbox, client_for, manager,
                                                         django_capture_on_commit_callbacks):
    client = client_for(manager)
    with django_capture_on_commit_callbacks(execute=True):  # the task, eager, once the request commits
        response = client.post(reverse("delivery:handover:home", args=[world.project.code]),
                               {"netbox_url": netbox.url, "token": TOKEN, "action": "dry_run"})
    push = NetBoxPush.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("delivery:handover:push-detail", args=[world.project.code, push.pk])
    assert push.status == JobStatus.DONE and push.requested_by == manager and not push.apply
    page = client.get(response["Location"]).content.decode()
    assert 'data-step="interfaces"' in page and "new: gpu-001" in page and TOKEN not in page
    assert 'id="push-again"' in page  # the apply form, asking for the token again
    home = client.get(reverse("delivery:handover:home", args=[world.project.code])).content.decode()
    assert f'data-push="{push.pk}"' in home and netbox.url in home


def test_a_failed_push_shows_netbox_s_answer_on_its_page(world, client_for, manager,
                                                        django_capture_on_commit_callbacks):
    client = client_for(manager)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("delivery:handover:home", args=[world.project.code]),
                    {"netbox_url": "http://127.0.0.1:9", "token": TOKEN, "action": "apply"})
    push = NetBoxPush.objects.get()
    response = client.get(reverse("delivery:handover:push-detail", args=[world.project.code, push.pk]))
    assert response.status_code == 200
    assert 'id="push-errors"' in response.content.decode() and "cannot be reached" in response.content.decode()


def test_a_bad_form_is_shown_again_with_the_service_s_reason(world, client_for, manager):
    response = client_for(manager).post(reverse("delivery:handover:home", args=[world.project.code]),
                                        {"netbox_url": "https://u:p@netbox.example.com", "token": TOKEN,
                                         "action": "dry_run"})
    assert response.status_code == 200
    assert "Leave user names and passwords out of the URL" in response.content.decode()
    assert not NetBoxPush.objects.exists()


def test_a_push_s_page_is_for_managers_and_404_to_outsiders(world, netbox, client_for, customer, technician,
                                                            outsider):
    push = run(world.project, netbox.url, apply=False)
    url = reverse("delivery:handover:push-detail", args=[world.project.code, push.pk])
    assert client_for(customer).get(url).status_code == 403
    assert client_for(technician).get(url).status_code == 403
    assert client_for(outsider).get(url).status_code == 404


def test_the_netbox_push_command_dry_runs_then_applies(world, netbox, monkeypatch):
    monkeypatch.setenv("NETBOX_TOKEN", TOKEN)
    out = io.StringIO()
    call_command("netbox_push", project=world.project.code, url=netbox.url, token_env="NETBOX_TOKEN", stdout=out)
    assert "dry run" in out.getvalue() and "+ gpu-001" in out.getvalue()
    assert netbox.writes() == []
    call_command("netbox_push", project=world.project.code, url=netbox.url, token_env="NETBOX_TOKEN", apply=True,
                 stdout=io.StringIO())
    assert len(netbox.objects("dcim/devices")) == expected_sizes(world.project)["devices"]
    assert NetBoxPush.objects.filter(apply=True, status=JobStatus.DONE, token_sealed="").count() == 1


def test_the_netbox_push_command_says_why_it_failed(world, netbox, monkeypatch):
    monkeypatch.setenv("NETBOX_TOKEN", "0" * 40)
    with pytest.raises(CommandError, match="Invalid token"):
        call_command("netbox_push", project=world.project.code, url=netbox.url, token_env="NETBOX_TOKEN",
                     stdout=io.StringIO())
    monkeypatch.delenv("NETBOX_TOKEN")
    with pytest.raises(CommandError, match="NETBOX_TOKEN"):
        call_command("netbox_push", project=world.project.code, url=netbox.url, token_env="NETBOX_TOKEN")
