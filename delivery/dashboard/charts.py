"""The dashboard's burn-up: how many cables are verified and how many links pass, day by day, against the
project's target date, with the date at which the current rate finishes.

Pure functions of plain numbers and dates (no Django, no models), like validation.charts whose scales and
SVG rendering they reuse: the dashboard's selectors (delivery/dashboard/selectors.py) count by day in the
database, these turn the counts into cumulative series, forecasts and a picture, and the page prints the
same figures as a table beside it. Marks a test may look for carry a class and data- attributes: points
(`point`, data-series, data-day, data-value), the totals (`total`), the target date (`target`) and each
series' forecast (`forecast`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from reportlab.graphics.shapes import Drawing, PolyLine, Rect, String
from reportlab.lib import colors

from validation.charts import AXIS_COLOUR, FAIL_COLOUR, GRID_COLOUR, SERIES_COLOURS, Scale, linear_ticks, nice_ceiling
from validation.charts import render as render_svg

RATE_WINDOW_DAYS = 7  # "the current rate": what was done over the last week, per day
MAX_FORECAST_DAYS = 3 * 365  # a rate that would take longer than this is reported as no forecast
FONT, FONT_SIZE = "Helvetica", 12  # legible on a tablet at arm's length: 12 px at the least
DASH = 4  # length of a dash of the total's level, and of the gap after it


@dataclass(frozen=True)
class Series:
    """One line of the burn-up: how many were done on each day (the database's count by day), how many
    were done without a date (counted from the first day), and how many there are in all."""

    name: str
    by_day: Mapping[date, int]
    total: int
    undated: int = 0

    @property
    def done(self) -> int:
        return self.undated + sum(self.by_day.values())

    def recent(self, today: date, window: int = RATE_WINDOW_DAYS) -> int:
        """How many were done in the `window` days up to and including today."""
        since = today - timedelta(days=window - 1)
        return sum(n for day, n in self.by_day.items() if since <= day <= today)

    def cumulative(self, days: Sequence[date]) -> list[int]:
        """How many were done by the end of each of `days` (in order)."""
        counts, running, pending = [], self.undated, sorted(self.by_day.items())
        index = 0
        for day in days:
            while index < len(pending) and pending[index][0] <= day:
                running += pending[index][1]
                index += 1
            counts.append(running)
        return counts


def forecast_finish(*, done: int, total: int, recent: int, today: date,
                    window: int = RATE_WINDOW_DAYS) -> date | None:
    """The day the work finishes at the rate of the last `window` days: today when nothing is left; None
    when there is nothing to count yet (an empty project is not finished today), when something is left and
    nothing was done lately (no rate, no date), or when the date is years away."""
    if total <= 0:
        return None
    left = total - done
    if left <= 0:
        return today
    if recent <= 0:
        return None
    days = math.ceil(left * window / recent)
    return today + timedelta(days=days) if days <= MAX_FORECAST_DAYS else None


def latest_forecast(forecasts: Sequence[date | None]) -> date | None:
    """When everything finishes: the latest of the series' forecasts; None when any series has none."""
    if not forecasts or any(f is None for f in forecasts):
        return None
    return max(forecasts)


def day_span(*, first: date, today: date, target: date | None, forecasts: Sequence[date | None]) -> list[date]:
    """Every day the chart spans: from the earliest of the first day with work, today and the target date
    to the latest of today, the target date and the forecasts."""
    marks = [d for d in (target, *forecasts) if d is not None]
    last = max([today, *marks])
    first = min([first, today, *marks])
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


# --- the picture ------------------------------------------------------------------------------------------


def _colour(hex_colour: str):
    return colors.HexColor(hex_colour)


def _tagged(shape, css_class: str, **data):
    shape._svgAttrs = {"class": css_class, **{f"data-{k.replace('_', '-')}": str(v) for k, v in data.items()}}
    return shape


def _mark(drawing, x: float, y: float, width: float, height: float, colour: str, css_class: str, **data) -> None:
    drawing.add(_tagged(Rect(x, y, width, height, fillColor=_colour(colour), strokeColor=None, strokeWidth=0),
                        css_class, **data))


def _text(x: float, y: float, text: str, *, anchor: str = "start", fill: str = AXIS_COLOUR) -> String:
    return String(x, y, text, fontName=FONT, fontSize=FONT_SIZE, fillColor=_colour(fill), textAnchor=anchor)


def _day_ticks(days: Sequence[date], count: int = 6) -> list[int]:
    """Indexes of the days labelled on the x axis: the first, the last and about `count` between."""
    step = max(1, math.ceil(len(days) / count))
    ticks = list(range(0, len(days), step))
    if ticks[-1] != len(days) - 1:
        if len(days) - 1 - ticks[-1] < step / 2:
            ticks.pop()
        ticks.append(len(days) - 1)
    return ticks


def burnup_svg(series: Sequence[Series], *, today: date, target: date | None, first: date,
               title: str, width: float = 720, height: float = 280) -> str:
    """Each series' cumulative count per day up to today (a line and a point a day) with its total as a
    dashed level, the target date and today as vertical marks, and each series' forecast (the current
    rate carried on to its total) as a mark on its total line."""
    forecasts = [forecast_finish(done=s.done, total=s.total, recent=s.recent(today), today=today) for s in series]
    days = day_span(first=first, today=today, target=target, forecasts=forecasts)
    drawing = Drawing(width, height)
    left, bottom, right, top = 62, 40, width - 14, height - 32
    x = Scale(0, max(len(days) - 1, 1), left + 4, right - 4)
    peak = nice_ceiling(max([s.total for s in series] + [1]))
    y = Scale(0, peak, bottom, top)
    drawing.add(Rect(left, bottom, right - left, top - bottom, fillColor=None, strokeColor=_colour(GRID_COLOUR)))
    for value in (t for t in linear_ticks(0, peak) if t == int(t)):
        drawing.add(Rect(left, y.at(value) - 0.25, right - left, 0.5, fillColor=_colour(GRID_COLOUR), strokeColor=None))
        drawing.add(_text(left - 6, y.at(value) - 4, f"{int(value):,}", anchor="end"))
    for index in _day_ticks(days):
        _mark(drawing, x.at(index) - 0.5, bottom - 4, 1, 4, AXIS_COLOUR, "tick", day=days[index].isoformat())
        at_edge = x.at(index) > right - 24  # the last date would run off the picture if centred
        drawing.add(_text(x.at(index), bottom - 18, days[index].strftime("%d %b"),
                          anchor="end" if at_edge else "middle"))
    up_to_today = [d for d in days if d <= today]
    for line, colour, forecast in zip(series, SERIES_COLOURS, forecasts, strict=False):
        level = y.at(line.total)
        # A dashed level: the total this line climbs to. Its first dash is the mark a test may look for; the
        # rest is one dashed line, not a shape per dash (each shape costs the page its rendering time).
        _mark(drawing, left, level - 0.75, DASH, 1.5, colour, "total", series=line.name, value=line.total)
        drawing.add(PolyLine([left + 2 * DASH, level, right, level], strokeColor=_colour(colour), strokeWidth=1.5,
                             strokeDashArray=[DASH, DASH]))
        counts = line.cumulative(up_to_today)
        points = [(x.at(i), y.at(n)) for i, n in enumerate(counts)]
        if len(points) > 1:
            drawing.add(PolyLine([c for p in points for c in p], strokeColor=_colour(colour), strokeWidth=2))
        for (px, py), day, n in zip(points, up_to_today, counts, strict=True):
            _mark(drawing, px - 2, py - 2, 4, 4, colour, "point", series=line.name, day=day.isoformat(), value=n)
        if forecast is not None and forecast > today and points:
            fx = x.at(days.index(forecast))
            drawing.add(PolyLine([*points[-1], fx, level], strokeColor=_colour(colour), strokeWidth=1,
                                 strokeDashArray=[3, 3]))
            _mark(drawing, fx - 4, level - 4, 8, 8, colour, "forecast", series=line.name, day=forecast.isoformat())
    today_x = x.at(days.index(today))
    _mark(drawing, today_x - 0.5, bottom, 1, top - bottom, AXIS_COLOUR, "today", day=today.isoformat())
    drawing.add(_text(today_x + 3, top - 14, "today"))
    if target is not None:
        target_x = x.at(days.index(target))
        _mark(drawing, target_x - 1, bottom, 2, top - bottom, FAIL_COLOUR, "target", day=target.isoformat())
        # One line below "today" (the two dates are often close); on the side of the mark that has room.
        label, room_left = f"target {target:%d %b}", target_x - left > 7 * 12
        drawing.add(_text(target_x + (-3 if room_left else 4), top - 30, label,
                          anchor="end" if room_left else "start", fill=FAIL_COLOUR))
    _legend(drawing, right, top + 8, [(s.name, c) for s, c in zip(series, SERIES_COLOURS, strict=False)])
    return render_svg(drawing, title=title, css_class="burnup")


def _legend(drawing, x: float, y: float, entries: Sequence[tuple[str, str]]) -> None:
    """Swatches and names in one row ending at x."""
    for name, colour in reversed(entries):
        x -= 14 + 6.7 * len(name)  # Helvetica at 12 px: about 6.7 px a character
        drawing.add(Rect(x, y, 10, 10, fillColor=_colour(colour), strokeColor=None))
        drawing.add(_text(x + 13, y + 1, name))
        x -= 8
