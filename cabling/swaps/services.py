"""Swaps and RMA: a part replaced on the floor, recorded once with the serial out and the serial in.

- `optic_swap`: the optic in a port is replaced. The old one leaves the port (into RMA when an RMA case or
  state comes with the swap, else faulty), the new one (an in-stock optic of the project found by its
  serial, or a new row made like the old one: same vendor, part, form factor and speed) is seated in the
  same port, through inventory's optic services.
- `cable_swap`: a cable is replaced between the same ports: its serial changes from the old to the new.
- Either way the cable in that place goes back through verification: its end confirmations are cleared,
  a cable on the floor goes back to installed (never verified), its verification and fabric state are
  cleared, and its connected ports back to planned, so a scan of every end (or the fabric) verifies it
  again. The swap sends `evidence_changed`: the gates follow, and the punch list's sync
  (delivery.punch.services) marks the items on the replaced part fixed, naming the swap.
- `swap_rma_update`: the RMA case moves on later (authorised, shipped, replaced, credited...).

Technicians and managers record swaps (EDIT_INVENTORY); customers never. Each service runs in one
transaction and locks the rows it changes in id order (optics first, then cables), so two people swapping
at the same moment take turns, and the database's one-optic-per-port constraint has the last word.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from cabling.choices import (
    CLOSED_RMA_STATES,
    PHYSICAL_CABLE_STATUSES,
    RMA_STATES_NEEDING_CASE,
    CableStatus,
    RmaState,
    SwapKind,
)
from cabling.models import Cable, CableEnd, Swap
from cabling.services.evidence import cause_text, ports_move
from inventory.choices import OpticStatus, PortStatus
from inventory.models import Optic, Port
from inventory.services import optic_install, optic_remove, optic_save, person
from projects.access import Capability, can
from projects.evidence import evidence_changed_send

SERIAL_LENGTH = Swap._meta.get_field("new_serial").max_length
CASE_LENGTH = Swap._meta.get_field("rma_case").max_length
REASON_LENGTH = 2000
NOT_ALLOWED = "Only the project's technicians and managers record swaps."


# --- input ---------------------------------------------------------------------------------------------


def _text(value, *, field: str, limit: int, required: str = "") -> str:
    """A field's text with its whitespace tidied; a ValidationError under `field` when it is missing, too
    long or holds control characters (a serial is printed on a label, not typed with tabs)."""
    if value is None:
        value = ""
    if not isinstance(value, str):
        raise ValidationError({field: "Expected text."})
    text = " ".join(value.split()) if field != "reason" else value.strip()
    if required and not text:
        raise ValidationError({field: required})
    if len(text) > limit:
        raise ValidationError({field: f"At most {limit} characters."})
    if any(ord(ch) < 32 and ch not in "\n\r\t" for ch in text) or "\x7f" in text:
        raise ValidationError({field: "Remove the control characters."})
    return text


def _rma(rma_case, rma_state) -> tuple[str, str]:
    case = _text(rma_case, field="rma_case", limit=CASE_LENGTH)
    state = rma_state or RmaState.NONE
    if state not in RmaState.values:
        raise ValidationError({"rma_state": f"One of: {', '.join(RmaState.values)}."})
    if case and state == RmaState.NONE:
        raise ValidationError({"rma_state": "An RMA case is given: say where it stands (opened, to ship, ...)."})
    if state in RMA_STATES_NEEDING_CASE and not case:
        raise ValidationError({"rma_case": f"“{RmaState(state).label}” needs the vendor's RMA number."})
    return case, state


def _refuse_rma_move(before: str, after: str) -> None:
    """An RMA only moves forward (RmaState's order) and stops where the vendor had its last word; a case
    number may be added or corrected at any step."""
    order = list(RmaState.values)
    if before == after:
        return
    if before in CLOSED_RMA_STATES:
        raise ValidationError({"rma_state": f"The RMA is closed ({RmaState(before).label.lower()}): record a new "
                                            "swap for a new return."})
    if before != RmaState.NONE and order.index(after) < order.index(before):
        raise ValidationError({"rma_state": f"An RMA moves forward: it is at “{RmaState(before).label}”, it cannot "
                                            f"go back to “{RmaState(after).label}”."})


def _allowed(user, project_id: int) -> None:
    if not can(user, Capability.EDIT_INVENTORY, project_id):
        raise PermissionDenied(NOT_ALLOWED)


def _record(swap: Swap, *, user, why: str) -> Swap:
    swap._history_user, swap._change_reason = user, cause_text(why)[:100]
    swap.full_clean(exclude=["project", "optic", "new_optic", "port", "cable", "recorded_by"])
    swap.save()
    return swap


# --- back through verification -------------------------------------------------------------------------


def _back_to_verification(cables: list[Cable], *, cause: str, user, at) -> None:
    """Send locked cables back through verification (module docstring): each gets one history row with
    `cause`; their confirmed ends are cleared (a history row each) and their connected ports go back to
    planned. A planned cable stays planned: it was never on the floor as planned."""
    if not cables:
        return
    ids = [cable.pk for cable in cables]
    ends = list(CableEnd.objects.filter(cable_id__in=ids).select_related("port").order_by("pk"))
    for end in ends:
        if end.confirmed_at is None:
            continue
        end.confirmed_at, end.confirmed_by = None, None
        end._history_user, end._change_reason = user, cause[:100]
        end.save(update_fields=["confirmed_at", "confirmed_by"])
    for cable in cables:
        if cable.status in PHYSICAL_CABLE_STATUSES:
            cable.status = CableStatus.INSTALLED
        cable.status_cause = cause
        cable.verified_at = cable.verified_by = cable.fabric_verified_at = None
        cable.fabric_state, cable.fabric_checked_at = "", None
        cable._history_user, cable._change_reason = user, cause[:100]
        cable.save(update_fields=["serial", "status", "status_cause", "verified_at", "verified_by", "fabric_state",
                                  "fabric_checked_at", "fabric_verified_at"])
    ports_move(port_ids=(), ports=[end.port for end in ends], to=PortStatus.PLANNED, cause=cause, user=user, at=at,
               only_from=frozenset({PortStatus.CONNECTED}))


def _cables_in(cage: Port) -> list[Cable]:
    """The cables plugged into a cage (on the port itself or on its lanes), locked, in id order."""
    ids = CableEnd.objects.filter(Q(port=cage) | Q(port__parent=cage)).values("cable_id")
    return list(Cable.objects.select_for_update().filter(pk__in=ids).order_by("pk"))


# --- optic swap ----------------------------------------------------------------------------------------


def _locked_optics(old: Optic, serial: str) -> tuple[Optic, Optic | None]:
    """The old optic and the project's optic with `serial` (exact case first), locked together in id
    order: two swaps crossing each other's optics never wait on each other in a circle."""
    rows = list(Optic.objects.select_for_update(of=("self",))
                .filter(Q(pk=old.pk) | Q(project_id=old.project_id, serial__iexact=serial)).order_by("pk"))
    locked = next((row for row in rows if row.pk == old.pk), None)
    if locked is None:  # taken out of the inventory since the page was read
        raise ValidationError({"optic": f"Optic {old.serial} is no longer in the inventory."})
    others = [row for row in rows if row.pk != old.pk]
    new = next((row for row in others if row.serial == serial), others[0] if others else None)
    return locked, new


def _at(port: Port) -> str:
    return f"{port.device.name} port {port.name}"


def _refuse_new(new: Optic, old: Optic, cage: Port) -> None:
    """Why the optic found by the new serial cannot go into the cage, if it cannot."""
    if new.status == OpticStatus.INSTALLED:
        where = Port.objects.select_related("device").get(pk=new.port_id)
        raise ValidationError({"new_serial": f"Optic {new.serial} is already in {_at(where)}: take it out there "
                                             "first, or take another."})
    if new.status in (OpticStatus.FAULTY, OpticStatus.RMA):
        word = "marked faulty" if new.status == OpticStatus.FAULTY else "in RMA"
        raise ValidationError({"new_serial": f"Optic {new.serial} is {word}: take another."})
    if new.part_number.lower() != old.part_number.lower():
        raise ValidationError({"new_serial": f"Optic {new.serial} is {new.part_number}; {_at(cage)} takes "
                                             f"{old.part_number}, like the optic it replaces."})


@transaction.atomic
def optic_swap(*, optic: Optic, new_serial: str, reason: str, user, rma_case: str = "",
               rma_state: str = RmaState.NONE) -> Swap:
    """Replace the optic seated in a port by the optic with `new_serial` (module docstring). Refused: an
    optic in no port, the same serial, a new optic installed elsewhere, faulty, in RMA or of another part."""
    _allowed(user, optic.project_id)
    serial = _text(new_serial, field="new_serial", limit=SERIAL_LENGTH, required="Scan or type the new optic's serial.")
    why = _text(reason, field="reason", limit=REASON_LENGTH, required="Say why it was replaced (what you saw).")
    case, state = _rma(rma_case, rma_state)
    old, new = _locked_optics(optic, serial)
    if old.port_id is None:
        raise ValidationError({"optic": f"Optic {old.serial} is not in a port ({old.get_status_display().lower()}): "
                                        "only a seated optic is swapped."})
    if serial.lower() == old.serial.lower():
        raise ValidationError({"new_serial": f"{serial} is the optic going out: scan the new one."})
    cage = Port.objects.select_related("device").get(pk=old.port_id)
    if new is not None:
        _refuse_new(new, old, cage)
    now = timezone.now()
    # The cause names the part, not the reason: the cable's status cause is read by every member.
    cause = cause_text(f"Optic swapped in {_at(cage)} by {person(user)}: {old.serial} → {serial}; scan the "
                       "cable's ends again.")
    old._history_user, old._change_reason = user, cause[:100]
    optic_remove(optic=old, status=OpticStatus.RMA if state != RmaState.NONE else OpticStatus.FAULTY)
    if new is None:  # a spare out of the box, not in the inventory yet: made like the one it replaces
        new = Optic(project_id=old.project_id, vendor=old.vendor, part_number=old.part_number, serial=serial,
                    form_factor=old.form_factor, speed_gbps=old.speed_gbps)
        new._history_user, new._change_reason = user, cause[:100]
        new = optic_save(optic=new)
    new._history_user, new._change_reason = user, cause[:100]
    # The cage read afresh: the one loaded with the old optic would still say it holds it.
    optic_install(optic=new, port=Port.objects.get(pk=cage.pk), user=user, installed_at=now)
    _back_to_verification(_cables_in(cage), cause=cause, user=user, at=now)
    swap = _record(Swap(project_id=old.project_id, kind=SwapKind.OPTIC, optic=old, new_optic=new, port=cage,
                        old_serial=old.serial, new_serial=new.serial, reason=why, rma_case=case, rma_state=state,
                        rma_updated_at=now if state != RmaState.NONE else None, recorded_by=user,
                        recorded_at=now), user=user, why="recorded")
    evidence_changed_send(project_id=old.project_id, what="swap")  # the gates and the punch list follow
    return swap


# --- cable swap ----------------------------------------------------------------------------------------


@transaction.atomic
def cable_swap(*, cable: Cable, new_serial: str, reason: str, user, old_serial: str = "", rma_case: str = "",
               rma_state: str = RmaState.NONE) -> Swap:
    """Replace a cable between the same ports: its serial becomes `new_serial` and it goes back through
    verification. `old_serial` is what was printed on the cable taken out, for a cable whose serial was
    never recorded (a recorded one wins). Refused: the same serial, or a serial another cable of the
    project already carries."""
    _allowed(user, cable.project_id)
    serial = _text(new_serial, field="new_serial", limit=SERIAL_LENGTH, required="Scan or type the new cable's serial.")
    given_old = _text(old_serial, field="old_serial", limit=SERIAL_LENGTH)
    why = _text(reason, field="reason", limit=REASON_LENGTH, required="Say why it was replaced (what you saw).")
    case, state = _rma(rma_case, rma_state)
    locked = Cable.objects.select_for_update().filter(pk=cable.pk).first()
    if locked is None:
        raise ValidationError({"cable": f"Cable {cable.label} is no longer in the plan."})
    if locked.status not in PHYSICAL_CABLE_STATUSES:
        raise ValidationError({"cable": f"Cable {locked.label} is only planned: there is no cable in place to "
                                        "replace. Install the new one and scan its ends."})
    if locked.serial and given_old and given_old.lower() != locked.serial.lower():
        raise ValidationError({"old_serial": f"Cable {locked.label} was recorded with serial {locked.serial}, not "
                                             f"{given_old}: check the label of the cable taken out."})
    out = locked.serial or given_old
    if out and serial.lower() == out.lower():
        raise ValidationError({"new_serial": f"{serial} is the cable going out: scan the new one."})
    holder = (Cable.objects.filter(project_id=locked.project_id, serial__iexact=serial).exclude(pk=locked.pk)
              .values_list("label", flat=True).first())
    if holder is not None:
        raise ValidationError({"new_serial": f"Cable {holder} already carries serial {serial}."})
    now = timezone.now()
    cause = cause_text(f"Cable swapped by {person(user)}: {out or 'unrecorded serial'} → {serial}; scan its ends "
                       "again.")
    locked.serial = serial
    _back_to_verification([locked], cause=cause, user=user, at=now)
    swap = _record(Swap(project_id=locked.project_id, kind=SwapKind.CABLE, cable=locked, old_serial=out,
                        new_serial=serial, reason=why, rma_case=case, rma_state=state,
                        rma_updated_at=now if state != RmaState.NONE else None, recorded_by=user,
                        recorded_at=now), user=user, why="recorded")
    evidence_changed_send(project_id=locked.project_id, what="swap")
    return swap


# --- the RMA later -------------------------------------------------------------------------------------


@transaction.atomic
def swap_rma_update(*, swap: Swap, rma_case: str, rma_state: str, user) -> Swap:
    """The RMA of a swapped part moves on (a case number arrives, the part ships, the vendor replaces or
    credits it). The old optic follows: in RMA while a case is on, faulty when there is none (unless
    someone has put it back to use since)."""
    _allowed(user, swap.project_id)
    case, state = _rma(rma_case, rma_state)
    locked = Swap.objects.select_for_update().get(pk=swap.pk)
    if (locked.rma_case, locked.rma_state) == (case, state):
        return locked
    _refuse_rma_move(locked.rma_state, state)
    before = locked.get_rma_state_display()
    locked.rma_case, locked.rma_state, locked.rma_updated_at = case, state, timezone.now()
    if locked.optic_id is not None:
        _old_optic_follows(locked, user=user)
    return _record(locked, user=user, why=f"RMA {before} → {locked.get_rma_state_display()}")


def _old_optic_follows(swap: Swap, *, user) -> None:
    optic = Optic.objects.select_for_update(of=("self",)).get(pk=swap.optic_id)
    wanted = OpticStatus.FAULTY if swap.rma_state == RmaState.NONE else OpticStatus.RMA
    if optic.status not in (OpticStatus.FAULTY, OpticStatus.RMA) or optic.status == wanted:
        return
    optic._history_user, optic._change_reason = user, f"RMA of swap {swap.pk}: {swap.get_rma_state_display()}"[:100]
    optic_save(optic=optic, status=wanted)
