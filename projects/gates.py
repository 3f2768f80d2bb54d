"""The gate registry: what each stage's gate asks of the data, contributed by the app that owns the data.

`projects` is what every domain app imports (projects, access), so it cannot import them back to ask
"is every cable verified?". Instead, like the admin site collecting ModelAdmins, it keeps a registry that
each domain app (and delivery, for acceptance) fills in its `AppConfig.ready()`:

    from projects.gates import GateOutcome, register_gate
    register_gate("inventory.racking", racking_gate, title="Every device racked and confirmed by scan")

A gate is a function `(project) -> GateOutcome`. It counts what is missing with aggregate queries and
fetches at most `MISSING_EXAMPLES` example rows, so it costs a handful of queries on the 1,024-server
project as on a lab. Delivery stores each stage's outcome with when it was computed;
nothing here touches the database.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

MISSING_EXAMPLES = 10  # example items a gate lists; the count says how many there are in all


@dataclass(frozen=True)
class MissingItem:
    """One thing a gate still misses: what to call it, why it is missing, and where to go to fix it.

    `ref` names the object for a waiver ("cabling.cable:42"); two outcomes naming the same object give
    the same ref, so a waiver recorded against one still covers it in the next."""

    label: str
    reason: str
    ref: str
    url: str = ""


@dataclass(frozen=True)
class GateOutcome:
    passed: bool
    missing_count: int
    missing: list[MissingItem] = field(default_factory=list)
    summary: str = ""

    def missing_json(self) -> list[dict]:
        return [asdict(item) for item in self.missing]


GateFunction = Callable[[object], GateOutcome]


@dataclass(frozen=True)
class Gate:
    key: str
    title: str
    function: GateFunction


def outcome_of(missing_count: int, missing: list[MissingItem], *, passed_summary: str, failed_summary: str):
    """The usual outcome: passed when nothing is missing; the examples trimmed to MISSING_EXAMPLES."""
    if missing_count == 0:
        return GateOutcome(passed=True, missing_count=0, missing=[], summary=passed_summary)
    return GateOutcome(passed=False, missing_count=missing_count, missing=list(missing[:MISSING_EXAMPLES]),
                       summary=failed_summary)


def ref_of(obj) -> str:
    """'<app_label>.<model>:<pk>' for a model row, the ref a MissingItem and a waiver name it by."""
    return f"{obj._meta.label_lower}:{obj.pk}"


class GateRegistry:
    def __init__(self) -> None:
        self._gates: dict[str, Gate] = {}

    def register(self, key: str, function: GateFunction, *, title: str) -> None:
        """Register (or, when an app's ready() runs again in a test, replace) the gate named `key`."""
        self._gates[key] = Gate(key=key, title=title, function=function)

    def __contains__(self, key: str) -> bool:
        return key in self._gates

    def get(self, key: str) -> Gate | None:
        return self._gates.get(key)

    def keys(self) -> list[str]:
        return sorted(self._gates)

    def compute(self, key: str, project) -> GateOutcome:
        """The gate's outcome for `project`; a key nobody registered fails, saying so (a template naming
        a gate of an app that is not installed must not pass by default)."""
        gate = self._gates.get(key)
        if gate is None:
            return GateOutcome(passed=False, missing_count=1, missing=[MissingItem(
                label=key, reason="No app provides this gate.", ref=f"gate:{key}",
            )], summary=f"Unknown gate {key!r}.")
        return gate.function(project)


gates = GateRegistry()
register_gate = gates.register
