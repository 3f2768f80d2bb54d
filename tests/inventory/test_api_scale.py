"""The API's big lists page by cursor (core.api.pagination.BigListPagination, issue 11): the first page and a
page deep in the list cost the same queries for a few rows or many; `page_size` is honoured up to 500 and
capped above; a page size that is no number and a cursor that is not ours are refused (400, 404), never a
500; walking `next` gives every row once, in id order; the schema says all of it; outsiders see nothing."""

from base64 import b64encode
from decimal import Decimal

import pytest
from django.utils.http import urlencode

from cabling.choices import CableType
from cabling.models import Cable, CableEnd
from core.api.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from inventory.choices import Network
from inventory.models import Port
from inventory.services import device_create
from tests.factories import gpu_server_model
from tests.support import count_queries

pytestmark = pytest.mark.django_db
BIG_LISTS = ["/api/ports/", "/api/cables/", "/api/devices/", "/api/nics/", "/api/optics/", "/api/traces/",
             "/api/scans/", "/api/check-results/"]


def add_servers(project, count: int, start: int = 0) -> None:
    """`count` GPU servers (41 ports each: 8 ports, 32 lanes, a BMC), each with its eight ports cabled to
    the next server's (so the cable and trace lists grow with them)."""
    model = gpu_server_model()
    for i in range(start, start + count):
        device_create(project=project, hardware_model=model, name=f"gpu-{i:03d}")
    if start + count < 2:
        return
    free = {}
    for port in Port.objects.filter(device__project=project, parent__isnull=True, name__startswith="ib",
                                     cable_end__isnull=True).select_related("device"):
        free.setdefault(port.device.name, []).append(port)
    names = sorted(free)
    pairs = [(a, b) for a, b in zip(names[::2], names[1::2], strict=False)]
    for a, b in pairs:
        for i, (pa, pb) in enumerate(zip(sorted(free[a], key=lambda p: p.name), sorted(free[b], key=lambda p: p.name),
                                         strict=True)):
            cable = Cable.objects.create(project=project, label=f"K-{a}-{i}", network=Network.COMPUTE,
                                         cable_type=CableType.FIBER, length_m=Decimal("3.0"), speed_gbps=800)
            CableEnd.objects.bulk_create([CableEnd(cable=cable, side="A", port=pa),
                                          CableEnd(cable=cable, side="B", port=pb)])


def cursor(position: str, offset: int = 0) -> str:
    """A cursor as DRF writes one (base64 of its query string), to forge."""
    return b64encode(urlencode({"o": offset, "p": position} if offset else {"p": position}).encode()).decode()


def walk(api, address: str, **params) -> list[dict]:
    """Every page by following `next`; the rows in the order given."""
    rows, response = [], api.get(address, params)
    while True:
        assert response.status_code == 200, response.content
        body = response.json()
        assert set(body) == {"next", "previous", "results"}
        rows += body["results"]
        if not body["next"]:
            return rows
        response = api.get(body["next"])


def deep_page(api, address: str, depth: int, **params) -> str:
    """The address of page `depth` (1 is the first), found by following `next`."""
    url, query = address, params
    for _ in range(depth - 1):
        url, query = api.get(url, query).json()["next"], None
        assert url
    return url if query is None else f"{url}?{urlencode(query)}"


@pytest.mark.parametrize(("address", "depth"), [("/api/ports/", 40), ("/api/cables/", 12), ("/api/traces/", 30),
                                               ("/api/devices/", 5)])
def test_first_and_deep_pages_cost_the_same_for_few_or_many_rows(api_for, manager, project, address, depth,
                                                                  django_assert_num_queries):
    api = api_for(manager)
    add_servers(project, 4)
    api.get(address)  # warm: what a process reads once (content types, the user's memberships cache)
    first_few = count_queries(lambda: api.get(address, {"page_size": 2}))
    deep = deep_page(api, address, 2, page_size=2)
    deep_few = count_queries(lambda: api.get(deep))
    add_servers(project, 6, start=4)
    with django_assert_num_queries(first_few):
        assert len(api.get(address, {"page_size": 2}).json()["results"]) == 2
    deep = deep_page(api, address, depth, page_size=2)
    with django_assert_num_queries(deep_few):
        assert len(api.get(deep).json()["results"]) == 2
    assert first_few == deep_few  # a page deep in the list costs what the first costs


def test_walking_next_gives_every_port_once_in_id_order(api_for, technician, project):
    add_servers(project, 3)
    rows = walk(api_for(technician), "/api/ports/", page_size=7)
    ids = [row["id"] for row in rows]
    assert ids == sorted(ids) == sorted(Port.objects.filter(device__project=project).values_list("pk", flat=True))
    assert len(ids) == 3 * 41


def test_previous_goes_back_to_the_same_rows(api_for, technician, project):
    add_servers(project, 1)
    api = api_for(technician)
    first = api.get("/api/ports/", {"page_size": 10}).json()
    second = api.get(first["next"]).json()
    assert first["previous"] is None and second["previous"]
    assert api.get(second["previous"]).json()["results"] == first["results"]


def test_page_size_is_honoured_and_capped(api_for, technician, project):
    add_servers(project, 13)  # 533 ports
    api = api_for(technician)
    assert len(api.get("/api/ports/").json()["results"]) == DEFAULT_PAGE_SIZE
    assert len(api.get("/api/ports/", {"page_size": 3}).json()["results"]) == 3
    assert len(api.get("/api/ports/", {"page_size": MAX_PAGE_SIZE}).json()["results"]) == MAX_PAGE_SIZE
    capped = api.get("/api/ports/", {"page_size": 100_000}).json()
    assert len(capped["results"]) == MAX_PAGE_SIZE and capped["next"]  # capped, never refused: and it pages on
    assert len(api.get(capped["next"]).json()["results"]) == 533 - MAX_PAGE_SIZE
    for huge in ("999999", "1000000", str(2**64), "9" * 20):  # any number is capped, however many digits
        assert len(api.get("/api/ports/", {"page_size": huge}).json()["results"]) == MAX_PAGE_SIZE, huge


@pytest.mark.parametrize("address", BIG_LISTS)
@pytest.mark.parametrize("size", ["0", "-1", "ten", "\u00b2", "1" * 40, "1.5", " 5"])
def test_a_page_size_that_is_no_positive_number_is_a_400_naming_it(api_for, technician, project, address, size):
    response = api_for(technician).get(address, {"page_size": size})
    assert response.status_code == 400, response.content
    assert "page_size" in response.json()


@pytest.mark.parametrize("address", BIG_LISTS)
@pytest.mark.parametrize("forged", [
    "garbage", cursor("abc"), cursor("9" * 30), cursor("1\x00"), cursor("1", offset=-1),
    cursor("2026-13-45T99:00:00"), b64encode(b"o=\xff\xfe").decode(), "\u00b2",
    # Dates at the ends of the calendar whose offset takes them past it in UTC (an OverflowError on SQLite),
    # and a date without an offset (our cursors always carry one: the scans' created_at is aware).
    cursor("0001-01-01T00:00:00+14:00"), cursor("9999-12-31T23:59:59-14:00"), cursor("2026-01-01T00:00:00"),
])
def test_a_cursor_that_is_not_ours_is_a_404_never_a_500(api_for, technician, project, address, forged):
    add_servers(project, 1)
    response = api_for(technician).get(address, {"cursor": forged})
    assert response.status_code == 404, response.content
    assert response.json() == {"detail": "Invalid cursor"}


@pytest.mark.parametrize("address", BIG_LISTS)
def test_a_cursor_that_names_nothing_is_the_first_page(api_for, technician, project, address):
    """Base64 drops what is not of its alphabet: "%%%" decodes to no position at all, so the first page."""
    add_servers(project, 1)
    api = api_for(technician)
    response = api.get(address, {"cursor": "%%%"})
    assert response.status_code == 200, response.content
    assert response.json()["results"] == api.get(address).json()["results"]


@pytest.mark.parametrize("position", ["2026-01-01 00:00:00+00:00", "0001-01-01T00:00:00+00:00",
                                      "9999-12-31T23:59:59-00:00"])
def test_a_forged_cursor_naming_a_possible_date_is_a_page_of_scans(api_for, technician, project, position):
    """An aware date inside the calendar is a position the scans could hold: a page (empty), not an error."""
    response = api_for(technician).get("/api/scans/", {"cursor": cursor(position)})
    assert response.status_code == 200, response.content
    assert response.json()["results"] == []


@pytest.mark.parametrize("forged", [cursor("abc"), cursor("9" * 30), cursor("1\x00")])
def test_a_forged_position_on_the_id_lists_is_refused(api_for, technician, project, forged):
    for address in ("/api/ports/", "/api/cables/", "/api/devices/", "/api/traces/"):
        assert api_for(technician).get(address, {"cursor": forged}).status_code == 404


def test_the_schema_says_cursor_page_size_and_its_maximum():
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for address in BIG_LISTS:
        operation = schema["paths"][address]["get"]
        parameters = {p["name"]: p for p in operation["parameters"]}
        assert "cursor" in parameters and "page" not in parameters, address
        assert parameters["page_size"]["schema"] == {"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE,
                                                     "default": parameters["page_size"]["schema"]["default"]}
        assert str(MAX_PAGE_SIZE) in parameters["page_size"]["description"]
        page = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
        assert set(schema["components"]["schemas"][page]["properties"]) == {"next", "previous", "results"}


def test_outsiders_page_through_nothing_of_the_project(api_for, manager, outsider, project):
    add_servers(project, 2)
    member_page = api_for(manager).get("/api/ports/", {"page_size": 5}).json()
    api = api_for(outsider)
    for address in BIG_LISTS:
        body = api.get(address, {"project": project.code}).json()
        assert body["results"] == [] and body["next"] is None, address
    # A member's cursor in an outsider's hands pages through the outsider's rows only: none of the project.
    assert api.get(member_page["next"]).json()["results"] == []
