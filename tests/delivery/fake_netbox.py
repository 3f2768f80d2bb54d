"""A fake NetBox for the push tests: a real HTTP server (threads, 127.0.0.1, a random port) answering the
subset of NetBox's REST API the push uses, the way NetBox documents it (docs/integrations/rest-api.md and
the DCIM models of NetBox 4.2): it is the edge of the world, since no test may reach a real NetBox.

- Authentication: `Authorization: Token <key>` on every request; none gives 403 "Authentication
  credentials were not provided.", a wrong one 403 "Invalid token", a write with a read-only token 403.
- GET /api/ (the `API-Version` header pynetbox reads), GET /api/status/.
- Lists: exact filters (repeated parameters are ORed, as NetBox's multi-value filters), unknown filters
  ignored as NetBox does, `limit`/`offset` pagination with `count`, `next`, `previous`, `results`
  (default page 50, at most MAX_PAGE_SIZE, limit=0 meaning the maximum).
- Writes: POST of one object or a list (bulk create), PATCH of one object or of a list with ids (bulk
  update); each request all-or-none. Refusals are NetBox's 400 shapes: {field: [messages]} for one object,
  a list with one entry per object sent ({} for those that were fine) for a list, or, with
  `bulk_errors="indexed"`, NetBox 4.7's {"detail", "errors": [{"index", "errors"}]}.
- Representation: related objects nested ({id, url, display, name...}), choices as {value, label}, cable
  terminations as [{object_type, object_id, object}], an interface's `cable`; decimals as numbers.

Only what the push sends is validated, with NetBox's rules for it: required fields, choices, uniqueness
(a site's name and slug, a rack's name in its site, a device's name in its site, an interface's name on
its device...), a rack in the device's site, a position only with a rack and a face and not for a zero-U
type, a lane's parent on the same device, a cable termination not already connected, a length with its unit.

`requests` records every request (method, path, number of objects in the body) so tests can count writes.
"""

from __future__ import annotations

import copy
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlsplit

MAX_PAGE_SIZE = 1000
DEFAULT_PAGE = 50
TOKEN = "0123456789abcdef0123456789abcdef01234567"

SITE_STATUS = ("planned", "staging", "active", "decommissioning", "retired")
RACK_STATUS = ("reserved", "available", "planned", "active", "deprecated")
DEVICE_STATUS = ("offline", "active", "planned", "staged", "failed", "inventory", "decommissioning")
ITEM_STATUS = DEVICE_STATUS
CABLE_STATUS = ("connected", "planned", "decommissioning")
CABLE_TYPES = ("cat3", "cat5", "cat5e", "cat6", "cat6a", "cat7", "cat7a", "cat8", "dac-active", "dac-passive",
               "mrj21-trunk", "coaxial", "mmf", "mmf-om1", "mmf-om2", "mmf-om3", "mmf-om4", "mmf-om5", "smf",
               "smf-os1", "smf-os2", "aoc", "power", "usb")
LENGTH_UNITS = ("km", "m", "cm", "mi", "ft", "in")
FACES = ("front", "rear")
WIDTHS = (10, 19, 21, 23)
# NetBox's physical interface types the push can send (dcim.choices.InterfaceTypeChoices), plus the
# virtual ones a cable cannot end on.
INTERFACE_TYPES = (
    "1000base-t", "1000base-tx", "1000base-x-sfp", "10gbase-t", "10gbase-x-sfpp", "25gbase-x-sfp28",
    "40gbase-x-qsfpp", "50gbase-x-sfp28", "50gbase-x-sfp56", "100gbase-x-qsfp28", "100gbase-x-qsfpdd",
    "100gbase-x-dsfp", "100gbase-x-sfpdd", "200gbase-x-qsfp56", "200gbase-x-qsfpdd", "400gbase-x-qsfp112",
    "400gbase-x-qsfpdd", "400gbase-x-osfp", "400gbase-x-osfp-rhs", "800gbase-x-qsfpdd", "800gbase-x-osfp",
    "1.6tbase-x-osfp1600", "1.6tbase-x-osfp1600-rhs", "1.6tbase-x-qsfpdd1600", "infiniband-sdr", "infiniband-ddr",
    "infiniband-qdr", "infiniband-fdr10", "infiniband-fdr", "infiniband-edr", "infiniband-hdr", "infiniband-ndr",
    "infiniband-xdr", "other", "virtual", "bridge", "lag",
)
VIRTUAL_TYPES = ("virtual", "bridge", "lag")
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
COLOR = re.compile(r"^[0-9a-f]{6}$")
WWN = re.compile(r"^([0-9A-Fa-f]{2}:){7}[0-9A-Fa-f]{2}$")


class Refused(Exception):
    """A 400 for one object: {field: [messages]}."""

    def __init__(self, errors: dict):
        super().__init__(errors)
        self.errors = errors


# --- the model: fields per endpoint ---------------------------------------------------------------------


@dataclass(frozen=True)
class F:
    """One writable field: its kind (text, slug, int, decimal, bool, choice, fk, color, wwn), whether it is
    required on create, its default, its choices or related endpoint."""

    kind: str = "text"
    required: bool = False
    default: object = None
    choices: tuple = ()
    to: str = ""
    max_length: int = 200


@dataclass
class Spec:
    display: str  # the field a nested representation and `display` show
    fields: dict[str, F]
    unique: tuple[tuple[str, ...], ...] = ()  # case-insensitive on text
    filters: dict[str, str] = field(default_factory=dict)  # query parameter -> field (or a method name)


SPECS: dict[str, Spec] = {
    "dcim/sites": Spec("name", {
        "name": F(required=True, max_length=100), "slug": F("slug", required=True),
        "status": F("choice", default="active", choices=SITE_STATUS), "physical_address": F(), "description": F(),
    }, unique=(("name",), ("slug",)), filters={"id": "id", "name": "name", "slug": "slug"}),
    "dcim/racks": Spec("name", {
        "site": F("fk", required=True, to="dcim/sites"), "name": F(required=True, max_length=100),
        "status": F("choice", default="active", choices=RACK_STATUS), "width": F("choice", default=19, choices=WIDTHS),
        "u_height": F("int", default=42), "description": F(),
    }, unique=(("site", "name"),), filters={"id": "id", "name": "name", "site_id": "site"}),
    "dcim/manufacturers": Spec("name", {
        "name": F(required=True, max_length=100), "slug": F("slug", required=True), "description": F(),
    }, unique=(("name",), ("slug",)), filters={"id": "id", "name": "name", "slug": "slug"}),
    "dcim/device-types": Spec("model", {
        "manufacturer": F("fk", required=True, to="dcim/manufacturers"), "model": F(required=True, max_length=100),
        "slug": F("slug", required=True), "part_number": F(max_length=50), "u_height": F("decimal", default=1.0),
        "is_full_depth": F("bool", default=True), "description": F(),
    }, unique=(("manufacturer", "model"), ("manufacturer", "slug")),
        filters={"id": "id", "model": "model", "slug": "slug", "manufacturer_id": "manufacturer"}),
    "dcim/device-roles": Spec("name", {
        "name": F(required=True, max_length=100), "slug": F("slug", required=True),
        "color": F("color", default="9e9e9e"), "description": F(),
    }, unique=(("name",), ("slug",)), filters={"id": "id", "name": "name", "slug": "slug"}),
    "dcim/devices": Spec("name", {
        "name": F(max_length=64), "role": F("fk", required=True, to="dcim/device-roles"),
        "device_type": F("fk", required=True, to="dcim/device-types"), "site": F("fk", required=True, to="dcim/sites"),
        "rack": F("fk", to="dcim/racks"), "position": F("decimal"), "face": F("choice", choices=FACES),
        "status": F("choice", default="active", choices=DEVICE_STATUS), "serial": F(max_length=50),
        "asset_tag": F(max_length=50), "description": F(),
    }, unique=(("site", "name"), ("asset_tag",)), filters={"id": "id", "name": "name", "site_id": "site"}),
    "dcim/interfaces": Spec("name", {
        "device": F("fk", required=True, to="dcim/devices"), "name": F(required=True, max_length=64),
        "parent": F("fk", to="dcim/interfaces"), "type": F("choice", required=True, choices=INTERFACE_TYPES),
        "speed": F("int"), "enabled": F("bool", default=True), "mgmt_only": F("bool", default=False),
        "wwn": F("wwn"), "description": F(),
    }, unique=(("device", "name"),), filters={"id": "id", "name": "name", "device_id": "device", "site_id": "_site"}),
    "dcim/cables": Spec("label", {
        "type": F("choice", choices=CABLE_TYPES), "status": F("choice", default="connected", choices=CABLE_STATUS),
        "label": F(max_length=100), "length": F("decimal"), "length_unit": F("choice", choices=LENGTH_UNITS),
        "description": F(),
    }, filters={"id": "id", "label": "label", "site_id": "_site", "device_id": "_device"}),
    "dcim/inventory-items": Spec("name", {
        "device": F("fk", required=True, to="dcim/devices"), "name": F(required=True, max_length=64),
        "status": F("choice", default="active", choices=ITEM_STATUS), "manufacturer": F("fk", to="dcim/manufacturers"),
        "part_id": F(max_length=50), "serial": F(max_length=50), "component_type": F(), "component_id": F("int"),
        "description": F(),
    }, unique=(("device", "name"),),
        filters={"id": "id", "serial": "serial", "device_id": "device", "site_id": "_site"}),
}
TERMINATION_SIDES = ("a_terminations", "b_terminations")


def _fold(value):
    return value.casefold() if isinstance(value, str) else value


# --- the store ------------------------------------------------------------------------------------------


class Store:
    """NetBox's objects, by endpoint and id, with the unique indexes; writes are all-or-none per request."""

    def __init__(self):
        self.rows: dict[str, dict[int, dict]] = {name: {} for name in SPECS}
        self.unique: dict[tuple, dict] = {}  # (endpoint, fields) -> {values: id}
        self.next_id = 1
        # interface id -> cable id, kept as NetBox keeps Interface.cable
        self.cable_of: dict[int, int] = {}

    # --- unique indexes ---

    def _unique_values(self, endpoint: str, fields: tuple, row: dict):
        values = tuple(_fold(row.get(name)) for name in fields)
        return None if any(value in (None, "") for value in values) else values

    def _index(self, endpoint: str, row: dict, *, add: bool) -> None:
        for fields in SPECS[endpoint].unique:
            values = self._unique_values(endpoint, fields, row)
            if values is None:
                continue
            index = self.unique.setdefault((endpoint, fields), {})
            if add:
                index[values] = row["id"]
            elif index.get(values) == row["id"]:
                del index[values]

    def _check_unique(self, endpoint: str, row: dict) -> None:
        for fields in SPECS[endpoint].unique:
            values = self._unique_values(endpoint, fields, row)
            taken = self.unique.get((endpoint, fields), {}).get(values) if values else None
            if taken is not None and taken != row.get("id"):
                name = fields[-1]
                noun = endpoint.split("/")[1].rstrip("s").replace("-", " ")
                if len(fields) == 1:
                    raise Refused({name: [f"{noun} with this {name} already exists."]})
                raise Refused({"__all__": [f"A {noun} with this {' and '.join(fields)} already exists."]})

    # --- writes ---

    def create(self, endpoint: str, data: dict) -> dict:
        row = {"id": None}
        errors = {}
        for name, spec in SPECS[endpoint].fields.items():
            if name in data:
                try:
                    row[name] = self._value(spec, data[name], name)
                except Refused as exc:
                    errors.update(exc.errors)
            elif spec.required:
                errors[name] = ["This field is required."]
            elif spec.default is None and spec.kind in ("text", "slug") and name != "asset_tag":
                row[name] = ""  # NetBox's text fields are blank, not null (an asset tag is null: it is unique)
            else:
                row[name] = spec.default
        if endpoint == "dcim/cables":
            for side in TERMINATION_SIDES:
                if not data.get(side):
                    errors[side] = ["This field is required."]
        if errors:
            raise Refused(errors)
        row["id"] = self.next_id
        self._validate(endpoint, row, data)
        self.next_id += 1
        self.rows[endpoint][row["id"]] = row
        self._index(endpoint, row, add=True)
        if endpoint == "dcim/cables":
            self._terminate(row, data)
        return row

    def update(self, endpoint: str, pk, data: dict) -> dict:
        row = self.rows[endpoint].get(pk) if isinstance(pk, int) else None
        if row is None:
            raise Refused({"id": [f"Object with id {pk} does not exist."]} if pk is not None
                          else {"id": ["This field is required."]})
        changed = dict(row)
        errors = {}
        for name, value in data.items():
            spec = SPECS[endpoint].fields.get(name)
            if spec is not None:
                try:
                    changed[name] = self._value(spec, value, name)
                except Refused as exc:
                    errors.update(exc.errors)
        if errors:
            raise Refused(errors)
        self._validate(endpoint, changed, data)
        self._index(endpoint, row, add=False)
        row.update(changed)
        self._index(endpoint, row, add=True)
        if endpoint == "dcim/cables" and any(side in data for side in TERMINATION_SIDES):
            merged = {side: data.get(side, row[side]) for side in TERMINATION_SIDES}
            self._unterminate(row)
            self._terminate(row, merged)
        return row

    def delete(self, endpoint: str, pk: int) -> None:
        row = self.rows[endpoint].pop(pk, None)
        if row is not None:
            self._index(endpoint, row, add=False)
            if endpoint == "dcim/cables":
                self._unterminate(row)

    # --- values and rules ---

    def _value(self, spec: F, value, name: str):
        if value is None:
            if spec.required:
                raise Refused({name: ["This field may not be null."]})
            return None
        kind = spec.kind
        if kind in ("text", "slug", "wwn", "color"):
            if not isinstance(value, str):
                raise Refused({name: ["Not a valid string."]})
            value = value.strip()
            if spec.required and not value:
                raise Refused({name: ["This field may not be blank."]})
            if len(value) > spec.max_length:
                raise Refused({name: [f"Ensure this field has no more than {spec.max_length} characters."]})
            if kind == "slug" and not SLUG.match(value):
                raise Refused({name: ['Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.']})
            if kind == "color" and not COLOR.match(value):
                raise Refused({name: ["Enter a valid hexadecimal RGB color code."]})
            if kind == "wwn" and value and not WWN.match(value):
                raise Refused({name: [f"Invalid WWN format: {value}"]})
            return value.upper() if kind == "wwn" else value
        if kind in ("int", "decimal"):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise Refused({name: ["A valid number is required."]})
            return int(value) if kind == "int" else float(value)
        if kind == "bool":
            if not isinstance(value, bool):
                raise Refused({name: ["Must be a valid boolean."]})
            return value
        if kind == "choice":
            if value == "" and not spec.required:
                return ""
            if value not in spec.choices:
                raise Refused({name: [f'"{value}" is not a valid choice.']})
            return value
        if kind == "fk":
            pk = value.get("id") if isinstance(value, dict) else value
            if isinstance(pk, bool) or not isinstance(pk, int):
                raise Refused({name: ["Related objects must be referenced by numeric ID or by dictionary of "
                                      "attributes. Received an unrecognized value: " + repr(value)]})
            if pk not in self.rows[spec.to]:
                raise Refused({name: [f"Related object not found using the provided numeric ID: {pk}"]})
            return pk
        raise AssertionError(kind)

    def _validate(self, endpoint: str, row: dict, data: dict) -> None:
        self._check_unique(endpoint, row)
        if endpoint == "dcim/devices":
            self._validate_device(row)
        elif endpoint == "dcim/interfaces":
            parent = row.get("parent")
            if parent is not None and self.rows["dcim/interfaces"][parent]["device"] != row["device"]:
                raise Refused({"parent": ["The selected parent interface belongs to a different device."]})
            if parent is not None and parent == row["id"]:
                raise Refused({"parent": ["An interface cannot be its own parent."]})
        elif endpoint == "dcim/cables":
            if row.get("length") is not None and not row.get("length_unit"):
                raise Refused({"length_unit": ["Must specify a unit when setting a cable length"]})
            for side in TERMINATION_SIDES:
                if side in data:
                    self._check_terminations(row, side, data[side])
            a, b = (self._ids(data.get(side, row.get(side, []))) for side in TERMINATION_SIDES)
            if set(a) & set(b):
                raise Refused({"b_terminations": ["A and B terminations cannot connect to the same object."]})
        elif endpoint == "dcim/inventory-items":
            if row.get("component_type") not in (None, "", "dcim.interface"):
                raise Refused({"component_type": ["Unsupported component type."]})
            component = row.get("component_id")
            if component is not None:
                interface = self.rows["dcim/interfaces"].get(component)
                if interface is None or interface["device"] != row["device"]:
                    raise Refused({"component_id": ["The component must belong to the item's device."]})

    def _validate_device(self, row: dict) -> None:
        rack = row.get("rack")
        if rack is not None and self.rows["dcim/racks"][rack]["site"] != row["site"]:
            raise Refused({"rack": [f"Rack {self.rows['dcim/racks'][rack]['name']} does not belong to the site."]})
        if row.get("position") is not None:
            if rack is None:
                raise Refused({"position": ["Cannot select a rack position without assigning a rack."]})
            if not row.get("face"):
                raise Refused({"face": ["Must specify rack face when defining rack position."]})
            if self.rows["dcim/device-types"][row["device_type"]]["u_height"] == 0:
                raise Refused({"position": ["A 0U device type cannot be assigned to a rack position."]})

    def _ids(self, terminations) -> list:
        if not isinstance(terminations, list):
            return []
        return [t.get("object_id") for t in terminations if isinstance(t, dict)]

    def _check_terminations(self, row: dict, side: str, terminations) -> None:
        if not isinstance(terminations, list) or not terminations:
            raise Refused({side: ["This field is required."]})
        for termination in terminations:
            if not isinstance(termination, dict) or termination.get("object_type") != "dcim.interface":
                raise Refused({side: ["Invalid termination type (this fake accepts dcim.interface)."]})
            interface = self.rows["dcim/interfaces"].get(termination.get("object_id"))
            if interface is None:
                raise Refused({side: [f"Interface {termination.get('object_id')} does not exist."]})
            if interface["type"] in VIRTUAL_TYPES:
                raise Refused({side: [f"Cables cannot be terminated to {interface['type']} interfaces"]})
            cable = self.cable_of.get(interface["id"])
            if cable is not None and cable != row["id"]:
                device = self.rows["dcim/devices"][interface["device"]]["name"]
                raise Refused({side: [f"Duplicate termination found for dcim.interface {interface['id']} "
                                      f"({device} {interface['name']}): already connected to cable {cable}"]})

    def _terminate(self, row: dict, data: dict) -> None:
        for side in TERMINATION_SIDES:
            row[side] = [{"object_type": t["object_type"], "object_id": t["object_id"]} for t in data[side]]
            for termination in row[side]:
                self.cable_of[termination["object_id"]] = row["id"]

    def _unterminate(self, row: dict) -> None:
        for side in TERMINATION_SIDES:
            for termination in row.get(side, []):
                if self.cable_of.get(termination["object_id"]) == row["id"]:
                    del self.cable_of[termination["object_id"]]

    # --- reads ---

    def site_of(self, endpoint: str, row: dict):
        if endpoint in ("dcim/interfaces", "dcim/inventory-items"):
            return self.rows["dcim/devices"][row["device"]]["site"]
        return None

    def matches(self, endpoint: str, row: dict, filters: dict[str, list[str]]) -> bool:
        spec = SPECS[endpoint]
        for parameter, wanted in filters.items():
            name = spec.filters.get(parameter)
            if name is None:
                continue  # NetBox ignores a filter it does not know
            if name in ("_site", "_device"):
                values = self._related_ids(endpoint, row, name)
            else:
                values = {row.get(name)}
            if not any(str(value) in wanted for value in values):
                return False
        return True

    def _related_ids(self, endpoint: str, row: dict, which: str) -> set:
        if endpoint == "dcim/cables":
            interfaces = self.rows["dcim/interfaces"]
            devices = {interfaces[t["object_id"]]["device"]
                       for side in TERMINATION_SIDES for t in row[side] if t["object_id"] in interfaces}
            if which == "_device":
                return devices
            return {self.rows["dcim/devices"][d]["site"] for d in devices}
        return {self.site_of(endpoint, row)}


# --- the representation ---------------------------------------------------------------------------------


class Renderer:
    def __init__(self, store: Store, base: str):
        self.store, self.base = store, base

    def url(self, endpoint: str, pk: int) -> str:
        return f"{self.base}/api/{endpoint}/{pk}/"

    def nested(self, endpoint: str, pk):
        if pk is None:
            return None
        row = self.store.rows[endpoint].get(pk)
        if row is None:
            return None
        shown = SPECS[endpoint].display
        out = {"id": pk, "url": self.url(endpoint, pk), "display": str(row.get(shown) or ""), shown: row.get(shown)}
        if "slug" in row:
            out["slug"] = row["slug"]
        if endpoint in ("dcim/interfaces",):
            out["device"] = self.nested("dcim/devices", row["device"])
            out["cable"] = self.store.cable_of.get(pk)
        return out

    def full(self, endpoint: str, row: dict) -> dict:
        spec = SPECS[endpoint]
        out = {"id": row["id"], "url": self.url(endpoint, row["id"]), "display": str(row.get(spec.display) or "")}
        for name, field_spec in spec.fields.items():
            value = row.get(name)
            if field_spec.kind == "fk":
                out[name] = self.nested(field_spec.to, value)
            elif field_spec.kind == "choice":
                out[name] = {"value": value, "label": str(value).replace("-", " ").title()} if value not in (None, "") \
                    else None
            else:
                out[name] = value
        if endpoint == "dcim/interfaces":
            cable = self.store.cable_of.get(row["id"])
            out["cable"] = None if cable is None else {
                "id": cable, "url": self.url("dcim/cables", cable), "display": f"#{cable}",
                "label": self.store.rows["dcim/cables"][cable]["label"],
            }
        if endpoint == "dcim/cables":
            for side in TERMINATION_SIDES:
                out[side] = [{**t, "object": self.nested("dcim/interfaces", t["object_id"])} for t in row[side]]
        if endpoint == "dcim/inventory-items":
            out["component"] = self.nested("dcim/interfaces", row.get("component_id"))
        return out


# --- the server -----------------------------------------------------------------------------------------


class FakeNetBox:
    """Start it (a context manager), point the push at `url`, read `store` and `requests` afterwards."""

    def __init__(self, *, token: str = TOKEN, read_only_token: str = "", version: str = "4.2",
                 bulk_errors: str = "list"):
        self.token, self.read_only_token, self.version, self.bulk_errors = token, read_only_token, version, bulk_errors
        self.store = Store()
        self.requests: list[tuple[str, str, int]] = []
        self.lock = threading.Lock()
        self._fail_next: list[tuple[str, int, object]] = []  # (method, status, body)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- life ---

    def __enter__(self) -> FakeNetBox:
        fake = self

        class Handler(_Handler):
            netbox = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # --- what tests use ---

    def fail_next(self, method: str, status: int, body) -> None:
        """The next request with this method answers `status` with `body` (JSON) instead."""
        self._fail_next.append((method.upper(), status, body))

    def objects(self, endpoint: str) -> list[dict]:
        """NetBox's objects of an endpoint ("dcim/interfaces") as the API shows them."""
        with self.lock:
            renderer = Renderer(self.store, self.url)
            return [renderer.full(endpoint, row) for row in self.store.rows[endpoint].values()]

    def add(self, endpoint: str, **data) -> int:
        """An object already in NetBox before the push (through the same rules as a POST)."""
        with self.lock:
            return self.store.create(endpoint, data)["id"]

    def writes(self) -> list[tuple[str, str, int]]:
        return [r for r in self.requests if r[0] in ("POST", "PATCH", "PUT", "DELETE")]

    def clear_log(self) -> None:
        self.requests.clear()


class _Handler(BaseHTTPRequestHandler):
    netbox: FakeNetBox
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are two writes: without this each answer waits 40 ms

    def log_message(self, format, *args):  # noqa: A002 - quiet: the tests read `requests`
        pass

    # --- plumbing ---

    def _answer(self, status: int, body, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("API-Version", self.netbox.version)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        return json.loads(raw)

    def _route(self):
        parts = urlsplit(self.path)
        path = parts.path
        if not path.startswith("/api/"):
            return None, None, parts
        rest = path[len("/api/"):].strip("/")
        match = re.fullmatch(r"(dcim/[a-z-]+)(?:/(\d+))?", rest)
        if not match:
            return rest, None, parts
        return match[1], (int(match[2]) if match[2] else None), parts

    def _authorised(self, write: bool) -> bool:
        header = self.headers.get("Authorization", "")
        if not header:
            self._answer(403, {"detail": "Authentication credentials were not provided."})
            return False
        scheme, _, key = header.partition(" ")
        if scheme != "Token" or key not in (self.netbox.token, self.netbox.read_only_token) or not key:
            self._answer(403, {"detail": "Invalid token"})
            return False
        if write and key != self.netbox.token:
            self._answer(403, {"detail": "You do not have permission to perform this action."})
            return False
        return True

    def _injected(self) -> bool:
        for i, (method, status, body) in enumerate(self.netbox._fail_next):
            if method == self.command:
                del self.netbox._fail_next[i]
                self._answer(status, body)
                return True
        return False

    def _handle(self, write: bool) -> None:
        endpoint, pk, parts = self._route()
        try:
            body = self._body() if write else None
        except ValueError as exc:
            self._answer(400, {"detail": f"JSON parse error - {exc}"})
            return
        count = len(body) if isinstance(body, list) else (1 if body is not None else 0)
        self.netbox.requests.append((self.command, parts.path, count))
        if not self._authorised(write):
            return
        if self._injected():
            return
        if endpoint is None:
            self._answer(404, {"detail": "Not found."})
            return
        if endpoint == "" and not write:
            apps = ("circuits", "dcim", "extras", "ipam")
            self._answer(200, {name: f"{self.netbox.url}/api/{name}/" for name in apps})
            return
        if endpoint == "status" and not write:
            self._answer(200, {"netbox-version": f"{self.netbox.version}.0", "django-version": "5.1"})
            return
        if endpoint not in SPECS:
            self._answer(404, {"detail": "Not found."})
            return
        with self.netbox.lock:
            getattr(self, f"_{self.command.lower()}")(endpoint, pk, parts, body)

    def do_GET(self):  # noqa: N802
        self._handle(write=False)

    def do_POST(self):  # noqa: N802
        self._handle(write=True)

    def do_PATCH(self):  # noqa: N802
        self._handle(write=True)

    # --- verbs ---

    def _renderer(self) -> Renderer:
        return Renderer(self.netbox.store, self.netbox.url)

    def _get(self, endpoint, pk, parts, body) -> None:
        store, renderer = self.netbox.store, self._renderer()
        if pk is not None:
            row = store.rows[endpoint].get(pk)
            if row is None:
                self._answer(404, {"detail": "No matching object found."})
            else:
                self._answer(200, renderer.full(endpoint, row))
            return
        query = parse_qs(parts.query, keep_blank_values=True)
        try:
            limit = int((query.pop("limit", [DEFAULT_PAGE]))[0] or DEFAULT_PAGE)
            offset = int((query.pop("offset", ["0"]))[0] or 0)
        except ValueError:
            self._answer(400, {"detail": "limit and offset must be whole numbers."})
            return
        limit = MAX_PAGE_SIZE if limit == 0 or limit > MAX_PAGE_SIZE else limit
        query.pop("brief", None)
        rows = [row for row in store.rows[endpoint].values() if store.matches(endpoint, row, query)]
        page = rows[offset:offset + limit]

        def link(at: int) -> str:
            return f"{self.netbox.url}{parts.path}?{urlencode({**query, 'limit': limit, 'offset': at}, doseq=True)}"

        self._answer(200, {
            "count": len(rows),
            "next": link(offset + limit) if offset + limit < len(rows) else None,
            "previous": link(max(offset - limit, 0)) if offset > 0 else None,
            "results": [renderer.full(endpoint, row) for row in page],
        })

    def _post(self, endpoint, pk, parts, body) -> None:
        if pk is not None:
            self._answer(405, {"detail": 'Method "POST" not allowed.'})
            return
        many = isinstance(body, list)
        items = body if many else [body]
        if not all(isinstance(item, dict) for item in items):
            self._answer(400, {"non_field_errors": ["Invalid data. Expected a dictionary, but got list."]})
            return
        store = self.netbox.store
        created, errors = [], []
        for item in items:
            try:
                created.append(store.create(endpoint, item))
                errors.append({})
            except Refused as exc:
                errors.append(exc.errors)
        if any(errors):
            for row in created:  # all or none, as NetBox's bulk create
                store.delete(endpoint, row["id"])
            self._refuse(errors, many)
            return
        renderer = self._renderer()
        shown = [renderer.full(endpoint, row) for row in created]
        self._answer(201, shown if many else shown[0])

    def _patch(self, endpoint, pk, parts, body) -> None:
        many = pk is None
        items = body if isinstance(body, list) else None
        if many and items is None:
            self._answer(400, {"non_field_errors": ["Expected a list of objects to update."]})
            return
        if not many:
            items = [{**(body or {}), "id": pk}]
        store = self.netbox.store
        before = {}
        updated, errors = [], []
        for item in items:
            key = item.get("id") if isinstance(item, dict) else None
            if isinstance(key, int) and key in store.rows[endpoint] and key not in before:
                before[key] = copy.deepcopy(store.rows[endpoint][key])
            try:
                updated.append(store.update(endpoint, key, {k: v for k, v in item.items() if k != "id"}))
                errors.append({})
            except Refused as exc:
                errors.append(exc.errors)
        if any(errors):
            for key, row in before.items():  # all or none
                store.delete(endpoint, key)
                store.rows[endpoint][key] = row
                store._index(endpoint, row, add=True)
                if endpoint == "dcim/cables":
                    store._terminate(row, row)
            self._refuse(errors, many)
            return
        renderer = self._renderer()
        shown = [renderer.full(endpoint, row) for row in updated]
        self._answer(200, shown if many else shown[0])

    def _refuse(self, errors: list[dict], many: bool) -> None:
        if not many:
            self._answer(400, errors[0])
        elif self.netbox.bulk_errors == "indexed":
            self._answer(400, {"detail": "Bulk operation failed.",
                               "errors": [{"index": i, "errors": e} for i, e in enumerate(errors) if e]})
        else:
            self._answer(400, errors)
