"""Pushing the as-built into a live NetBox through its REST API (pynetbox): read what NetBox has, by natural
key, compare it with the as-built (`handover.export`, the records the CSV files are written from), and, when
applying, create and update in import order. A dry run writes nothing; an apply is idempotent: what NetBox
already has as we have it is left alone, so a second apply sends no write.

Natural keys (what makes "the same object" on both sides):

    site          slug, else name           rack              site + name
    manufacturer  slug, else name           device type       manufacturer + model
    device role   slug, else name           device            site + name
    interface     device + name             cable             label, else the cable on its first A interface
    inventory item  device + serial

Reads are paged by pynetbox (`limit` per page) and filtered by site, so a NetBox holding other sites costs
nothing more; writes go in lists (NetBox's bulk create and bulk update: one POST or PATCH per BATCH objects,
each all-or-none). Only fields we know are sent, and blank values never are: a serial the customer typed in
NetBox is not wiped because we have none. A field NetBox does not return (an older version) is not compared.

Failures become `PushError` with messages a person can act on: NetBox's own field errors, per object when a
bulk write is refused; a refused token (403); a host that cannot be reached or does not answer like NetBox.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from urllib.parse import urlsplit

import pynetbox
import requests

from cabling.models import Cable
from delivery.handover.export import INTERFACE_KINDS, AsBuilt, NbCable, as_built, cables, interfaces, inventory_items
from inventory.models import Optic, Port
from projects.models import Project

logger = logging.getLogger(__name__)

BATCH = 500  # objects per bulk POST or PATCH: well under NetBox's request size limits
PAGE = 1000  # objects per read, NetBox's default MAX_PAGE_SIZE
TIMEOUT = (5, 120)  # seconds to connect, to read one answer (a bulk create of 500 interfaces takes a while)
EXAMPLES = 5  # per step and action, in the summary
MAX_MESSAGES = 20  # errors shown from one refused request


class PushError(Exception):
    """The push stopped: `messages` say why, each a sentence a person can act on."""

    def __init__(self, messages: list[str] | str):
        self.messages = [messages] if isinstance(messages, str) else list(messages)
        super().__init__("; ".join(self.messages))


class _Session(requests.Session):
    """requests waits forever by default: a NetBox that stops answering must fail the job, not hang it."""

    def request(self, method, url, **kwargs):
        kwargs.setdefault("timeout", TIMEOUT)
        # A redirect is not followed: the server calls the address the manager typed, nowhere else it is sent.
        kwargs["allow_redirects"] = False
        return super().request(method, url, **kwargs)


def connect(url: str, token: str) -> pynetbox.api:
    """A pynetbox client for NetBox at `url` (its root; a trailing /api is taken off)."""
    base = url.strip().rstrip("/")
    if base.endswith("/api"):
        base = base[: -len("/api")]
    api = pynetbox.api(base, token=token)
    api.http_session = _Session()
    return api


# --- what is compared -----------------------------------------------------------------------------------


class Pending:
    """The id of an object a dry run would create: nothing refers to it in NetBox yet."""

    def __init__(self, label: str):
        self.label = label

    def __repr__(self) -> str:
        return f"(new {self.label})"


def _plain(value):
    """A value NetBox returned, as we send it: a choice as its value, a related object as its id, a cable
    termination as (type, id)."""
    if isinstance(value, dict):
        if "object_id" in value:
            return (value.get("object_type"), value.get("object_id"))
        if "value" in value and "label" in value:
            return value["value"]
        if "id" in value:
            return value["id"]
        return value
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _same(ours, theirs) -> bool:
    if ours in (None, "") and theirs in (None, ""):
        return True
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return ours is theirs
    if isinstance(ours, (int, float, Decimal)) and isinstance(theirs, (int, float, Decimal)):
        return float(ours) == float(theirs)
    if isinstance(ours, list) and isinstance(theirs, list):  # terminations, in any order
        return sorted(map(_termination_key, ours)) == sorted(map(_termination_key, theirs))
    if isinstance(ours, str) and isinstance(theirs, str):
        return ours == theirs
    return ours == theirs


def _termination_key(item) -> tuple:
    if isinstance(item, dict):
        return (item.get("object_type"), item.get("object_id"))
    return tuple(item)


def _jsonable(value):
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, Pending):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    return value


def changes_between(payload: dict, current: dict, *, skip: frozenset[str] = frozenset()) -> dict[str, tuple]:
    """Fields whose value we send differs from NetBox's: {field: (theirs, ours)}, leaving out `skip`. A field
    NetBox did not return is not compared (an older NetBox without it ignores it on write as well)."""
    changed = {}
    for name, ours in payload.items():
        if name in skip or name not in current:
            continue
        theirs = _plain(current[name])
        if not _same(ours, theirs):
            changed[name] = (theirs, ours)
    return changed


def _payload(**fields) -> dict:
    """What we send: blank values left out, so we never clear what the customer keeps in NetBox."""
    return {name: value for name, value in fields.items() if value not in (None, "")}


# --- one step of the push -------------------------------------------------------------------------------


@dataclass
class Item:
    """One object as we want it in NetBox: its natural keys (tried in turn against NetBox's objects), how a
    person names it, its fields, and `ref`, what later steps call it by (a device by its name)."""

    keys: tuple
    label: str
    payload: dict
    ref: object = None


@dataclass
class StepResult:
    key: str
    title: str
    create: int = 0
    update: int = 0
    unchanged: int = 0
    examples: dict = field(default_factory=lambda: {"create": [], "update": []})

    def as_dict(self) -> dict:
        return {"key": self.key, "title": self.title, "create": self.create, "update": self.update,
                "unchanged": self.unchanged, "examples": self.examples}


@dataclass
class Step:
    key: str
    title: str
    endpoint: str  # "dcim.interfaces"
    items: Callable[[Pusher], Iterable[Item]]
    existing: Callable[[Pusher], Iterable[dict]]  # NetBox's objects that may match ours
    index: Callable[[dict], Iterable]  # natural keys of one of NetBox's objects
    kind: str | None = None  # where later steps find the NetBox ids (Pusher.ids[kind][item.ref])
    # Sent when creating, never changed: what the object was matched by (a site found by its name keeps
    # the customer's slug, a manufacturer called "nvidia" there is not renamed "NVIDIA").
    create_only: frozenset[str] = frozenset({"slug"})

    def remember(self, pusher: Pusher, item: Item, pk) -> None:
        if self.kind is not None:
            pusher.ids[self.kind][item.ref] = pk


def _example(result: StepResult, action: str, example) -> None:
    if len(result.examples[action]) < EXAMPLES:
        result.examples[action].append(example)


class Pusher:
    """Plans (and, with `apply`, carries out) the push of one project. `report(done, total, step)` is
    called as objects are compared and written."""

    def __init__(self, project: Project, api: pynetbox.api, *, apply: bool,
                 report: Callable[..., None] | None = None):
        self.project, self.api, self.apply = project, api, apply
        self.report = report or (lambda *args, **kwargs: None)
        self.built: AsBuilt | None = None
        self.ids: dict[str, dict] = {name: {} for name in (
            "site", "rack", "manufacturer", "device_type", "role", "device", "interface")}
        self.interface_cable: dict[int, int] = {}  # NetBox interface id -> the cable on it
        self.interfaces_read: list[dict] | None = None  # read once for the ports and the lanes
        self.results: list[dict] = []  # the summary of each step finished, in order
        self.done = 0
        self.total = 0
        self.version = ""

    # --- running ------------------------------------------------------------------------------------

    def run(self) -> list[dict]:
        """Every step in import order; the summary of each (counts and examples)."""
        self.version = self._check_reachable()
        self.built = as_built(self.project)
        self.total = self._count()
        for step in STEPS:
            self.results.append(self._run_step(step).as_dict())
        return self.results

    def _count(self) -> int:
        """How many objects the push compares, for the progress bar (three count queries)."""
        built = self.built
        small = (built.sites, built.racks, built.manufacturers, built.device_types, built.roles, built.devices)
        return (sum(len(rows) for rows in small)
                + Port.objects.filter(device__project=self.project, kind__in=INTERFACE_KINDS).count()
                + Cable.objects.filter(project=self.project).count()
                + Optic.objects.filter(project=self.project, port__isnull=False).count())

    def _check_reachable(self) -> str:
        try:
            version = self.api.version
        except Exception as exc:  # noqa: BLE001 - each kind of failure is worded by netbox_error
            raise PushError(netbox_error(exc, what="reading NetBox's API root")) from exc
        if not version:
            raise PushError(f"{self.api.base_url}/ answers, but not like NetBox (no API-Version header): check "
                            "the URL.")
        return version

    def _run_step(self, step: Step) -> StepResult:
        self.report(self.done, self.total, f"{step.title}: reading NetBox")
        index: dict = {}
        for current in self._read(step):
            for key in step.index(current):
                index.setdefault(key, current)
        result = StepResult(step.key, step.title)
        # What an apply sends; a dry run only counts (and keeps a few examples), so its memory stays small.
        creates: list[Item] = []
        updates: list[tuple[Item, int, dict]] = []
        for item in step.items(self):
            current = next((index[key] for key in item.keys if key in index), None)
            if current is None:
                result.create += 1
                _example(result, "create", item.label)
                if self.apply:
                    creates.append(item)
                step.remember(self, item, Pending(item.label))
                continue
            step.remember(self, item, current["id"])
            changed = changes_between(item.payload, current, skip=step.create_only)
            if not changed:
                result.unchanged += 1
                continue
            result.update += 1
            _example(result, "update", {"object": item.label,
                                        "changes": {name: _jsonable(list(pair)) for name, pair in changed.items()}})
            if self.apply:
                updates.append((item, current["id"], changed))
        self.done += result.unchanged
        if self.apply:
            self._create(step, creates)
            self._update(step, updates)
        else:
            self.done += result.create + result.update
        self.report(self.done, self.total, step.title)
        return result

    def _read(self, step: Step) -> Iterable[dict]:
        """NetBox's objects for the step, as the JSON it sent (pynetbox pages through them)."""
        try:
            yield from step.existing(self)
        except PushError:
            raise
        except Exception as exc:  # noqa: BLE001
            raise PushError(netbox_error(exc, what=f"reading {step.title.lower()}")) from exc

    def _create(self, step: Step, items: list[Item]) -> None:
        endpoint = self._endpoint(step)
        for start in range(0, len(items), BATCH):
            batch = items[start:start + BATCH]
            payloads = [self._resolved(item.payload) for item in batch]
            try:
                created = endpoint.create(payloads)
            except Exception as exc:  # noqa: BLE001
                raise PushError(netbox_error(exc, what=f"creating {step.title.lower()}",
                                             labels=[item.label for item in batch])) from exc
            for item, record in zip(batch, created, strict=True):
                step.remember(self, item, record.id)
            self.done += len(batch)
            self.report(self.done, self.total, f"{step.title}: created {start + len(batch)}")

    def _update(self, step: Step, updates: list[tuple[Item, int, dict]]) -> None:
        endpoint = self._endpoint(step)
        for start in range(0, len(updates), BATCH):
            batch = updates[start:start + BATCH]
            changes = [{"id": pk, **{name: self._resolved(ours) for name, (_, ours) in changed.items()}}
                       for _, pk, changed in batch]
            try:
                endpoint.update(changes)
            except Exception as exc:  # noqa: BLE001
                raise PushError(netbox_error(exc, what=f"updating {step.title.lower()}",
                                             labels=[item.label for item, _, _ in batch])) from exc
            self.done += len(batch)
            self.report(self.done, self.total, f"{step.title}: updated {start + len(batch)}")

    def _endpoint(self, step: Step):
        app, name = step.endpoint.split(".")
        return getattr(getattr(self.api, app), name)

    def _resolved(self, value):
        """A payload as sent: a decimal as a number (JSON has no decimals)."""
        if isinstance(value, dict):
            return {key: self._resolved(item) for key, item in value.items()}
        if isinstance(value, list):
            return [self._resolved(item) for item in value]
        if isinstance(value, Decimal):
            return float(value)
        if isinstance(value, Pending):  # cannot happen when applying: parents are created first
            raise PushError(f"{value!r} was not created before the objects that need it.")
        return value

    # --- reading helpers ------------------------------------------------------------------------------

    def objects(self, endpoint: str, **filters) -> Iterable[dict]:
        """Every object of an endpoint matching `filters`, page by page, as NetBox's JSON. A filter on an
        empty list of ids reads nothing (NetBox would ignore it and return everything)."""
        if any(isinstance(value, list) and not value for value in filters.values()):
            return
        app, name = endpoint.split(".")
        records = getattr(getattr(self.api, app), name).filter(limit=PAGE, **filters)
        # The JSON itself, without building a pynetbox Record per object: an interface read of a large
        # cluster is 100,000 objects, and we only compare a few fields of each.
        yield from records.response

    def known_ids(self, kind: str) -> list[int]:
        return sorted(pk for pk in self.ids[kind].values() if isinstance(pk, int))


def netbox_error(exc: Exception, *, what: str, labels: list[str] | None = None) -> list[str]:
    """Messages for a failed request: NetBox's answer worded for a person, per object of a refused bulk
    write (NetBox answers a list of errors in the order sent, or, from 4.7, {"errors": [{"index", ...}]})."""
    if isinstance(exc, pynetbox.RequestError):
        return _request_error(exc, what=what, labels=labels or [])
    if isinstance(exc, pynetbox.core.query.ContentError):
        return [f"NetBox answered {what} with something that is not JSON: is the URL NetBox's?"]
    if isinstance(exc, requests.exceptions.Timeout):
        return [f"NetBox did not answer in time while {what}: try again, or check that it is up."]
    if isinstance(exc, requests.exceptions.SSLError):
        return [f"The TLS connection to NetBox failed while {what}: {exc.__class__.__name__}. Check the URL and "
                "NetBox's certificate."]
    if isinstance(exc, requests.exceptions.ConnectionError):
        return [f"NetBox cannot be reached ({_host_of(exc)}) while {what}: check the URL and that this server can "
                "reach it."]
    if isinstance(exc, requests.exceptions.RequestException):
        return [f"The request to NetBox failed while {what}: {exc.__class__.__name__}."]
    logger.exception("NetBox push failed while %s", what)
    return [f"The push failed while {what}: {exc.__class__.__name__}: {exc}"]


def _host_of(exc: Exception) -> str:
    request = getattr(exc, "request", None)
    url = getattr(request, "url", "") or ""
    return urlsplit(url).netloc or "host unknown"


def _request_error(exc: pynetbox.RequestError, *, what: str, labels: list[str]) -> list[str]:
    status = exc.req.status_code
    try:
        body = exc.req.json()
    except ValueError:
        body = None
    if status in (401, 403):
        detail = body.get("detail") if isinstance(body, dict) else ""
        return [f"NetBox refused the request ({status}{': ' + str(detail) if detail else ''}) while {what}: check "
                "the token, that it is write-enabled for an apply, and the permissions of its user."]
    if status == 404:
        return [f"NetBox answered 404 Not Found while {what}: is the URL NetBox's root (without /api)?"]
    if 300 <= status < 400:
        return [f"The server answered with a redirect ({status}) while {what}; redirects are not followed: give "
                "NetBox's own address (https:// if it redirects there)."]
    messages = _field_errors(body, labels) if status == 400 else []
    if not messages:
        detail = body.get("detail") if isinstance(body, dict) and body.get("detail") else _short(exc.req.text)
        messages = [detail or exc.req.reason]
    head = f"NetBox refused {what} ({status})"
    shown = [f"{head}: {message}" for message in messages[:MAX_MESSAGES]]
    if len(messages) > MAX_MESSAGES:
        shown.append(f"... and {len(messages) - MAX_MESSAGES} more errors.")
    return shown


def _field_errors(body, labels: list[str]) -> list[str]:
    """NetBox's 400 body as one message per object and field."""
    if isinstance(body, dict) and isinstance(body.get("errors"), list):  # NetBox 4.7's bulk shape
        pairs = [(entry.get("index"), entry.get("errors")) for entry in body["errors"] if isinstance(entry, dict)]
    elif isinstance(body, list):  # one entry per object sent, {} for those that were fine
        pairs = list(enumerate(body))
    elif isinstance(body, dict):
        pairs = [(0 if len(labels) == 1 else None, body)]
    else:
        return []
    messages = []
    for index, errors in pairs:
        if not errors:
            continue
        name = labels[index] if isinstance(index, int) and 0 <= index < len(labels) else "the request"
        messages.append(f"{name}: {_errors_text(errors)}")
    return messages


def _errors_text(errors) -> str:
    if isinstance(errors, dict):
        return "; ".join(f"{field_name}: {_errors_text(value)}" for field_name, value in errors.items())
    if isinstance(errors, list):
        return " ".join(_errors_text(value) for value in errors)
    return _short(str(errors))


def _short(text: str, limit: int = 300) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 3] + "..."



# --- the steps, in import order -------------------------------------------------------------------------


def _fold(text) -> str:
    return (text or "").casefold()


def _named_keys(o: dict) -> tuple:
    """A site, manufacturer or role: the same by slug, or by name whatever its case."""
    return (("slug", o.get("slug")), ("name", _fold(o.get("name"))))


def _sites(p: Pusher):
    for site in p.built.sites:
        yield Item(keys=(("slug", site.slug), ("name", _fold(site.name))), label=site.name, ref=site.name,
                   payload=_payload(name=site.name, slug=site.slug, status=site.status,
                                    physical_address=site.physical_address))


def _existing_sites(p: Pusher):
    yield from p.objects("dcim.sites", slug=[s.slug for s in p.built.sites])
    yield from p.objects("dcim.sites", name=[s.name for s in p.built.sites])


def _racks(p: Pusher):
    for rack in p.built.racks:
        site = p.ids["site"][rack.site]
        yield Item(keys=((site, _fold(rack.name)),), label=f"{rack.site} / {rack.name}", ref=(rack.site, rack.name),
                   payload=_payload(site=site, name=rack.name, status=rack.status, width=rack.width,
                                    u_height=rack.u_height, description=rack.description))


def _manufacturers(p: Pusher):
    for maker in p.built.manufacturers:
        yield Item(keys=(("slug", maker.slug), ("name", _fold(maker.name))), label=maker.name, ref=maker.name,
                   payload=_payload(name=maker.name, slug=maker.slug))


def _device_types(p: Pusher):
    for kind in p.built.device_types:
        maker = p.ids["manufacturer"][kind.manufacturer]
        yield Item(keys=((maker, "model", _fold(kind.model)), (maker, "slug", kind.slug)),
                   label=f"{kind.manufacturer} {kind.model}", ref=(kind.manufacturer, kind.model),
                   payload=_payload(manufacturer=maker, model=kind.model, slug=kind.slug, part_number=kind.part_number,
                                    u_height=kind.u_height, is_full_depth=kind.is_full_depth))


def _roles(p: Pusher):
    for role in p.built.roles:
        yield Item(keys=(("slug", role.slug), ("name", _fold(role.name))), label=role.name, ref=role.name,
                   payload=_payload(name=role.name, slug=role.slug, color=role.color))


def _devices(p: Pusher):
    for device in p.built.devices:
        site = p.ids["site"].get(device.site)
        rack = p.ids["rack"].get((device.site, device.rack)) if device.rack else None
        yield Item(keys=((site, _fold(device.name)),), label=device.name, ref=device.name, payload=_payload(
            name=device.name, role=p.ids["role"][device.role],
            device_type=p.ids["device_type"][(device.manufacturer, device.device_type)],
            site=site, rack=rack, position=device.position, face=device.face, status=device.status,
            serial=device.serial, asset_tag=device.asset_tag,
        ))


def _interface_items(p: Pusher, *, lanes: bool):
    for interface in interfaces(p.project, lanes=lanes):
        device = p.ids["device"][interface.device]
        parent = p.ids["interface"][(interface.device, interface.parent)] if lanes else None
        yield Item(keys=((device, interface.name),), label=f"{interface.device}:{interface.name}",
                   ref=(interface.device, interface.name), payload=_payload(
                       device=device, name=interface.name, parent=parent, type=interface.type, speed=interface.speed,
                       enabled=interface.enabled, mgmt_only=interface.mgmt_only, wwn=interface.wwn,
                       description=interface.description,
                   ))


INTERFACE_COMPARED = ("id", "device", "name", "parent", "type", "speed", "enabled", "mgmt_only", "wwn", "description")


def _existing_interfaces(p: Pusher):
    """The interfaces of our devices, read once for the ports and the lanes, keeping only the fields we
    compare (a large cluster has 100,000 of them), and noting the cable on each."""
    if p.interfaces_read is None:
        devices = set(p.known_ids("device"))
        kept = []
        for current in p.objects("dcim.interfaces", site_id=p.known_ids("site")):
            if _plain(current.get("device")) not in devices:
                continue
            cable = _plain(current.get("cable"))
            if cable:
                p.interface_cable[current["id"]] = cable
            kept.append({name: current[name] for name in INTERFACE_COMPARED if name in current})
        p.interfaces_read = kept
    yield from p.interfaces_read


def _terminations(p: Pusher, ends) -> list[dict]:
    return [{"object_type": "dcim.interface", "object_id": p.ids["interface"][(device, name)]} for device, name in ends]


def _cable_label(cable: NbCable) -> str:
    a = ", ".join(f"{device}:{name}" for device, name in cable.a)
    b = ", ".join(f"{device}:{name}" for device, name in cable.b)
    return f"{cable.label} ({a} - {b})"


def _cables(p: Pusher):
    for cable in cables(p.project):
        a, b = _terminations(p, cable.a), _terminations(p, cable.b)
        first = a[0]["object_id"] if a else None
        on_first = p.interface_cable.get(first) if isinstance(first, int) else None
        # A cable NetBox has under another label (relabelled there, or imported before it had one) is
        # still the one on our first A interface.
        keys = (("label", cable.label),) + ((("id", on_first),) if on_first else ())
        yield Item(keys=keys, label=_cable_label(cable), payload=_payload(
            a_terminations=a, b_terminations=b, type=cable.type, status=cable.status, label=cable.label,
            length=cable.length, length_unit=cable.length_unit, description=cable.description,
        ))


def _inventory_items(p: Pusher):
    for optic in inventory_items(p.project):
        device = p.ids["device"][optic.device]
        yield Item(keys=((device, optic.serial),), label=f"{optic.device}:{optic.component_name} {optic.serial}",
                   payload=_payload(
                       device=device, name=optic.name, status=optic.status,
                       manufacturer=p.ids["manufacturer"][optic.manufacturer], part_id=optic.part_id,
                       serial=optic.serial, component_type=optic.component_type,
                       component_id=p.ids["interface"][(optic.device, optic.component_name)],
                       description=optic.description,
                   ))


NAMED = frozenset({"name", "slug"})

STEPS: tuple[Step, ...] = (
    Step("sites", "Sites", "dcim.sites", _sites, _existing_sites, _named_keys, kind="site", create_only=NAMED),
    Step("racks", "Racks", "dcim.racks", _racks,
         lambda p: p.objects("dcim.racks", site_id=p.known_ids("site")),
         lambda o: ((_plain(o.get("site")), _fold(o.get("name"))),), kind="rack", create_only=frozenset({"name"})),
    Step("manufacturers", "Manufacturers", "dcim.manufacturers", _manufacturers,
         lambda p: p.objects("dcim.manufacturers"), _named_keys, kind="manufacturer", create_only=NAMED),
    Step("device_types", "Device types", "dcim.device_types", _device_types,
         lambda p: p.objects("dcim.device_types", manufacturer_id=p.known_ids("manufacturer")),
         lambda o: ((_plain(o.get("manufacturer")), "model", _fold(o.get("model"))),
                    (_plain(o.get("manufacturer")), "slug", o.get("slug"))), kind="device_type",
         create_only=frozenset({"model", "slug"})),
    Step("device_roles", "Device roles", "dcim.device_roles", _roles,
         lambda p: p.objects("dcim.device_roles"), _named_keys, kind="role", create_only=NAMED),
    Step("devices", "Devices", "dcim.devices", _devices,
         lambda p: p.objects("dcim.devices", site_id=p.known_ids("site")),
         lambda o: ((_plain(o.get("site")), _fold(o.get("name"))),), kind="device", create_only=frozenset({"name"})),
    Step("interfaces", "Interfaces", "dcim.interfaces", lambda p: _interface_items(p, lanes=False),
         _existing_interfaces, lambda o: ((_plain(o.get("device")), o.get("name")),), kind="interface"),
    Step("lanes", "Breakout lanes", "dcim.interfaces", lambda p: _interface_items(p, lanes=True),
         _existing_interfaces, lambda o: ((_plain(o.get("device")), o.get("name")),), kind="interface"),
    Step("cables", "Cables", "dcim.cables", _cables,
         lambda p: p.objects("dcim.cables", site_id=p.known_ids("site")),
         lambda o: (("label", o.get("label")), ("id", o.get("id")))),
    Step("inventory_items", "Optics (inventory items)", "dcim.inventory_items", _inventory_items,
         lambda p: p.objects("dcim.inventory_items", site_id=p.known_ids("site")),
         lambda o: ((_plain(o.get("device")), o.get("serial")),)),
)
