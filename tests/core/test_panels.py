"""An upper app's panel shows on a lower app's page, in order, with its own context."""

from types import SimpleNamespace

from core.panels import _PANELS, Panel, panels_for, register_panel


def test_panels_come_in_order_with_their_context(monkeypatch):
    monkeypatch.setitem(_PANELS, "tests.thing", {})
    register_panel("tests.thing", Panel("b", "Second", "b.html", lambda request, obj, project: {"n": obj.n}, 20))
    register_panel("tests.thing", Panel("a", "First", "a.html", lambda request, obj, project: {"p": project}, 10))
    register_panel("tests.thing", Panel("b", "Second", "b2.html", lambda request, obj, project: {"n": 2}, 20))
    shown = panels_for("tests.Thing", request=None, obj=SimpleNamespace(n=1), project="P")
    assert [(p.key, p.template, p.context) for p in shown] == [("a", "a.html", {"p": "P"}), ("b", "b2.html", {"n": 2})]
    assert panels_for("tests.other", request=None, obj=None, project=None) == []
