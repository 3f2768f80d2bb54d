"""Panels an upper app adds to a lower app's page, without the lower app importing it.

The floors forbid inventory from importing cabling, yet a device's page must show each port's cable and
far end, and a cable's page (cabling) the link checks and topology comparisons (validation). The upper
app registers a panel for the lower app's model in its AppConfig.ready(); the lower app's view asks
`panels_for(...)` and its template includes `core/_panels.html`. (NetBox's plugin template extensions
work the same way.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

_PANELS: dict[str, dict[str, Panel]] = {}


@dataclass(frozen=True)
class Panel:
    """`context(request, obj, project)` returns what `template` reads (as `panel.context`); it runs only
    when the page is shown, and must keep its queries constant (paginate, aggregate). It returns None
    when the person looking may not see the panel at all (its card is left out)."""

    key: str  # unique for the model: an app registering twice replaces its panel
    title: str
    template: str
    context: Callable[..., dict]
    order: int = 100  # lower first


@dataclass(frozen=True)
class ShownPanel:
    key: str
    title: str
    template: str
    context: dict


def register_panel(model_label: str, panel: Panel) -> None:
    """Show `panel` on the pages of objects of `model_label` ("inventory.device", "cabling.cable")."""
    _PANELS.setdefault(model_label.lower(), {})[panel.key] = panel


def panels_for(model_label: str, *, request, obj, project) -> list[ShownPanel]:
    panels = sorted(_PANELS.get(model_label.lower(), {}).values(), key=lambda p: (p.order, p.key))
    shown = ((p, p.context(request, obj, project)) for p in panels)
    return [ShownPanel(p.key, p.title, p.template, context) for p, context in shown if context is not None]
