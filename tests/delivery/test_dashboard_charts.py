"""The burn-up's maths and picture (delivery/charts.py): pure functions of counts and dates."""

from __future__ import annotations

import re
from datetime import date, timedelta

from reportlab.pdfbase.pdfmetrics import stringWidth

from delivery.dashboard.charts import Series, burnup_svg, day_span, forecast_finish, latest_forecast

TODAY = date(2026, 3, 10)


def day(n: int) -> date:
    return TODAY + timedelta(days=n)


def test_a_series_counts_by_the_end_of_each_day_and_over_the_last_week():
    s = Series(name="cables verified", by_day={day(-10): 5, day(-6): 3, day(0): 2}, total=20, undated=1)
    assert s.done == 11
    assert s.cumulative([day(-11), day(-10), day(-7), day(-6), day(0)]) == [1, 6, 6, 9, 11]
    assert s.recent(TODAY) == 5  # day(-6) and today fall in the 7 days up to today; day(-10) does not


def test_the_forecast_carries_the_last_weeks_rate_to_the_total():
    assert forecast_finish(done=10, total=24, recent=7, today=TODAY) == day(14)  # 1 a day, 14 left
    assert forecast_finish(done=10, total=11, recent=14, today=TODAY) == day(1)  # a part of a day is a day
    assert forecast_finish(done=24, total=24, recent=0, today=TODAY) == TODAY  # nothing left
    assert forecast_finish(done=3, total=24, recent=0, today=TODAY) is None  # no rate, no date
    assert forecast_finish(done=0, total=10**6, recent=1, today=TODAY) is None  # years away
    assert latest_forecast([day(3), day(9)]) == day(9)
    assert latest_forecast([day(3), None]) is None


def test_the_span_reaches_from_the_first_work_to_the_target_and_the_forecasts():
    days = day_span(first=day(-5), today=TODAY, target=day(20), forecasts=[day(30), None])
    assert days[0] == day(-5) and days[-1] == day(30) and len(days) == 36
    assert day_span(first=day(-2), today=TODAY, target=day(-9), forecasts=[])[0] == day(-9)  # a target missed


def marks(svg: str, css_class: str) -> list[dict[str, str]]:
    found = []
    for tag in re.findall(rf'<rect[^>]*class="{css_class}"[^>]*>', svg):
        found.append(dict(re.findall(r'data-([a-z-]+)="([^"]*)"', tag)))
    return found


def test_the_burn_up_draws_each_day_up_to_today_the_totals_the_target_and_the_forecasts():
    cables = Series(name="cables verified", by_day={day(-3): 4, day(-1): 3}, total=14)
    links = Series(name="links passing", by_day={day(-2): 2}, total=2)
    svg = burnup_svg([cables, links], today=TODAY, target=day(5), first=day(-3), title="Burn-up <ACME>")
    assert svg.startswith("<svg") and "<title>Burn-up &lt;ACME&gt;</title>" in svg
    points = [(p["series"], p["day"], int(p["value"])) for p in marks(svg, "point")]
    assert ("cables verified", day(-3).isoformat(), 4) in points
    assert ("cables verified", day(-2).isoformat(), 4) in points
    assert ("cables verified", TODAY.isoformat(), 7) in points
    assert ("links passing", TODAY.isoformat(), 2) in points
    assert not [p for p in points if p[1] > TODAY.isoformat()]  # no line into the future
    assert {(t["series"], t["value"]) for t in marks(svg, "total")} == {("cables verified", "14"),
                                                                        ("links passing", "2")}
    assert marks(svg, "target") == [{"day": day(5).isoformat()}]
    # 7 cables in the last 7 days: 1 a day, 7 left -> a week from today; the links are done: no mark.
    assert marks(svg, "forecast") == [{"series": "cables verified", "day": day(7).isoformat()}]


def test_an_empty_project_still_draws_a_chart():
    svg = burnup_svg([Series(name="cables verified", by_day={}, total=0)], today=TODAY, target=None, first=TODAY,
                     title="Nothing yet")
    assert "<svg" in svg and not marks(svg, "target") and len(marks(svg, "point")) == 1


def test_every_text_of_the_burn_up_is_at_least_12_px_and_the_dates_stay_inside_the_picture():
    today = date(2026, 3, 20)
    series = [Series("Cables verified", {today - timedelta(days=d): 40 for d in range(18)}, 24_576)]
    svg = burnup_svg(series, today=today, target=today + timedelta(days=2), first=today - timedelta(days=18),
                     title="Burn-up", width=720)
    sizes = [float(size) for size in re.findall(r"font-size:\s*([0-9.]+)", svg)]
    assert sizes and min(sizes) >= 12
    # Every text starts inside the picture and ends inside it.
    texts = re.findall(r'<text x="(-?[0-9.]+)"[^>]*>([^<]*)<', svg)
    assert texts
    for x, text in texts:
        assert 0 <= float(x) and float(x) + stringWidth(text.strip(), "Helvetica", 12) <= 720, text
