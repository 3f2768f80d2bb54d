"""Pure: which counters grew between two readings, and the reasons a port fails or is doubted for.
No Django, no database: the soak's services feed it readings and store what it says."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from .. import criteria

# The counters that must not grow while the cluster is under load (DOMAIN.md, stage 8), as SoakSample
# fields and mlxlink's counter keys.
GROWTH_COUNTERS = (
    ("symbol_errors", "symbol errors"),
    ("effective_physical_errors", "effective physical errors"),
    ("link_down", "link-down counter"),
    ("link_error_recovery", "link error recovery counter"),
)
COUNTER_FIELDS = tuple(key for key, _ in GROWTH_COUNTERS)


def counter_growth(before: Mapping, after: Mapping) -> list[tuple[str, str, int, int]]:
    """(key, label, before, after) of every counter higher than at the previous reading. A counter lower
    than before was cleared in between, which is not growth."""
    grown = []
    for key, label in GROWTH_COUNTERS:
        old, new = before.get(key), after.get(key)
        if old is not None and new is not None and new > old:
            grown.append((key, label, old, new))
    return grown


def merged_growth(growth: Mapping[str, dict], *, previous: Mapping, counters: Mapping, sweep: int, at: str) -> dict:
    """`growth` (counter -> the first sample it grew at) with what grew between the port's previous good
    reading and this one at sample `sweep` (taken at `at`, ISO 8601). A reading that arrives late and
    shows an earlier growth moves the failure back to it."""
    merged = dict(growth)
    for key, _label, before, after in counter_growth(previous, counters):
        if key not in merged or sweep < merged[key]["sweep"]:
            merged[key] = {"sweep": sweep, "at": at, "before": before, "after": after}
    return merged


def growth_reasons(growth: Mapping[str, dict], *, when: Callable[[str], str]) -> list[criteria.Reason]:
    """One failure per counter that grew, at the first reading it did, earliest first. `when` turns a
    stored ISO 8601 time into the words a person reads."""
    labels = dict(GROWTH_COUNTERS)
    order = list(labels)
    reasons = []
    for key, seen in sorted(growth.items(), key=lambda item: (item[1]["sweep"], order.index(item[0]))):
        reasons.append(
            criteria.Reason(
                criteria.Outcome.FAIL,
                f"{labels.get(key, key)} grew from {seen['before']} to {seen['after']} at sample {seen['sweep']} "
                f"({when(seen['at'])})",
            )
        )
    return reasons


def final_verdict(
    growth: Mapping[str, dict], *, good: int, bad: int, first_error: str | None, when: Callable[[str], str]
) -> criteria.Verdict:
    """A port's verdict when its window closes: failed by any growth; an error when no reading could be
    taken, a warning when some could not or when too few were taken to see growth."""
    reasons = growth_reasons(growth, when=when)
    if bad:
        level = criteria.Outcome.ERROR if not good else criteria.Outcome.WARN
        reasons.append(criteria.Reason(level, f"counters unreadable at {bad} of {good + bad} sample(s): {first_error}"))
    elif good < 2:
        reasons.append(criteria.Reason(criteria.Outcome.WARN, f"{good} reading(s): too few to see growth"))
    return criteria.Verdict.of(reasons)
