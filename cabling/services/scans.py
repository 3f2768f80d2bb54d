"""Every scan on the floor goes through `scan_record`: the floor page, its offline queue replayed, a
script and a scanner app (through POST /api/scans/), and the demo's simulated technician.

One call checks the input, resolves the code (cabling.search.resolve_code), does what the action asks,
and writes exactly one ScanEvent, kept forever, with the result and the reason in the technician's words:

- lookup: what is this code? Found, or refused naming what was read.
- rack: the code is a device's serial, asset tag or name; the device becomes racked at the rack and U
  confirmed (default: its planned place), through inventory's device_rack and its rack-space rules.
- optic: the code is an optic's serial; it is seated in the port the technician names, if the optic is
  healthy and free, the port empty, and its part the one the cable's plan calls for at that end.
- cable_end: the code is an end code (`C00417/A`, `C00417/B2`) or a bare label (`C00417`, printed before
  end codes: the end is the one planned on the port confirmed). The port must be that end's planned port
  (or the cage holding that lane): the end is confirmed; once every end is, the cable is verified and its
  ports connected. Anywhere else, nothing is recorded as verified and the reason says where it belongs.

Results: accepted (done), found (a lookup), refused (nothing changed; the reason says why and what to
do), conflict (someone else did it first: the reason names who and when). Bad input (unknown action, a
malformed idempotency key, a code no label could hold) is a ValidationError, never an event.

Concurrency: the rows acted on are locked (the cable with its ends, the device, the optic) and the
database's constraints have the last word (one cable per port, one optic per port, one device per U),
so two technicians at the same moment get one accepted and one conflict. A scan sent again with the
same idempotency key (a tablet replaying its offline queue, perhaps three times at once) is recorded
once: the unique (project, idempotency_key) decides, and the losers get the winner's event back.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from core.rows import Writes
from inventory.choices import OpticStatus, PortStatus
from inventory.models import Device, Optic, Port, Rack
from inventory.services import CONFLICT, device_rack, moment, optic_install, person
from projects.evidence import evidence_changed_send
from projects.models import Project

from ..choices import CableStatus, ScanAction, ScanResult, ScanSource, Side
from ..codes import CodeError, ParsedCode, parse_code
from ..models import Cable, CableEnd, ScanEvent
from ..search import Match, port_by_label, resolve_code
from .cable_ends import end_code, locked_ends
from .evidence import CONNECTED_FROM, PORT_KEPT, cause_text

KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{8,64}$")
MAX_POSITION_U = 60  # the tallest rack a project may have (inventory.Rack.height_u)
MAX_NAME = 100  # a rack name or a port code longer than this is not one
REASON_MATCHES = 3  # matches named in a reason before "and n more"
STALE_CONFIRMATIONS = frozenset({CableStatus.PLANNED, CableStatus.FAULTY})
EVENT_RELATIONS = ["project", "user", "device", "optic", "port", "cable", "cable_end"]


@dataclass(frozen=True)
class ScanOutcome:
    """What scan_record did: the event (new, or the one recorded before under the same key)."""

    event: ScanEvent
    replayed: bool


@dataclass
class _Verdict:
    result: str
    reason: str
    targets: dict[str, Any] = field(default_factory=dict)  # device, optic, port, cable, cable_end


@dataclass
class _Scan:
    """One checked request."""

    user: Any
    project: Project
    action: str
    raw: str
    parsed: ParsedCode
    key: str
    scanned_at: datetime | None
    source: str
    rack: str
    position_u: int | None
    port_id: int | None
    port_code: str
    end_id: int | None
    cable: Cable | None
    matches: list[Match] = field(default_factory=list)
    # What the scan writes besides its event, sent with the event in one statement (core.rows.Writes): the
    # rows are locked and read before anything is queued, and nothing reads them again within the scan.
    writes: Writes = field(default_factory=Writes)

    @property
    def text(self) -> str:
        return self.parsed.text

    def context(self) -> dict:
        given = {"rack": self.rack, "position_u": self.position_u, "port": self.port_id,
                 "port_code": self.port_code, "end": self.end_id}
        return {
            **{name: value for name, value in given.items() if value not in (None, "")},
            "matches": [
                {"kind": m.kind, "id": m.obj.pk, "label": m.label, "url": m.url(self.project), "how": m.how}
                for m in self.matches
            ],
        }


def _refused(reason: str, **targets) -> _Verdict:
    return _Verdict(ScanResult.REFUSED, reason, targets)


def _accepted(reason: str, **targets) -> _Verdict:
    return _Verdict(ScanResult.ACCEPTED, reason, targets)


def _from_error(exc: ValidationError, **targets) -> _Verdict:
    """A service's refusal as a verdict: a conflict when someone else was first, else refused."""
    errors = [e for group in exc.error_dict.values() for e in group] if hasattr(exc, "error_dict") else exc.error_list
    codes = {getattr(error, "code", None) for error in errors}
    result = ScanResult.CONFLICT if CONFLICT in codes else ScanResult.REFUSED
    return _Verdict(result, " ".join(exc.messages), targets)


# --- the one entry point ------------------------------------------------------------------------------


def scan_record(
    *,
    user,
    project: Project,
    action: str,
    code: str,
    idempotency_key: str = "",
    scanned_at: datetime | None = None,
    source: str = ScanSource.API,
    rack: str | None = None,
    position_u: int | None = None,
    port: int | Port | None = None,
    port_code: str | None = None,
    end: int | CableEnd | None = None,
    cable: Cable | None = None,
) -> ScanOutcome:
    """Record one scan by `user` in `project` (who must be a member who may edit the inventory: the
    caller checks) and do what `action` asks (module docstring). `cable` limits a cable_end scan to that
    cable (POST /api/cables/<id>/scan/). Returns the event and whether it was recorded before (same key).

    Atomic inside rather than as a decorator: a replay that loses the race on its key must roll its own
    work back and then still read the winner's event."""
    scan = _checked(
        user=user, project=project, action=action, code=code, key=idempotency_key, scanned_at=scanned_at,
        source=source, rack=rack, position_u=position_u, port=port, port_code=port_code, end=end, cable=cable,
    )
    # The key is not looked up first: nearly every scan is new, and would pay a query for the rare replay.
    # A replay does its work again inside the transaction; inserting its event collides with the key, which
    # rolls all of it back, and the event recorded first is the answer.
    try:
        with transaction.atomic():
            return ScanOutcome(_perform(scan), replayed=False)
    except (IntegrityError, ValidationError):
        # The same key recorded already (by a replay racing this one, or long ago): its event is the answer.
        earlier = _earlier(scan)
        if earlier is None:
            raise
        return ScanOutcome(earlier, replayed=True)


def _earlier(scan: _Scan) -> ScanEvent | None:
    if not scan.key:
        return None
    return ScanEvent.objects.filter(project=scan.project, idempotency_key=scan.key).first()


def _checked(*, user, project, action, code, key, scanned_at, source, rack, position_u, port, port_code, end,
             cable) -> _Scan:
    """The request, checked before anything is read: every field at fault under its name."""
    errors: dict[str, str] = {}
    if action not in ScanAction.values:
        errors["action"] = f"Unknown action {str(action)[:40]!r}: choose one of {', '.join(ScanAction.values)}."
    parsed = None
    try:
        parsed = parse_code(code)
    except CodeError as exc:
        errors["code"] = str(exc)
    key = key or ""
    if not isinstance(key, str) or (key and not KEY_PATTERN.match(key)):
        errors["idempotency_key"] = "8 to 64 letters, digits, '-' or '_', chosen once per scan."
    if source not in ScanSource.values:
        errors["source"] = f"Unknown source: choose one of {', '.join(ScanSource.values)}."
    if scanned_at is not None and (not isinstance(scanned_at, datetime) or timezone.is_naive(scanned_at)):
        errors["scanned_at"] = "A date and time with its time zone (ISO 8601)."
    if position_u is not None and not (_is_int(position_u) and 1 <= position_u <= MAX_POSITION_U):
        errors["position_u"] = f"A rack unit from 1 to {MAX_POSITION_U}."
    rack, port_code = rack or "", port_code or ""
    for name, text, wanted in (("rack", rack, "A rack name."), ("port_code", port_code, "A port's code, e.g. "
                                                                                           "ib-leaf-03:p17.")):
        if not isinstance(text, str) or len(text) > MAX_NAME or "\x00" in text:
            errors[name] = wanted
    port_id = port.pk if isinstance(port, Port) else port
    end_id = end.pk if isinstance(end, CableEnd) else end
    for name, value, wanted in (("port", port_id, "A port id."), ("end", end_id, "A cable end id.")):
        if value is not None and not _is_int(value):
            errors[name] = wanted
    if action in (ScanAction.OPTIC, ScanAction.CABLE_END) and port_id is None and not port_code:
        errors["port"] = "Say which port you are at: scan its label (port_code) or pick it (port)."
    if errors:
        raise ValidationError(errors)
    return _Scan(user=user, project=project, action=action, raw=code, parsed=parsed, key=key, scanned_at=scanned_at,
                 source=source, rack=rack.strip(), position_u=position_u, port_id=port_id,
                 port_code=port_code.strip(), end_id=end_id, cable=cable)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _perform(scan: _Scan) -> ScanEvent:
    # A cable-end scan locks the cable its end code names as it resolves it (its ends are read under the lock).
    scan.matches = resolve_code(user=scan.user, project=scan.project, code=scan.parsed,
                                lock_cable=scan.action == ScanAction.CABLE_END)
    handler = {
        ScanAction.LOOKUP: _lookup, ScanAction.RACK: _rack, ScanAction.OPTIC: _optic,
        ScanAction.CABLE_END: _cable_end,
    }[scan.action]
    verdict = handler(scan)
    event = ScanEvent(
        project=scan.project, user=scan.user, scanned_at=scan.scanned_at, idempotency_key=scan.key,
        source=scan.source, action=scan.action, raw_code=scan.raw.replace("\x00", ""), result=verdict.result,
        reason=verdict.reason, context=scan.context(), **verdict.targets,
    )
    # The relations are rows just read (checking that they exist would cost a query each); the key's
    # uniqueness is the database's to decide.
    event.full_clean(exclude=EVENT_RELATIONS, validate_unique=False, validate_constraints=False)
    # event.save()'s INSERT, written out (the event has no history nor receivers), sent with the end's and the
    # cable's updates queued by the action: one statement on PostgreSQL. A replayed key fails it whole.
    scan.writes.insert(event)
    scan.writes.send()
    if verdict.result == ScanResult.ACCEPTED and scan.action in (ScanAction.RACK, ScanAction.CABLE_END):
        evidence_changed_send(project_id=scan.project.pk, what="scan")  # racking and cabling gates read it
    return event


# --- words ----------------------------------------------------------------------------------------------


KIND_WORDS = {"cable_end": "a cable end", "cable": "a cable label", "port": "a port", "device": "a device",
              "optic": "an optic"}
NOUNS = {"cable_end": "cable end", "cable": "cable", "port": "port", "device": "device", "optic": "optic"}


def _at(port: Port) -> str:
    """'ib-leaf-03 port p17' (the port's device must be loaded)."""
    return f"{port.device.name} port {port.name}"


def _matched_as(scan: _Scan) -> str:
    """What the code turned out to be, for a refusal: 'C00417 is a cable label (C00417)'."""
    first = scan.matches[0]
    return f"{scan.text} is {KIND_WORDS[first.kind]} ({first.label})"


def _unknown(scan: _Scan, wanted: str) -> str:
    if scan.matches:
        return f"{_matched_as(scan)}, not {wanted}."
    return f"Unknown code {scan.text!r}: it is not {wanted} in this project."


def _names(things: list[str]) -> str:
    shown = things[:REASON_MATCHES]
    more = len(things) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more else "")


# --- lookup ---------------------------------------------------------------------------------------------


def _targets_of(match: Match) -> dict[str, Any]:
    obj = match.obj
    if match.kind == "cable_end":
        return {"cable_end": obj, "cable": obj.cable, "port": obj.port}  # the resolver loaded both
    if match.kind == "port":
        return {"port": obj, "device_id": obj.device_id}
    return {match.kind: obj}


def _lookup(scan: _Scan) -> _Verdict:
    if not scan.matches:
        return _refused(f"Unknown code {scan.text!r}: nothing in this project has it.")
    first = scan.matches[0]
    reason = f"{scan.text} is {NOUNS[first.kind]} {first.label} (by its {first.how})."
    if len(scan.matches) > 1:
        others = [f"{NOUNS[m.kind]} {m.label}" for m in scan.matches[1:]]
        reason += f" It also matches {_names(others)}."
    return _Verdict(ScanResult.FOUND, reason, _targets_of(first))


# --- rack -----------------------------------------------------------------------------------------------

DEVICE_MATCH_ORDER = ("serial", "asset tag", "name", "node GUID")


def _rank(match: Match) -> int:
    return DEVICE_MATCH_ORDER.index(match.how) if match.how in DEVICE_MATCH_ORDER else len(DEVICE_MATCH_ORDER)


def _rack(scan: _Scan) -> _Verdict:
    devices = [m for m in scan.matches if m.kind == "device"]
    if not devices:
        return _refused(_unknown(scan, "a device's serial or asset tag"))
    best = min(_rank(m) for m in devices)  # a serial says more than a name that happens to match it
    devices = [m for m in devices if _rank(m) == best]
    if len(devices) > 1:
        names = [m.label for m in devices]
        return _refused(f"{scan.text} matches {len(devices)} devices ({_names(names)}): scan its serial instead.")
    device: Device = devices[0].obj
    if scan.rack:
        rack = Rack.objects.filter(project=scan.project, name__iexact=scan.rack).first()
        if rack is None:
            return _refused(f"No rack {scan.rack} in this project.", device=device)
    elif device.rack_id is not None:
        rack = Rack.objects.get(pk=device.rack_id)
    else:
        return _refused(f"{device.name} has no planned place: say which rack and U it is in.", device=device)
    position_u = scan.position_u or (device.position_u if rack.pk == device.rack_id else None)
    if position_u is None:
        return _refused(f"Say at which U of {rack.name} {device.name} stands.", device=device)
    planned = (device.rack_id, device.position_u)
    started = timezone.now()
    try:
        with transaction.atomic():  # a refusal after a partial write leaves nothing behind
            racked = device_rack(device=device, rack=rack, position_u=position_u, user=scan.user, at=started)
    except ValidationError as exc:
        return _from_error(exc, device=device)
    if racked.racked_at != started:  # confirmed by this same person before
        return _accepted(f"{racked.name} was already racked in {rack.name} U{position_u} by you; nothing changed.",
                         device=racked)
    reason = f"{racked.name} racked in {rack.name} U{position_u}."
    if planned[0] is not None and planned != (rack.pk, position_u):
        old = Rack.objects.filter(pk=planned[0]).values_list("name", flat=True).first()
        reason += f" Its planned place was {old} U{planned[1]}: the inventory now has it here."
    return _accepted(reason, device=racked)


# --- optic ----------------------------------------------------------------------------------------------


def _where(scan: _Scan) -> tuple[Port | None, str]:
    """The port the technician says they are at, and a refusal when the scanned port code is not one
    port of the project. An unknown port id is bad input (a ValidationError), not a scan."""
    if scan.port_id is not None:
        ports = Port.objects.select_related("device").filter(device__project=scan.project)
        try:
            return ports.get(pk=scan.port_id), ""
        except Port.DoesNotExist:
            raise ValidationError({"port": f"No port {scan.port_id} in this project."}) from None
    try:
        parsed = parse_code(scan.port_code)
    except CodeError as exc:
        raise ValidationError({"port_code": str(exc)}) from exc
    if parsed.port:
        # A port label as we print it (`ib-leaf-03:p17`): the unique (device, name) indexes find it in one
        # step; anything else (other case, an end tag, a GUID or MAC) goes through the one resolver.
        exact = port_by_label(project=scan.project, device=parsed.port[0], port=parsed.port[1])
        if exact is not None:
            return exact, ""
    matches = resolve_code(user=scan.user, project=scan.project, code=parsed)
    found = [m.obj for m in matches if m.kind == "port"]
    if len(found) == 1:
        return found[0], ""  # with its device, like every port the resolver finds
    if found:
        return None, f"{scan.port_code} matches {len(found)} ports: scan the port's own label."
    if matches:
        first = matches[0]
        return None, f"{scan.port_code} is {KIND_WORDS[first.kind]} ({first.label}), not a port: scan the port's label."
    return None, f"{scan.port_code} is not a port of this project: scan the port's label (device:port)."


def _optic(scan: _Scan) -> _Verdict:
    optics = [m.obj for m in scan.matches if m.kind == "optic"]
    if not optics:
        return _refused(_unknown(scan, "an optic's serial"))
    where, refusal = _where(scan)
    if where is None:
        return _refused(refusal, optic=optics[0])
    # An optic sits in the physical port (the cage), which its lanes share.
    cage = Port.objects.select_related("device").get(pk=where.parent_id) if where.parent_id else where
    optic = Optic.objects.select_for_update(of=("self",)).select_related("port__device").get(pk=optics[0].pk)
    targets = {"optic": optic, "port": cage}
    if optic.status in (OpticStatus.FAULTY, OpticStatus.RMA):
        word = "marked faulty" if optic.status == OpticStatus.FAULTY else "in RMA"
        return _refused(f"Optic {optic.serial} is {word}: put it aside and take another.", **targets)
    if optic.port_id is not None and optic.port_id != cage.pk:
        return _refused(f"Optic {optic.serial} is already in {_at(optic.port)}; take it out there first.", **targets)
    holder = Optic.objects.filter(port=cage).exclude(pk=optic.pk).first()
    if holder is not None:
        return _refused(f"{_at(cage)} already holds optic {holder.serial}; take it out first.", **targets)
    wanted = _parts_wanted(cage)
    wrong = [(label, part) for label, part in wanted if part and part.lower() != optic.part_number.lower()]
    if wrong:
        label, part = wrong[0]
        return _refused(f"{label} calls for {part} at {_at(cage)}; optic {optic.serial} is {optic.part_number}.",
                        **targets)
    if optic.port_id == cage.pk:
        by = "you" if optic.installed_by_id == getattr(scan.user, "pk", None) else person(optic.installed_by)
        if by != "you" and optic.installed_by_id is not None:
            return _Verdict(ScanResult.CONFLICT, f"Optic {optic.serial} was already seated in {_at(cage)} by {by} at "
                            f"{moment(optic.installed_at)}.", targets)
        return _accepted(f"Optic {optic.serial} is already seated in {_at(cage)}; nothing changed.", **targets)
    try:
        with transaction.atomic():
            optic_install(optic=optic, port=cage, user=scan.user)
    except ValidationError as exc:
        return _from_error(exc, **targets)
    return _accepted(f"Optic {optic.serial} seated in {_at(cage)}.", **targets)


def _parts_wanted(cage: Port) -> list[tuple[str, str]]:
    """(cable end code, transceiver part) the plan calls for at the cage: the ends on the port and on its
    lanes (one query)."""
    ends = CableEnd.objects.filter(Q(port=cage) | Q(port__parent=cage)).select_related("cable")
    found = []
    for end in ends:
        part = end.cable.optic_part_a if end.side == Side.A else end.cable.optic_part_b
        found.append((end.cable.label, part))
    return found


# --- cable end ------------------------------------------------------------------------------------------


def _is_at(end: CableEnd, where: Port) -> bool:
    """The end's planned port is where the technician is, or one is the cage of the other (an end on a
    lane is plugged into its physical port)."""
    return where.pk in (end.port_id, end.port.parent_id) or where.parent_id == end.port_id


def _cable_end(scan: _Scan) -> _Verdict:
    named = next((m.obj for m in scan.matches if m.kind == "cable_end"), None)
    cable = named.cable if named else next((m.obj for m in scan.matches if m.kind == "cable"), None)
    if cable is None:
        return _refused(_unknown(scan, "a cable label"))
    if scan.cable is not None and cable.pk != scan.cable.pk:
        return _refused(f"{scan.text} is the label of {cable.label}, not of {scan.cable.label}.", cable=cable)
    where, refusal = _where(scan)
    if where is None:
        return _refused(refusal, cable=cable, cable_end=named)
    ends = locked_ends(cable.pk, locked=cable if named is not None else None)
    if not ends:
        return _refused(f"{cable.label} has no ends in the plan.", cable=cable, port=where)
    cable = ends[0].cable
    cable.end_list = ends  # what the answer shows, as it stands after this scan

    def code_of(e: CableEnd) -> str:
        return end_code(e, ends)

    if named is not None:
        end = next((e for e in ends if e.pk == named.pk), None)
        if end is None:  # the end went away between reading the code and locking the cable (a plan re-applied)
            return _refused(f"{scan.text} is no longer an end of {cable.label}; scan the label again.", cable=cable)
    elif scan.end_id is not None:
        end = next((e for e in ends if e.pk == scan.end_id), None)
        if end is None:
            raise ValidationError({"end": f"End {scan.end_id} is not an end of {cable.label}."})
    else:
        side = scan.parsed.cable_end.side if scan.parsed.cable_end else None
        here = [e for e in ends if _is_at(e, where) and side in (None, e.side)]
        if not here:
            a_ends = [_at(e.port) for e in ends if e.side == Side.A]
            b_list = [_at(e.port) for e in ends if e.side == Side.B]
            return _refused(f"{cable.label} goes from {' and '.join(a_ends)} to {' and '.join(b_list)}; "
                            f"you are at {_at(where)}.", cable=cable, port=where)
        end = next((e for e in here if e.confirmed_at is None), here[0])
    ref = code_of(end) if named is not None else cable.label
    targets = {"cable": cable, "cable_end": end, "port": where}
    if not _is_at(end, where):
        return _refused(f"{ref} belongs in {_at(end.port)}; you are at {_at(where)}.", **targets)
    # A confirmation stands while the cable is on the floor as scanned (installed, verified). A cable since
    # found faulty, or set back to planned, is scanned again after the fix: its old confirmations give way.
    if end.confirmed_at is not None and cable.status not in STALE_CONFIRMATIONS:
        if end.confirmed_by_id != getattr(scan.user, "pk", None):
            return _Verdict(ScanResult.CONFLICT, f"{ref} was already confirmed in {_at(end.port)} by "
                            f"{person(end.confirmed_by)} at {moment(end.confirmed_at)}.", targets)
        return _accepted(f"{ref} was already confirmed in {_at(end.port)} by you; nothing changed."
                         + _next_step(cable, ends, code_of), **targets)
    if _end_confirm(scan, cable, end, ends, code=code_of(end)):
        return _accepted(f"{code_of(end)} confirmed in {_at(end.port)}: {cable.label} is verified, every end "
                         "where the plan says.", **targets)
    return _accepted(f"{code_of(end)} confirmed in {_at(end.port)}." + _next_step(cable, ends, code_of), **targets)


def _confirmations_clear(scan: _Scan, ends: list[CableEnd], *, at: datetime) -> None:
    for stale in ends:
        stale.confirmed_at, stale.confirmed_by = None, None
        scan.writes.tracked_update(stale, ["confirmed_at", "confirmed_by"], user=scan.user, at=at)


def ends_to_confirm(cable: Cable, ends: list[CableEnd]) -> list[CableEnd]:
    """The ends a scan has still to confirm, in the order the floor walks them (the A end, then B, or B1,
    B2, ... of a breakout): every end of a cable found faulty or set back to planned (its old confirmations
    give way at its next scan), else the ends not confirmed yet."""
    ordered = sorted(ends, key=lambda e: (e.side, e.position))
    if cable.status in STALE_CONFIRMATIONS:
        return ordered
    return [e for e in ordered if e.confirmed_at is None]


def end_expected(cable: Cable, ends: list[CableEnd], *, named_id: int | None = None) -> CableEnd | None:
    """The end the floor asks for next: the end a scan was about (an end code looked up, an end refused at
    the wrong port), while it is still to confirm; else the first end still to confirm; None when none is."""
    left = ends_to_confirm(cable, ends)
    return next((e for e in left if e.pk == named_id), left[0] if left else None)


@dataclass(frozen=True)
class Verification:
    """Who verified a cable and when, as the floor says it."""

    how: str  # "fabric": its link seen ok by a topology comparison; "scan": every end confirmed by scan
    at: datetime | None
    by: Any = None  # the user who confirmed the last end (scan)
    by_name: str | None = None  # their name as the floor shows it (inventory.services.person)


def cable_verification(cable: Cable) -> Verification | None:
    """Who verified the cable and when; None while it is not verified. The fabric's word when it is what
    verified it (fabric_verified_at is cleared when a scan verifies it), else the scan of its last end."""
    if cable.status != CableStatus.VERIFIED:
        return None
    if cable.fabric_verified_at is not None:
        return Verification(how="fabric", at=cable.fabric_verified_at)
    by = cable.verified_by if cable.verified_by_id else None
    return Verification(how="scan", at=cable.verified_at, by=by, by_name=person(by) if by else None)


def _next_step(cable: Cable, ends: list[CableEnd], code_of) -> str:
    left = ends_to_confirm(cable, ends)
    if not left:
        return f" {cable.label} is verified."
    shown = [f"{code_of(e)} at {_at(e.port)}" for e in left]
    return f" Next: {_names(shown)}."


def _end_confirm(scan: _Scan, cable: Cable, end: CableEnd, ends: list[CableEnd], *, code: str) -> bool:
    """Confirm the end (who, when) and move the cable: verified once every end is confirmed (its ports
    connected), else installed if it was only planned. Each write has its history row and cause. True
    when this scan verified the cable."""
    now, user = timezone.now(), scan.user
    who = person(user)
    # Found faulty or set back to planned: the other ends' old confirmations give way.
    stale = [e for e in ends if e.pk != end.pk and e.confirmed_at is not None] \
        if cable.status in STALE_CONFIRMATIONS else []
    _confirmations_clear(scan, stale, at=now)
    end.confirmed_at, end.confirmed_by = now, user
    # Written out with their history rows (core.rows), sent with the event: save() would compile the same
    # statements and send them one by one.
    scan.writes.tracked_update(end, ["confirmed_at", "confirmed_by"], user=user, at=now)
    fields = None
    if all(e.confirmed_at for e in ends):
        cable.status, cable.verified_at, cable.verified_by = CableStatus.VERIFIED, now, user
        cable.fabric_verified_at = None  # scan-verified now: verified_at dates it, not the fabric's word
        cable.status_cause = f"Verified by scan: {code} confirmed in {_at(end.port)} by {who}."
        fields = ["status", "verified_at", "verified_by", "status_cause", "fabric_verified_at"]
    elif cable.status in STALE_CONFIRMATIONS:  # installed (again): the next scans confirm the other ends
        again = f" again (was {cable.status})" if stale or cable.status == CableStatus.FAULTY else ""
        cable.status = CableStatus.INSTALLED
        cable.status_cause = f"Installed{again}: {code} confirmed by scan in {_at(end.port)} by {who}."
        fields = ["status", "status_cause"]
    if fields is None:
        return False
    scan.writes.tracked_update(cable, fields, user=user, at=now)
    if cable.status != CableStatus.VERIFIED:
        return False
    _ports_connect(scan, [e.port for e in ends], cause=cable.status_cause, at=now)
    return True


def _ports_connect(scan: _Scan, ports: list[Port], *, cause: str, at: datetime) -> None:
    """What evidence.ports_move(to=CONNECTED, only_from=CONNECTED_FROM) does to the ports of a cable just
    verified, queued with the scan's other writes: the ports nothing was known about become connected (the
    loaded rows too, for the answer), each with its history row; the UPDATE repeats the condition, so a port
    another writer moved since it was read stays as it is now."""
    to, cause = PortStatus.CONNECTED, cause_text(cause)
    moving = [port for port in ports
              if port.status != to and port.status not in PORT_KEPT and port.status in CONNECTED_FROM]
    for port in moving:
        port.status, port.status_cause = to, cause
    scan.writes.rows_update(Port, [port.pk for port in moving], {"status": to, "status_cause": cause},
                            only_if={"status": sorted(CONNECTED_FROM - PORT_KEPT)}, user=scan.user, at=at,
                            reason=cause)
