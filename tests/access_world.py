"""The access matrix's world (tests/test_access_matrix.py): every page under /p/<code>/ and every API
route, read from the URLconf and the API router, and one project holding one object of each kind.

Routes are found, never listed: a new page or endpoint is in the matrix the moment it is in the URLconf.
What it may do is read from the view itself:

- a page (a ProjectViewMixin view) needs `required_capability` for every request and, for a POST,
  `write_capability` when the view declares one (projects.access.ProjectViewMixin checks both);
- an API route needs the viewset's `required_capability` (VIEW unless declared) to read and its
  `write_capability` to write.

The objects come from one module per app, `tests/<app>/access_samples.py`, whose `samples(project)`
makes a few rows in `project` and maps each URL name ("inventory:device-detail", or "api:<router url
name>" for the API, e.g. "api:device-detail") to the URL kwargs besides the project's `code`; the
module's optional `QUERIES` maps a URL name to the query parameters the page cannot answer without
(e.g. {"cabling:fabric-svg": {"network": "compute", "plane": "0"}}). A route is the business of the app
its view lives in: a route with URL kwargs and no sample fails the matrix with the file to add it to.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache

from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.views import APIView

from projects.access import ROLE_CAPABILITIES, Capability
from projects.choices import Role

PROJECT_PREFIX = "p/<str:code>/"
APPS = ("projects", "inventory", "cabling", "validation", "delivery")
# projects' job status sample names a job row the other apps' samples made: it comes last.
SAMPLES_ORDER = ("inventory", "cabling", "validation", "delivery", "projects")
ROLES = ("anonymous", "outsider", Role.CUSTOMER.value, Role.TECHNICIAN.value, Role.MANAGER.value)
WRITE_METHODS = ("post", "put", "patch", "delete")

# Routes the matrix leaves out, each with the reason and where its access is tested instead. Keep it
# short: a route listed here has no outsider case in the matrix.
EXEMPT = {
    "api:hardware-model-list": "the shared hardware catalogue: every signed-in user reads it, staff write it "
    "(tests/projects/test_api_scoping.py::test_hardware_catalogue_is_read_by_anyone_signed_in_and_written_by_staff_only)",
    "api:hardware-model-detail": "the shared hardware catalogue (as api:hardware-model-list)",
    "api:api-token": "signing in: it takes a username and password, not a session (tests/inventory/test_api.py)",
    # Writes a customer makes, which the matrix's "a customer writes nothing" cannot express.
    "api:report-version-sign": "the customer signs the acceptance report, managers may not "
    "(tests/delivery/test_report_api.py::test_only_a_customer_signs_and_outsiders_get_404)",
    "api:report-version-reject": "the customer rejects an issued version of the acceptance report, managers may not "
    "(tests/delivery/test_report_api.py::test_the_customer_rejects_with_comments_and_nobody_else_may)",
    "api:report-version-verify": "any member checks a file against the report versions, the customer first "
    "(tests/delivery/test_report_api.py::test_verify_is_open_to_every_member_and_404_to_outsiders)",
    "reports:sign": "the customer signs the acceptance report on its page, managers may not "
    "(tests/delivery/test_report_pages.py::test_only_the_customer_gets_the_sign_form_and_a_manager_may_not_sign, "
    "test_outsiders_get_404_everywhere_and_anonymous_visitors_the_login_page)",
    "reports:reject": "the customer rejects an issued version on its page, managers may not "
    "(tests/delivery/test_report_pages.py::test_the_customer_rejects_with_comments_and_a_manager_may_not, "
    "test_outsiders_get_404_everywhere_and_anonymous_visitors_the_login_page)",
    "reports:check": "any member checks a file against the report versions, the customer first (an upload is "
    "a POST) (tests/delivery/test_report_pages.py::"
    "test_outsiders_get_404_everywhere_and_anonymous_visitors_the_login_page)",
}


def samples_file(app: str) -> str:
    return f"tests/{app}/access_samples.py"


@dataclass(frozen=True)
class Route:
    """One URL name with what the matrix needs to call it and to know the answers."""

    name: str  # "inventory:device-detail", "api:device-detail"
    url_name: str  # what reverse() takes
    app: str  # the app the view lives in: its samples module holds the route's sample
    view: type
    is_api: bool
    methods: tuple[str, ...]  # lower-case HTTP methods the route answers, "get" first when it has one
    kwargs: tuple[str, ...]  # URL kwargs besides `code`
    detail: bool = True  # API: the route names one object (404 for an outsider); False for lists
    basename: str = ""  # API router basename

    @property
    def reads(self) -> bool:
        return "get" in self.methods

    @property
    def writes(self) -> tuple[str, ...]:
        return tuple(m for m in self.methods if m in WRITE_METHODS)

    @property
    def read_capability(self) -> Capability:
        return getattr(self.view, "required_capability", Capability.VIEW)

    @property
    def write_capability(self) -> Capability | None:
        """What a write needs, as the view declares it (None: it declares nothing)."""
        declared = getattr(self.view, "write_capability", None)
        if self.is_api:
            return declared
        return declared or self.read_capability

    def samples_file(self) -> str:
        return samples_file(self.app)


def _app_of(view) -> str:
    return view.__module__.split(".")[0]


def _page_view(pattern: URLPattern):
    return getattr(pattern.callback, "view_class", None) or pattern.callback


def _methods_of_page(view) -> tuple[str, ...]:
    return tuple(m for m in ("get", *WRITE_METHODS) if hasattr(view, m))


def _walk(resolver: URLResolver, prefix: str = "", namespace: str = ""):
    for entry in resolver.url_patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(filter(None, [namespace, entry.namespace]))
            yield from _walk(entry, prefix + str(entry.pattern), inner)
        else:
            yield prefix + str(entry.pattern), namespace, entry


@cache
def page_routes() -> tuple[Route, ...]:
    """Every URL pattern under /p/<code>/, from the whole URLconf, nested includes included."""
    routes = []
    for path, namespace, pattern in _walk(get_resolver()):
        if not path.startswith(PROJECT_PREFIX) or not pattern.name:
            continue
        view = _page_view(pattern)
        name = f"{namespace}:{pattern.name}" if namespace else pattern.name
        kwargs = tuple(k for k in _route_kwargs(path) if k != "code")
        routes.append(Route(name=name, url_name=name, app=_app_of(view), view=view, is_api=False,
                            methods=_methods_of_page(view), kwargs=kwargs))
    return tuple(routes)


def _route_kwargs(path: str) -> list[str]:
    """The kwargs of a path() route: "p/<str:code>/runs/<int:pk>/" gives code and pk."""
    import re

    return re.findall(r"<(?:\w+:)?(\w+)>", path)


@cache
def api_routes() -> tuple[Route, ...]:
    """Every route of the API router (list, detail and extra actions, as the router builds them) and the
    API's other views under /api/ (the job status endpoint)."""
    from bringup.api_urls import router, urlpatterns

    routes = []
    for _prefix, viewset, basename in router.registry:
        allowed = set(viewset.http_method_names)
        for route in router.get_routes(viewset):
            methods = tuple(
                m for m in ("get", *WRITE_METHODS)
                if m in route.mapping and m in allowed and hasattr(viewset, route.mapping[m])
            )
            if not methods:
                continue
            url_name = route.name.format(basename=basename)
            kwargs = (getattr(viewset, "lookup_url_kwarg", None) or viewset.lookup_field,) if route.detail else ()
            routes.append(Route(name=f"api:{url_name}", url_name=url_name, app=_app_of(viewset), view=viewset,
                                is_api=True, methods=methods, kwargs=kwargs, detail=route.detail, basename=basename))
    router_patterns = {id(p) for p in router.urls}
    for pattern in urlpatterns:
        if id(pattern) in router_patterns or not isinstance(pattern, URLPattern):
            continue
        view = _page_view(pattern)
        if not (isinstance(view, type) and issubclass(view, APIView)):
            continue
        kwargs = tuple(_route_kwargs(str(pattern.pattern)))
        routes.append(Route(name=f"api:{pattern.name}", url_name=pattern.name, app=_app_of(view), view=view,
                            is_api=True, methods=_methods_of_page(view), kwargs=kwargs))
    return tuple(routes)


def all_routes() -> tuple[Route, ...]:
    return page_routes() + api_routes()


def role_can(role: str, capability: Capability) -> bool:
    return capability in ROLE_CAPABILITIES[role]


# --- the world ------------------------------------------------------------------------------------------


@dataclass
class World:
    project: object
    other_project: object
    users: dict[str, object]  # role -> user; "outsider" manages other_project and belongs to nothing else
    samples: dict[str, dict] = field(default_factory=dict)  # URL name -> kwargs, in `project`
    other_samples: dict[str, dict] = field(default_factory=dict)  # the same, in `other_project`
    queries: dict[str, dict] = field(default_factory=dict)  # URL name -> query parameters (QUERIES)
    media_root: object = None  # where the samples' files are


def samples_module(app: str):
    try:
        return importlib.import_module(f"tests.{app}.access_samples")
    except ModuleNotFoundError as missing:
        if missing.name != f"tests.{app}.access_samples":
            raise
        raise AssertionError(f"{samples_file(app)} is missing: every app gives the access matrix its samples") from None


def samples_modules(app: str) -> list:
    """The app's samples module and its parts: a part of the app with pages of its own (the floor pages
    of cabling) may keep its samples in `tests/<app>/access_samples_<part>.py` beside it."""
    from pathlib import Path

    folder = Path(__file__).resolve().parent / app
    parts = sorted(path.stem for path in folder.glob("access_samples_*.py"))
    return [samples_module(app), *(importlib.import_module(f"tests.{app}.{part}") for part in parts)]


def collect_samples(project) -> dict[str, dict]:
    """Every app's samples in `project`. projects' come last: its job status sample names a job row the
    other apps' samples made. Where two modules name the same route, its own app's module wins."""
    merged: dict[str, dict] = {}
    owned: dict[str, dict] = {}
    for app in SAMPLES_ORDER:
        for name, kwargs in (item for module in samples_modules(app) for item in module.samples(project).items()):
            merged.setdefault(name, kwargs)
            owned[f"{app}|{name}"] = kwargs
    for route in all_routes():
        if f"{route.app}|{route.name}" in owned:
            merged[route.name] = owned[f"{route.app}|{route.name}"]
    return merged


def build_world() -> World:
    """Two projects and their people, and every app's samples in both: the outsider's own project has rows
    too, so their lists are not empty merely because a list is broken."""
    from tests.factories import MembershipFactory, ProjectFactory, UserFactory

    project = ProjectFactory(code="ACME-72", name="ACME 72-node cluster")
    other_project = ProjectFactory(code="OTHER-8", name="Someone else's cluster", customer_name="Other Corp")
    users = {}
    for role in (Role.MANAGER, Role.TECHNICIAN, Role.CUSTOMER):
        users[role.value] = UserFactory(username=f"matrix-{role.value}")
        MembershipFactory(user=users[role.value], project=project, role=role)
    # The strongest outsider: a manager, with every right, of another project only.
    users["outsider"] = UserFactory(username="matrix-outsider")
    MembershipFactory(user=users["outsider"], project=other_project, role=Role.MANAGER)
    queries = {}
    for app in APPS:
        for module in samples_modules(app):
            queries |= getattr(module, "QUERIES", {})
    return World(project=project, other_project=other_project, users=users, samples=collect_samples(project),
                 other_samples=collect_samples(other_project), queries=queries)


FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@contextmanager
def world_for_module(django_db_blocker, tmp_path_factory, name: str) -> Iterator:
    """The world built once for a test module, inside a transaction rolled back at its end, with its own
    media root (the samples' files live there), fast password hashing and Celery tasks run in place."""
    from django.db import transaction
    from django.test import override_settings

    from bringup.celery import app

    media_root = tmp_path_factory.mktemp(f"{name}-media")
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        with (
            django_db_blocker.unblock(),
            override_settings(MEDIA_ROOT=str(media_root), PASSWORD_HASHERS=FAST_HASHERS),
            transaction.atomic(),
        ):
            built = build_world()
            built.media_root = media_root
            yield built
            transaction.set_rollback(True)
    finally:
        app.conf.task_always_eager = eager
