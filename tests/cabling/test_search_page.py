"""The search box in the top bar: any code the floor prints or a tool reports, resolved in one step. One
match opens its page, several are listed, none says so; a code no label could hold is a 400. Scoped to
the project (outsiders 404, other projects' rows never found), bounded queries."""

import re

import pytest
from django.urls import reverse

from cabling.models import CableEnd
from inventory.models import Port
from tests.support import count_queries

pytestmark = pytest.mark.django_db


def search_url(project):
    return reverse("cabling:search", args=[project.code])


def find(client, project, q):
    return client.get(search_url(project), {"q": q})


def test_the_search_box_is_in_the_top_bar_of_every_project_page(client_for, customer, fabric):
    client = client_for(customer)
    for name, args in [("delivery:project-home", []), ("inventory:device-list", []),
                       ("cabling:cable-detail", [fabric.c1.pk]), ("validation:run-list", [])]:
        body = client.get(reverse(name, args=[fabric.project.code, *args])).content.decode()
        header = body[body.index('<header class="topbar">'):body.index("</header>")]
        assert f'action="{search_url(fabric.project)}"' in header and 'name="q"' in header, name


@pytest.mark.parametrize("code, lands_on", [
    ("C00003", "cable c3"),
    ("c00003", "cable c3"),
    ("SN-GPU-2", "device gpu2"),
    ("AT-0002", "device gpu2"),
    ("gpu-002", "device gpu2"),
])
def test_one_match_opens_its_page(client_for, technician, fabric, code, lands_on):
    fabric.gpu2.serial, fabric.gpu2.asset_tag = "SN-GPU-2", "AT-0002"
    fabric.gpu2.save()
    kind, attribute = lands_on.split()
    target = getattr(fabric, attribute)
    name = "cabling:cable-detail" if kind == "cable" else "inventory:device-detail"
    response = find(client_for(technician), fabric.project, code)
    assert response.status_code == 302
    assert response["Location"] == reverse(name, args=[fabric.project.code, target.pk])


def test_an_end_code_opens_the_cable_at_that_end(client_for, customer, fabric):
    response = find(client_for(customer), fabric.project, "C00005/B2")
    end = CableEnd.objects.get(cable=fabric.breakout, side="B", position=1)
    assert response.status_code == 302
    assert response["Location"] == reverse("cabling:cable-detail", args=[fabric.project.code, fabric.breakout.pk]) + (
        f"#end-{end.pk}")


@pytest.mark.parametrize("code", ["N01-U02-leaf-02-p3", "leaf-02:p3", "leaf-02 p3", "0x043F720300AABBCC"])
def test_a_port_opens_its_device_page_showing_that_port(client_for, customer, fabric, code):
    port = Port.objects.get(device=fabric.leaf2, name="p3")
    port.guid_mac = "043f720300aabbcc"
    port.save()
    client = client_for(customer)
    response = find(client, fabric.project, code)
    assert response.status_code == 302
    expected = reverse("inventory:device-detail", args=[fabric.project.code, fabric.leaf2.pk])
    assert response["Location"] == f"{expected}?ports_q=p3#port-{port.pk}"
    # The device's ports panel shows that port (the panel is paginated: the filter puts it on the page).
    body = client.get(response["Location"]).content.decode()
    assert re.findall(r'<tr class="port" data-port="([^"]+)"', body) == ["p3"]
    assert "C00005" in body and 'data-far="gpu-003:ib0"' in body


def test_several_matches_are_listed(client_for, customer, fabric):
    # A serial that is also another device's name: both are found, neither is guessed.
    fabric.gpu1.serial = "gpu-002"
    fabric.gpu1.save()
    response = find(client_for(customer), fabric.project, "gpu-002")
    assert response.status_code == 200
    body = response.content.decode()
    rows = re.findall(r'<tr data-kind="([^"]+)"><td><a href="([^"]+)">([^<]+)</a></td><td>([^<]+)</td><td>([^<]+)',
                      body)
    assert sorted((kind, label, how) for kind, _, label, _, how in rows) == [
        ("device", "gpu-001", "serial"), ("device", "gpu-002", "name")]
    assert reverse("inventory:device-detail", args=[fabric.project.code, fabric.gpu1.pk]) in body


def test_no_match_says_so(client_for, customer, fabric):
    response = find(client_for(customer), fabric.project, "C00001-FOREIGN")  # another project's cable
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="no-match"' in body and "C00001-FOREIGN" in body and 'id="matches"' not in body


def test_an_empty_search_shows_the_form(client_for, customer, fabric):
    response = client_for(customer).get(search_url(fabric.project))
    assert response.status_code == 200
    body = response.content.decode()
    assert 'id="no-match"' not in body and 'id="search-error"' not in body and 'name="q"' in body


@pytest.mark.parametrize("code", ["x" * 513, "x" * 100_000])
def test_what_cannot_be_a_code_is_a_400_saying_why(client_for, customer, fabric, code):
    response = find(client_for(customer), fabric.project, code)
    assert response.status_code == 400
    body = response.content.decode()
    assert 'id="search-error"' in body and "no label holds more than 512" in body
    assert code not in body  # not echoed whole


def test_control_characters_alone_are_an_empty_code(client_for, customer, fabric):
    response = find(client_for(customer), fabric.project, "\x1b\x07")
    assert response.status_code == 400 and "empty" in response.content.decode()


def test_outsiders_get_404_and_anonymous_log_in(client_for, outsider, fabric):
    from django.test import Client

    assert find(client_for(outsider), fabric.project, "C00001").status_code == 404
    response = find(Client(), fabric.project, "C00001")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_search_queries_are_bounded(client_for, customer, fabric, add_cables, django_assert_num_queries):
    client = client_for(customer)
    few = count_queries(lambda: find(client, fabric.project, "nothing-like-this"))
    add_cables(fabric.project, 40, 0)
    with django_assert_num_queries(few):
        assert find(client, fabric.project, "nothing-like-this").status_code == 200


# --- what people type before they finish (cabling.search.search_text) -------------------------------------------


def listed(response) -> list[tuple[str, str, str]]:
    """(kind, label, how) of each listed match, in the page's order."""
    rows = re.findall(r'<tr data-kind="([^"]+)"><td><a href="[^"]+">([^<]+)</a></td><td>[^<]+</td><td>([^<]+)',
                      response.content.decode())
    return [(kind, label, how) for kind, label, how in rows]


def test_the_start_of_a_name_lists_every_device_it_starts(client_for, customer, fabric):
    response = find(client_for(customer), fabric.project, "gpu-00")
    assert response.status_code == 200
    assert listed(response) == [("device", f"gpu-00{n}", "name starts with it") for n in (1, 2, 3)]


def test_exact_matches_come_first_then_what_starts_with_it_then_what_contains_it(client_for, customer, fabric):
    from tests.factories import OpticFactory

    fabric.spine.serial = "leaf-0"  # an exact serial, a start of two names, inside no other
    fabric.spine.save()
    OpticFactory(project=fabric.project, serial="XLEAF-0-77")  # contains it, starts with something else
    answer = client_for(customer).get("/api/search/", {"project": fabric.project.code, "q": "leaf-0"}).json()
    assert [(m["kind"], m["label"], m["how"]) for m in answer["matches"]] == [
        ("device", "spine-01", "serial"),
        ("device", "leaf-01", "name starts with it"),
        ("device", "leaf-02", "name starts with it"),
        ("optic", "980-9I693-00NS00 XLEAF-0-77", "serial contains it"),
    ]
    # The page opens the one exact match, as a scan would.
    response = find(client_for(customer), fabric.project, "leaf-0")
    assert response.status_code == 302
    assert response["Location"] == reverse("inventory:device-detail", args=[fabric.project.code, fabric.spine.pk])


def test_a_partial_serial_finds_its_optic_and_a_partial_label_its_cables(client_for, customer, fabric):
    from tests.factories import OpticFactory

    optic = OpticFactory(project=fabric.project, serial="MT2412X00042")
    client = client_for(customer)
    assert listed(find(client, fabric.project, "X00042")) == [("optic", str(optic), "serial contains it")]
    assert [label for kind, label, _ in listed(find(client, fabric.project, "C0000")) if kind == "cable"] == [
        f"C0000{n}" for n in range(1, 8)]


def test_one_letter_is_matched_exactly_only(client_for, customer, fabric):
    assert 'id="no-match"' in find(client_for(customer), fabric.project, "g").content.decode()


def test_the_api_suggests_what_the_page_finds_and_nothing_to_outsiders(client_for, customer, outsider, fabric):
    url = "/api/search/"
    answer = client_for(customer).get(url, {"project": fabric.project.code, "q": "gpu-00"}).json()
    assert [(m["kind"], m["label"], m["how"]) for m in answer["matches"]] == [
        ("device", f"gpu-00{n}", "name starts with it") for n in (1, 2, 3)]
    assert answer["matches"][0]["url"] == reverse("inventory:device-detail", args=[fabric.project.code, fabric.gpu1.pk])
    assert client_for(outsider).get(url, {"project": fabric.project.code, "q": "gpu-00"}).json() == {"matches": []}


def test_partial_search_queries_are_bounded(client_for, customer, fabric, add_cables, django_assert_num_queries):
    client = client_for(customer)
    few = count_queries(lambda: find(client, fabric.project, "q0"))  # partial lookups made, nothing found
    add_cables(fabric.project, 40, 0)  # devices qa-000, qb-000 and cables Q00000..., all matching
    with django_assert_num_queries(few):
        response = find(client, fabric.project, "q0")
    assert len(listed(response)) == 20  # capped
