"""Geometry of a rack elevation: where each device's box goes in the SVG of each rack face.

Pure Python (no Django), so the drawing rules are testable on their own; the template only places
the numbers computed here. U1 is at the bottom, as racks are numbered on the floor.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

UNIT_PX = 18  # height of one rack unit in the drawing
MARGIN_PX = 8  # space above and below the rack
LABEL_PX = 34  # column on the left for the U numbers
RACK_PX = 210  # inner width of the rack
TEXT_INSET_PX = 6


@dataclass(frozen=True)
class Placement:
    """What the drawing needs to know about one racked device."""

    pk: int
    name: str
    status: str
    position_u: int
    height_u: int
    face: str
    full_depth: bool

    @property
    def span(self) -> int:
        return max(self.height_u, 1)  # a 0U device still claims one unit (see rack_space.units_of)

    @property
    def top_u(self) -> int:
        return self.position_u + self.span - 1

    def shows_on(self, face: str) -> bool:
        return self.full_depth or self.face == face


@dataclass(frozen=True)
class DeviceBox:
    pk: int
    name: str
    status: str
    position_u: int
    top_u: int
    x: int
    y: int
    width: int
    height: int
    text_x: int
    text_y: int


@dataclass(frozen=True)
class UnitLabel:
    unit: int
    y: int  # baseline of the label text
    line_y: int  # bottom edge of the unit


@dataclass(frozen=True)
class FaceElevation:
    face: str
    label: str
    width: int
    height: int
    rack_x: int
    rack_y: int
    rack_width: int
    rack_height: int
    boxes: list[DeviceBox]
    units: list[UnitLabel]


def unit_top_y(unit: int, rack_height_u: int) -> int:
    """Y of the top edge of `unit` (SVG y grows downwards; U1 is the bottom unit)."""
    return MARGIN_PX + (rack_height_u - unit) * UNIT_PX


def device_box(placement: Placement, rack_height_u: int) -> DeviceBox:
    # Clamp to the rack so bad data (a device taller than what is left) still draws inside the frame.
    top = min(placement.top_u, rack_height_u)
    bottom = max(min(placement.position_u, top), 1)
    y = unit_top_y(top, rack_height_u)
    height = (top - bottom + 1) * UNIT_PX
    return DeviceBox(
        pk=placement.pk, name=placement.name, status=placement.status,
        position_u=placement.position_u, top_u=placement.top_u,
        x=LABEL_PX, y=y, width=RACK_PX, height=height,
        text_x=LABEL_PX + TEXT_INSET_PX, text_y=y + height // 2 + 4,
    )


def face_elevation(
    *, face: str, label: str, rack_height_u: int, placements: Iterable[Placement]
) -> FaceElevation:
    boxes = [
        device_box(p, rack_height_u)
        for p in sorted(placements, key=lambda p: -p.position_u)
        if p.shows_on(face)
    ]
    units = [
        UnitLabel(
            unit=u,
            y=unit_top_y(u, rack_height_u) + UNIT_PX - 5,
            line_y=unit_top_y(u, rack_height_u) + UNIT_PX,
        )
        for u in range(rack_height_u, 0, -1)
    ]
    rack_height = rack_height_u * UNIT_PX
    return FaceElevation(
        face=face, label=label, width=LABEL_PX + RACK_PX + 2, height=rack_height + 2 * MARGIN_PX,
        rack_x=LABEL_PX, rack_y=MARGIN_PX, rack_width=RACK_PX, rack_height=rack_height,
        boxes=boxes, units=units,
    )


def rack_elevation(
    *, rack_height_u: int, placements: Iterable[Placement], faces: Sequence[tuple[str, str]]
) -> list[FaceElevation]:
    """One elevation per (face, label): a full-depth device appears on every face, a half-depth one
    (a rear PDU, a front patch panel) only on the face it is mounted on."""
    placements = list(placements)
    return [
        face_elevation(face=face, label=label, rack_height_u=rack_height_u, placements=placements)
        for face, label in faces
    ]
