"""The access matrix: every page under /p/<code>/ and every API route, found in the URLconf and the API
router (tests/access_world.py), called as five people against one project holding one object of each
kind:

- anonymous: pages redirect to the login page; the API answers 401 or 403;
- outsider (a manager of another project only): 404 for every page and API object; an API list shows
  none of the project's rows (and does show their own project's); a create naming the project answers
  exactly as one naming a project that does not exist;
- customer: 200 on reads, 403 on every write;
- technician: 403 where the view needs MANAGE_PROJECT, else as a manager;
- manager: 200 on reads; a write is not refused (no 403, 404 or 5xx, whatever it sends).

What a route needs is what its view declares (`required_capability`, `write_capability`), so a view that
refuses more than it declares fails too. Writes send an empty form or `{"project": <code>}`: each one
runs in the test's own transaction and is rolled back. A route without a sample fails with the file to
add it to (tests/<app>/access_samples.py): that is how a new page cannot forget its outsider case.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

import pytest
from django.test import Client
from django.urls import NoReverseMatch, reverse
from rest_framework.test import APIClient

from projects.access import Capability
from tests.access_world import (
    APPS,
    EXEMPT,
    ROLES,
    Route,
    all_routes,
    api_routes,
    page_routes,
    role_can,
    world_for_module,
)

pytestmark = pytest.mark.django_db

NO_SUCH_PROJECT = "NO-SUCH-PROJECT"


@pytest.fixture(scope="module")
def world(django_db_setup, django_db_blocker, tmp_path_factory):
    """Built once for the module inside a transaction rolled back at its end; each test runs in its own
    savepoint, so the writes of one test are gone before the next."""
    with world_for_module(django_db_blocker, tmp_path_factory, "matrix") as built:
        yield built


@pytest.fixture(autouse=True)
def _media_root(settings, world):
    """Instead of conftest's fresh media root per test: the samples' files (uploads, import files) are in
    the world's."""
    settings.MEDIA_ROOT = str(world.media_root)


# --- what each role should get -------------------------------------------------------------------------


@dataclass(frozen=True)
class Expect:
    text: str
    statuses: frozenset[int] = frozenset()
    not_refused: bool = False  # any answer but 403, 404 and 5xx
    redirect_to: str = ""  # a 302 to a URL starting with this

    def met_by(self, response) -> bool:
        if self.not_refused:
            return response.status_code not in (403, 404) and response.status_code < 500
        if self.redirect_to:
            return response.status_code == 302 and response.url.startswith(self.redirect_to)
        return response.status_code in self.statuses


OK = Expect("200", frozenset({200}))
FORBIDDEN = Expect("403", frozenset({403}))
NOT_FOUND = Expect("404", frozenset({404}))
NOT_REFUSED = Expect("not refused (no 403, 404 or 5xx)", not_refused=True)
API_ANONYMOUS = Expect("401 or 403", frozenset({401, 403}))


def to_login() -> Expect:
    return Expect("a redirect to the login page", redirect_to=reverse("login"))


def member_expects(route: Route, role: str, method: str) -> Expect:
    if method == "get":
        return OK if role_can(role, route.read_capability) else FORBIDDEN
    if role == "customer":
        return FORBIDDEN  # a customer changes nothing, anywhere
    # An undeclared write capability is test_every_write_declares_what_it_needs's failure, not this one's.
    needed = {route.read_capability, route.write_capability or route.read_capability}
    return NOT_REFUSED if all(role_can(role, capability) for capability in needed) else FORBIDDEN


# --- calling a route -----------------------------------------------------------------------------------


def url_of(world, route: Route) -> str:
    """The route's URL in the world's project, from its sample (and its QUERIES entry)."""
    kwargs = world.samples.get(route.name)
    if kwargs is None and route.kwargs:
        pytest.fail(
            f"{route.name} ({route.view.__module__}.{route.view.__name__}) has no sample object: add "
            f"{route.name!r}: {{{', '.join(repr(k) + ': ...' for k in route.kwargs)}}} to {route.samples_file()}, "
            "or the route to EXEMPT in tests/access_world.py with the reason"
        )
    kwargs = dict(kwargs or {})
    query = world.queries.get(route.name)
    if not route.is_api:
        kwargs["code"] = world.project.code
    try:
        url = reverse(route.url_name, kwargs=kwargs)
    except NoReverseMatch as exc:
        pytest.fail(f"{route.name}: the sample {kwargs} in {route.samples_file()} does not fit the route ({exc})")
    return f"{url}?{urlencode(query)}" if query else url


def client_for(world, role: str, *, api: bool):
    client = APIClient() if api else Client()
    if role != "anonymous":
        # A fresh copy: a user object caches its roles (projects.access.project_role) across requests.
        user = type(world.users[role]).objects.get(pk=world.users[role].pk)
        if api:
            client.force_authenticate(user)
        else:
            client.force_login(user)
    return client


def send(client, method: str, url: str, data: dict | None = None):
    if method == "get":
        return client.get(url)
    if isinstance(client, APIClient):
        return getattr(client, method)(url, data or {}, format="json")
    return getattr(client, method)(url, data or {})


def write_payload(world, route: Route, project_code: str | None = None) -> dict:
    """What a write sends: nothing for an object (its URL names it), the project for a list's create."""
    if route.is_api and not route.detail:
        return {"project": project_code or world.project.code}
    return {}


class Failures(list):
    def check(self, role: str, method: str, url: str, response, expect: Expect) -> bool:
        if expect.met_by(response):
            return True
        got = response.get("Location", "") or response.content[:300].decode(errors="replace")
        self.append(f"{method.upper()} {url} as {role}: expected {expect.text}, got {response.status_code} {got}")
        return False

    def report(self) -> None:
        if self:
            pytest.fail("\n".join(self), pytrace=False)


def _ids(cases) -> list[str]:
    return [f"{route.name}|{role}" for route, role in cases]


PAGE_CASES = [(route, role) for route in page_routes() if route.name not in EXEMPT for role in ROLES]
API_CASES = [(route, role) for route in api_routes() if route.name not in EXEMPT for role in ROLES]


# --- pages ---------------------------------------------------------------------------------------------


def redirects_within_project(world, response) -> bool:
    return response.status_code == 302 and response.url.startswith(f"/p/{world.project.code}/")


@pytest.mark.parametrize(("route", "role"), PAGE_CASES, ids=_ids(PAGE_CASES))
def test_page(world, route, role):
    url, client, failures = url_of(world, route), client_for(world, role, api=route.is_api), Failures()
    for method in route.methods:
        response = send(client, method, url, write_payload(world, route))
        expect = {"anonymous": to_login(), "outsider": NOT_FOUND}.get(role) or member_expects(route, role, method)
        if expect is OK and redirects_within_project(world, response):
            continue  # a page that sends its readers on to another page of the project (a form's GET)
        failures.check(role, method, url, response, expect)
    failures.report()


# --- the API -------------------------------------------------------------------------------------------


def _row_key(route: Route) -> str:
    lookup = route.kwargs[0] if route.kwargs else "pk"
    return "id" if lookup == "pk" else lookup


def _listed(response, key: str) -> set:
    data = response.json()
    rows = data["results"] if isinstance(data, dict) and "results" in data else data
    return {row[key] for row in rows}


def _detail_of(route: Route) -> Route | None:
    """The detail route of a list's basename, whose sample is the row the list must (not) show."""
    name = f"api:{route.basename}-detail"
    return next((r for r in api_routes() if r.name == name), None)


def check_list_rows(world, route: Route, role: str, url: str, response, failures: Failures) -> None:
    """An outsider's list shows none of the project's rows but their own project's; a member's shows the
    project's row (so an empty list does not pass for a scoped one)."""
    detail = _detail_of(route)
    if detail is None or response.status_code != 200:
        return
    key = _row_key(detail)
    listed = _listed(response, key)
    ours = world.samples.get(detail.name, {}).get(detail.kwargs[0])
    theirs = world.other_samples.get(detail.name, {}).get(detail.kwargs[0])
    if role == "outsider":
        if ours in listed:
            failures.append(f"GET {url} as outsider lists the project's row {key}={ours}")
        if theirs is not None and theirs not in listed:
            failures.append(f"GET {url} as outsider does not list their own project's row {key}={theirs}")
    elif ours is not None and ours not in listed:
        failures.append(f"GET {url} as {role} does not list the project's row {key}={ours}")


def check_outsider_create(world, route: Route, client, url: str, method: str, failures: Failures) -> None:
    """A create or list action naming the project answers exactly as one naming no project at all."""
    real = send(client, method, url, write_payload(world, route, world.project.code))
    made_up = send(client, method, url, write_payload(world, route, NO_SUCH_PROJECT))
    real_body = real.content.decode(errors="replace").replace(world.project.code, NO_SUCH_PROJECT)
    if real.status_code < 400 or (real.status_code, real_body) != (made_up.status_code, made_up.content.decode()):
        failures.append(
            f"{method.upper()} {url} as outsider naming {world.project.code}: {real.status_code} {real_body[:200]}; "
            f"naming {NO_SUCH_PROJECT}: {made_up.status_code} {made_up.content[:200].decode(errors='replace')}"
        )


@pytest.mark.parametrize(("route", "role"), API_CASES, ids=_ids(API_CASES))
def test_api(world, route, role):
    url, client, failures = url_of(world, route), client_for(world, role, api=route.is_api), Failures()
    for method in route.methods:
        if role == "outsider" and not route.detail and method != "get":
            check_outsider_create(world, route, client, url, method, failures)
            continue
        response = send(client, method, url, write_payload(world, route))
        if role == "anonymous":
            expect = API_ANONYMOUS
        elif role == "outsider":
            expect = NOT_FOUND if route.detail else OK
        else:
            expect = member_expects(route, role, method)
        if failures.check(role, method, url, response, expect) and method == "get" and not route.detail:
            check_list_rows(world, route, role, url, response, failures)
    failures.report()


@pytest.mark.parametrize("role", ROLES)
def test_job_status_of_every_kind_of_job(world, role):
    """The one job status endpoint, for each kind of job the samples made (its project path differs)."""
    from core.jobs import job_models

    client = client_for(world, role, api=True)
    failures = Failures()
    found = 0
    for job_type, model in job_models().items():
        job = model._default_manager.filter(**{model.project_path: world.project}).first()
        if job is None:
            continue
        found += 1
        url = reverse("api-job-status", kwargs={"job_type": job_type, "pk": job.pk})
        expect = {"anonymous": API_ANONYMOUS, "outsider": NOT_FOUND}.get(role, OK)
        failures.check(role, "get", url, client.get(url), expect)
    assert found, "the samples made no job row at all"
    failures.report()


# --- the matrix itself ---------------------------------------------------------------------------------


def test_every_route_has_a_sample_or_an_exemption(world):
    missing = [
        f"{route.name} (kwargs {', '.join(route.kwargs)}): add it to {route.samples_file()}"
        for route in all_routes()
        if route.kwargs and route.name not in world.samples and route.name not in EXEMPT
    ]
    assert not missing, "Routes the access matrix cannot call:\n" + "\n".join(missing)


def test_every_exemption_names_a_route_that_exists():
    assert set(EXEMPT) <= {route.name for route in all_routes()}


def test_the_walk_finds_the_pages_and_api_routes_of_every_app():
    """Guards the walker: if it found nothing, every case above would pass by having nothing to check."""
    assert {route.app for route in page_routes()} >= set(APPS)
    assert {route.app for route in api_routes()} >= set(APPS)
    names = {route.name for route in all_routes()}
    assert {"delivery:project-home", "inventory:device-detail", "api:device-list", "api:device-detail",
            "api:check-run-cancel", "api:api-job-status"} <= names
    cancel = next(route for route in api_routes() if route.name == "api:check-run-cancel")
    assert cancel.methods == ("post",) and cancel.detail


def test_every_write_declares_what_it_needs():
    """A write that declares no capability above VIEW would be open to customers; an API viewset that
    writes must say with what capability (the matrix holds it to it)."""
    undeclared = [
        f"{route.name} ({route.view.__module__}.{route.view.__name__}): "
        + ("declare write_capability on the viewset" if route.is_api else
           "declare write_capability (what its POST needs) on the view")
        for route in all_routes()
        if route.writes and route.name not in EXEMPT
        and (route.write_capability is None or route.write_capability == Capability.VIEW)
    ]
    assert not undeclared, "\n".join(undeclared)
