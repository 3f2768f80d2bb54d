"""Hand-written SQL lives behind one fence (docs/architecture.md, "Hand-written SQL and the bulk writers"): a `sql`
module per app (`<app>/sql.py`) and core's bulk writers (core.rows, core.bulk_history), nowhere else. Every
other module reaches the database through the ORM or through a named function of those modules.

The check reads every module of the app packages (not their migrations; tests and benches are not in them) and
refuses, naming file:line:
- `connection` / `connections` from django.db (imported, or as `django.db.connection`), and
  `transaction.get_connection`;
- a `.cursor(` call, and a database's `.execute(` / `.executemany(`: on a receiver named for a cursor, a
  connection or a schema editor, or with text as its first argument (a check kind's `execute(result, inputs)`
  is not one);
- `.raw(` and `.extra(` calls, and `RawSQL`;
- the bulk writers' helpers of hand-written SQL (core.rows' Columns, columns_of, fetch, joined;
  core.bulk_history's history_insert_from, tracked_columns, update_recorded), which take SQL text or give it;
- a string literal (an f-string's literal text included) that begins, after whitespace, with a statement:
  SELECT, UPDATE, INSERT, DELETE, SET or WITH in capitals, or in any case `select ... from`, `insert into`,
  `delete from`, `update x set`, `with x as (`. Docstrings and other strings standing as statements are
  prose: not read.

It runs in `make test`, so SQL written outside the fence fails the build; the second test shows it catching
a `connection.cursor()` planted in a copy of a view."""

from __future__ import annotations

import ast
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
APPS = ("core", "projects", "inventory", "cabling", "validation", "delivery", "demo", "bringup")

# Inside the fence: each app's own `sql` module, and core's bulk writers (rows and history rows written around
# the ORM, by statements they build from the models' own columns).
FENCE_MODULES = frozenset({
    *(f"{app}/sql.py" for app in APPS),
    "core/rows.py",  # a scan's reads turned into instances, and its writes sent together (core.rows.Writes)
    "core/bulk_history.py",  # bulk inserts (COPY) and the history rows of bulk writes (INSERT ... SELECT)
})

_STATEMENT = re.compile(
    r"\s*(?:(?:SELECT|UPDATE|INSERT|DELETE|SET|WITH)\b"
    r"|(?i:select\s.*\sfrom\s|insert\s+into\s|delete\s+from\s|update\s+\S+\s+set\s|with\s+\w+(?:\s*\([^)]*\))?\s+as\s*\())",
    re.S,
)
# What a module may not reach, by its dotted path (imported, or used as an attribute of what it imported).
_FORBIDDEN = {
    "django.db.connection": "django.db.connection",
    "django.db.connections": "django.db.connections",
    "django.db.transaction.get_connection": "transaction.get_connection",
    # The bulk writers' helpers of hand-written SQL (they take SQL text, or give it: a SELECT list, a WHERE): for
    # the fence's modules only.
    **{f"core.rows.{name}": f"core.rows.{name}, a helper of hand-written SQL"
       for name in ("Columns", "columns_of", "fetch", "joined")},
    **{f"core.bulk_history.{name}": f"core.bulk_history.{name}, a helper of hand-written SQL"
       for name in ("history_insert_from", "tracked_columns", "update_recorded")},
}
_CALLS = {"cursor": "a cursor opened", "raw": "a raw() query", "extra": "an extra() query"}
_EXECUTES = {"execute": "a cursor's execute()", "executemany": "a cursor's executemany()"}


def _text(node: ast.AST) -> str | None:
    """The text of a string literal; of an f-string, its literal parts with `{}` for each value."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)
    return None


def _executes_sql(call: ast.Call) -> bool:
    """Whether `x.execute(...)` / `x.executemany(...)` is a database's: its receiver is named for a cursor, a
    connection or a schema editor (or is a `.cursor()` call), or its first argument is text. A plugin's
    `execute(result, inputs)` (validation.kinds) is neither."""
    receiver = call.func.value
    if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Attribute):
        receiver = receiver.func
    name = receiver.attr if isinstance(receiver, ast.Attribute) else getattr(receiver, "id", "")
    if re.search(r"cursor|connection|editor|^cur$|^c$", name, re.I):
        return True
    first = call.args[0] if call.args else None
    return first is not None and (_text(first) is not None or isinstance(first, ast.BinOp))


def _dotted(node: ast.AST) -> str | None:
    """`a.b.c` of a chain of attributes on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _imports(tree: ast.Module, name: str) -> dict[str, str]:
    """Each name a module binds by importing -> the dotted path it stands for (`from django import db` binds
    db -> django.db; `from .rows import fetch` in core binds fetch -> core.rows.fetch)."""
    package = name.removesuffix(".py").split("/")[:-1]
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    root = alias.name.partition(".")[0]
                    bound[root] = root
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{module}.{alias.name}"
    return bound


def fence_breaches(path: Path, *, name: str) -> list[str]:
    """What `path` (shown as `name`, e.g. "cabling/views.py") does outside the fence, one "name:line: what" each
    (empty inside the fence)."""
    if name in FENCE_MODULES:
        return []
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=name)
    bound = _imports(tree, name)
    found: list[tuple[int, str]] = []
    prose = {id(node.value) for node in ast.walk(tree)
             if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    prose |= {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                path_of = bound.get(alias.asname or alias.name, "")
                if path_of in _FORBIDDEN:
                    found.append((node.lineno, f"imports {_FORBIDDEN[path_of]}"))
                elif alias.name == "RawSQL":
                    found.append((node.lineno, "imports RawSQL"))
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            root, _, rest = (dotted or "").partition(".")
            path_of = ".".join(filter(None, [bound.get(root, ""), rest])) if root in bound else ""
            if path_of in _FORBIDDEN:
                found.append((node.lineno, f"uses {_FORBIDDEN[path_of]}"))
            elif node.attr == "RawSQL":
                found.append((node.lineno, "uses RawSQL"))
        elif isinstance(node, ast.Name) and node.id == "RawSQL" and isinstance(node.ctx, ast.Load):
            found.append((node.lineno, "uses RawSQL"))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in _CALLS:
                found.append((node.lineno, _CALLS[node.func.attr]))
            elif node.func.attr in _EXECUTES and _executes_sql(node):
                found.append((node.lineno, _EXECUTES[node.func.attr]))
        text = _text(node) if id(node) not in prose else None
        if text is not None and _STATEMENT.match(text):
            found.append((node.lineno, f"SQL text {text.strip()[:40]!r}"))
    return [f"{name}:{line}: {what}" for line, what in sorted(set(found))]


def app_modules(root: Path = REPO) -> list[tuple[Path, str]]:
    """Every module of the app packages under `root` (path, name relative to `root`), migrations left out."""
    modules = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")):
            name = path.relative_to(root).as_posix()
            if "/migrations/" not in f"/{name}":
                modules.append((path, name))
    return modules


def test_no_hand_written_sql_outside_the_fence():
    breaches = [breach for path, name in app_modules() for breach in fence_breaches(path, name=name)]
    assert not breaches, (
        "Hand-written SQL outside the fence: move it into the app's sql module (<app>/sql.py) as a named "
        "function, and call that:\n" + "\n".join(breaches))


def test_a_cursor_planted_in_a_view_is_refused(tmp_path):
    source = (REPO / "cabling/views.py").read_text(encoding="utf-8")
    lines = source.count("\n")
    planted = tmp_path / "cabling" / "views.py"
    planted.parent.mkdir()
    planted.write_text(source + (
        "from django.db import connection  # noqa\n"
        "\n\n"
        "def planted_view(request):\n"
        "    with connection.cursor() as cursor:\n"
        "        cursor.execute('SELECT 1')\n"
        "        return cursor.fetchone()\n"
    ), encoding="utf-8")
    assert fence_breaches(planted, name="cabling/views.py") == [
        f"cabling/views.py:{lines + 1}: imports django.db.connection",
        f"cabling/views.py:{lines + 5}: a cursor opened",
        f"cabling/views.py:{lines + 6}: SQL text 'SELECT 1'",
        f"cabling/views.py:{lines + 6}: a cursor's execute()",
    ]
    assert fence_breaches(planted, name="cabling/sql.py") == []  # the same text inside the fence


def test_each_rule_catches_its_form(tmp_path):
    module = tmp_path / "m.py"
    module.write_text(
        '"""SELECT in a docstring is prose."""\n'
        "import django.db\n"
        "from django import db as d\n"
        "from django.db import connections, transaction\n"
        "from django.db.models.expressions import RawSQL\n"
        "a = django.db.connection\n"
        "b = d.connections\n"
        "c = transaction.get_connection()\n"
        "Port.objects.raw('x')\n"
        "Port.objects.extra(where=['x'])\n"
        "q = f'''\n  WITH moved AS ({x}) SELECT 1'''\n"
        "r = 'update inventory_port set x = 1'\n"
        "s = 'Select a rack'  # a label, not a query\n"
        "from core.rows import fetch, Writes\n"
        "schema_editor.execute(statement)\n"
        "kind_of(result.run.kind).execute(result, inputs)  # a plugin's execute, not a database's\n"
        "t = f'{update} RETURNING id'  # a piece of a statement: the statement is refused where it is written\n"
        "import core.bulk_history as history\n"
        "history.update_recorded(Port, {}, 'x', [])\n",
        encoding="utf-8")
    whats = [breach.partition(": ")[2] for breach in fence_breaches(module, name="m.py")]
    assert whats == [
        "imports django.db.connections", "imports RawSQL", "uses django.db.connection",
        "uses django.db.connections", "uses transaction.get_connection", "a raw() query", "an extra() query",
        "SQL text 'WITH moved AS ({}) SELECT 1'", "SQL text 'update inventory_port set x = 1'",
        "imports core.rows.fetch, a helper of hand-written SQL", "a cursor's execute()",
        "uses core.bulk_history.update_recorded, a helper of hand-written SQL",
    ]
