"""The codes the floor prints and the tools report, read without a database (pure Python).

A technician's scanner or camera hands us whatever a label holds; this module says what kind of code it
is, so one resolver (cabling.search) can find its object in one step:

- a cable end: `C00417/A`, `C00417/B` (the B end of a plain cable), `C00417/B2` (leg 2 of a breakout).
  Labels printed before end codes existed hold the bare cable label `C00417`; it still resolves to the
  cable, and the end is then told by the port the technician confirms.
- a port: `ib-leaf-03:p17` or `ib-leaf-03 p17` (device, then port).
- an end tag, as printed under the label: `A01-U37-gpu-001-ib0` (rack, top U, device, port).
- a GUID (`0x043f720300aabbcc`, `043f:7203:00aa:bbcc`) or a MAC (`b8:ce:f6:12:34:56`, `b8ce.f612.3456`).
- anything else is matched as it is against serials, asset tags, device names and cable labels.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CODE_LENGTH = 512  # longer input is not a code we printed or a tool reported: refused, never stored whole
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_CABLE_END = re.compile(r"^(?P<label>[^/\s]+)/(?P<side>[ABab])(?P<leg>[1-9][0-9]{0,2})?$")
_PORT = re.compile(r"^(?P<device>[^\s:]+)(?::|\s+)(?P<port>[^\s:]+)$")
_END_TAG = re.compile(r"^(?P<rack>[^\s]+?)-U(?P<top_u>[0-9]{1,3})-(?P<rest>[^\s]+)$")
_HEX = re.compile(r"^[0-9a-f]+$")


@dataclass(frozen=True)
class CableEndCode:
    label: str
    side: str  # "A" or "B"
    position: int | None  # the leg (from 0) of a B end; None: the only B end, or the A end


@dataclass(frozen=True)
class ParsedCode:
    text: str  # the code, trimmed of white space and control characters
    cable_end: CableEndCode | None = None
    port: tuple[str, str] | None = None  # (device name, port name)
    end_tag: tuple[str, int, str] | None = None  # (rack, top U, "device-port")
    guid_mac: str | None = None  # normalised (normalize_guid_mac)


class CodeError(ValueError):
    """Not something a label or a tool could hold (empty, too long)."""


def clean_code(raw: str) -> str:
    if not isinstance(raw, str):
        raise CodeError("A code is text.")
    if len(raw) > MAX_CODE_LENGTH:
        raise CodeError(f"That is {len(raw):,} characters: no label holds more than {MAX_CODE_LENGTH}.")
    text = _CONTROL.sub("", raw).strip()
    if not text:
        raise CodeError("The code is empty: scan or type it again.")
    return text


def normalize_guid_mac(text: str) -> str | None:
    """A GUID as 16 lower-case hex digits, a MAC as six colon-separated pairs; None for anything else.
    The fabric prints them in several ways; we store and compare this one."""
    value = text.strip().lower()
    value = value.removeprefix("0x")
    digits = re.sub(r"[:.\-]", "", value)
    if not _HEX.match(digits or "-"):
        return None
    if len(digits) == 16:
        return digits
    if len(digits) == 12 and (digits != value or len(value) == 12):
        return ":".join(digits[i:i + 2] for i in range(0, 12, 2))
    return None


def cable_end_code(label: str, side: str, position: int, *, b_ends: int) -> str:
    """What an end's printed label holds: `C00417/A`, `C00417/B`, or `C00417/B2` on a breakout."""
    if side == "A":
        return f"{label}/A"
    return f"{label}/B" if b_ends <= 1 else f"{label}/B{position + 1}"


def parse_code(raw: str) -> ParsedCode:
    """Say what kind of code `raw` is (CodeError if it cannot be one)."""
    text = clean_code(raw)
    match = _CABLE_END.match(text)
    if match:
        leg = match["leg"]
        side = match["side"].upper()
        position = int(leg) - 1 if (leg and side == "B") else None
        return ParsedCode(text=text, cable_end=CableEndCode(match["label"], side, position))
    guid_mac = normalize_guid_mac(text)
    if guid_mac and (text.lower().startswith("0x") or ":" in text or "." in text or "-" in text):
        return ParsedCode(text=text, guid_mac=guid_mac)
    match = _PORT.match(text)
    if match:
        return ParsedCode(text=text, port=(match["device"], match["port"]))
    match = _END_TAG.match(text)
    if match:
        return ParsedCode(text=text, end_tag=(match["rack"], int(match["top_u"]), match["rest"]), guid_mac=guid_mac)
    return ParsedCode(text=text, guid_mac=guid_mac)
