"""The docs hold to the code (issue 20, "Docs by audience"):

- every app, module, file, management command and make target docs/architecture.md names in backticks exists
  (dotted names through importlib.util.find_spec, then attributes, or an `app_label.Model`; paths on the
  filesystem; `manage.py <command>` among Django's commands; `make <target>` in the Makefile);
- README.md is at most 200 lines and docs/architecture.md at most 300, and the four docs by audience exist;
- every relative link of README.md and docs/*.md reaches a file that exists (and a heading, for an anchor);
- the pure-Python list of docs/architecture.md is the pure contract's `source_modules` in pyproject.toml;
- every environment variable bringup/settings.py (and bringup/celery.py) reads is documented in
  docs/operations.md.

Each checker is a function of text, so each test below it plants a mistake and expects the checker to name it.
The README's demo figures are held to the built demo by tests/demo/test_demo.py."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
ARCHITECTURE = DOCS / "architecture.md"
OPERATIONS = DOCS / "operations.md"
AUDIENCE_DOCS = ("operations.md", "api.md", "performance.md", "architecture.md")
LIMITS = {README: 200, ARCHITECTURE: 300}

PACKAGES = ("core", "projects", "inventory", "cabling", "validation", "delivery", "demo", "bringup")
# A backticked text that starts with one of these and a slash is a path in the repository.
TOP_FOLDERS = (*PACKAGES, "templates", "static", "tests", "bench", "docs", "examples", ".ci")
TOP_FILES = ("pyproject.toml", "Makefile", "manage.py", "README.md")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
IDENTIFIER = re.compile(r"@?([A-Za-z_]\w*)(?:\(\))?")
FILE_NAME = re.compile(r"[\w.-]+\.(?:py|html|js|md|yaml|toml|png)|\w+/")
# Bare names the page borrows from Django, DRF, Celery, PostgreSQL and import-linter: not ours to define.
OUTSIDE_NAMES = frozenset({
    "COPY", "RawSQL", "TextChoices", "ValidationError", "acyclic_siblings", "clean_fields", "executemany",
    "full_clean", "layers", "non_field_errors", "post_save", "pre_save", "task_postrun",
})


# --- names ------------------------------------------------------------------------------------------------


def code_spans(markdown: str) -> list[str]:
    """The inline code spans of `markdown`, fenced blocks left out."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    return [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]


def make_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return set(re.findall(r"^([A-Za-z][\w-]*):", text, flags=re.MULTILINE))


@cache
def defined_names() -> set[str]:
    """Every name our code defines (functions, classes, methods, assigned names), every module's name, and the
    packages: what a bare name in backticks may be."""
    names = set(PACKAGES)
    for package in (*PACKAGES, "tests"):
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            names.add(path.stem)
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(node.name)
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def file_name_exists(name: str) -> bool:
    """A bare file name (`access_samples.py`) or folder name (`api/`) that some file or folder of ours has."""
    folders = [ROOT / top for top in TOP_FOLDERS if (ROOT / top).is_dir()]
    if name.endswith("/"):
        return any(path.is_dir() for top in folders for path in top.rglob(name.rstrip("/")))
    return any(True for top in folders for _ in top.rglob(name)) or (ROOT / name).is_file()


def dotted_name_exists(name: str) -> bool:
    """A module (found without importing it), an attribute of the longest module the name starts with, or an
    `app_label.Model`."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):  # a parent that is a module, not a package
            found = False
        if found:
            break
    else:
        return False
    thing = importlib.import_module(module) if parts[cut:] else None
    for attribute in parts[cut:]:
        if not hasattr(thing, attribute):
            thing = None
            break
        thing = getattr(thing, attribute)
    if thing is not None or not parts[cut:]:
        return True
    if len(parts) == 2:
        from django.apps import apps

        try:
            apps.get_model(parts[0], parts[1])
            return True
        except LookupError:
            return False
    return False


def name_problems(markdown: str) -> tuple[list[str], int]:
    """What `markdown` names in backticks that does not exist, and how many names were checked."""
    from django.core.management import get_commands

    commands, targets, defined = set(get_commands()), make_targets(), defined_names()
    problems, checked = [], 0
    for span in code_spans(markdown):
        words = span.split()
        if words[0] == "manage.py" and len(words) > 1:
            checked += 1
            if words[1] not in commands:
                problems.append(f"`{span}`: no management command {words[1]!r}")
        elif words[0] == "make" and len(words) > 1:
            checked += 1
            if words[1] not in targets:
                problems.append(f"`{span}`: no make target {words[1]!r}")
        elif span in TOP_FILES or (span.split("/")[0] in TOP_FOLDERS and "/" in span):
            if "<" in span or "*" in span:  # a pattern (`templates/<app>/`), not a path
                continue
            checked += 1
            if not (ROOT / span).exists():
                problems.append(f"`{span}`: no such file or folder")
        elif (dotted := DOTTED.match(span)) and dotted.group(0).split(".")[0] in PACKAGES:
            if dotted.end() < len(span) and span[dotted.end()] != "(":
                continue  # a dotted name inside other text (`validation.checkrun/12/`...)
            checked += 1
            if not dotted_name_exists(dotted.group(0)):
                problems.append(f"`{span}`: no such module, attribute or model")
        elif FILE_NAME.fullmatch(span):
            checked += 1
            if not file_name_exists(span):
                problems.append(f"`{span}`: no file or folder of that name")
        elif bare := IDENTIFIER.fullmatch(span):
            checked += 1
            if bare.group(1) not in defined | commands | OUTSIDE_NAMES:
                problems.append(f"`{span}`: no function, class, name, module or command of ours is called that")
    return problems, checked


def test_every_app_module_file_and_command_the_architecture_page_names_exists():
    problems, checked = name_problems(ARCHITECTURE.read_text(encoding="utf-8"))
    assert not problems, "docs/architecture.md names what does not exist:\n" + "\n".join(problems)
    assert checked > 150, f"only {checked} names checked: the checker reads less than the page names"


@pytest.mark.parametrize("planted", [
    "`cabling.swaps.no_such_module`",
    "`core.jobs.no_such_helper`",
    "`delivery.NoSuchModel`",
    "`delivery.top_floor`",
    "`delivery/no_such_feature/`",
    "`cabling/swaps/no_such_file.py`",
    "`manage.py no_such_command`",
    "`make no-such-target`",
    "`core.jobs.no_such_helper(\"validation.tasks.x\")`",
    "`no_such_helper_anywhere`",
    "`no_such_module_file.py`",
])
def test_the_name_check_fails_on_a_name_that_does_not_exist(planted):
    good = "`cabling.swaps.services`, `delivery/reports/`, `manage.py plan_fabric`, `delivery.ReportVersion`"
    assert name_problems(good) == ([], 4)
    problems, _ = name_problems(f"{good} and {planted}")
    assert len(problems) == 1 and planted.strip("`") in problems[0], problems


# --- sizes ------------------------------------------------------------------------------------------------


def line_count(text: str) -> int:
    return len(text.splitlines())


@pytest.mark.parametrize("path", LIMITS, ids=lambda path: path.name)
def test_the_readme_and_the_architecture_page_are_cut_to_size(path):
    assert line_count(path.read_text(encoding="utf-8")) <= LIMITS[path], f"{path.name} is over {LIMITS[path]} lines"


def test_the_size_check_counts_lines():
    assert line_count("a\n" * 200) == 200 and line_count("a\n" * 201) > LIMITS[README]


def test_the_docs_by_audience_exist():
    assert [name for name in AUDIENCE_DOCS if not (DOCS / name).is_file()] == []


# --- links ------------------------------------------------------------------------------------------------


def heading_anchors(markdown: str) -> set[str]:
    """The anchors GitHub gives the headings of `markdown`: lower case, punctuation dropped, spaces as '-'."""
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", prose, flags=re.MULTILINE):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-"))
    return anchors


def broken_links(path: Path, markdown: str) -> list[str]:
    """The relative links (and images) of `markdown`, a file at `path`, whose file or heading does not exist."""
    broken = []
    prose = re.sub(r"^```.*?^```", "", markdown, flags=re.MULTILINE | re.DOTALL)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", prose):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{path.name}: {target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in heading_anchors(linked.read_text(encoding="utf-8")):
            broken.append(f"{path.name}: {target} (no such heading)")
    return broken


def markdown_files() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def test_every_relative_link_of_the_docs_reaches_a_file_that_exists():
    broken = [problem for path in markdown_files() for problem in broken_links(path, path.read_text(encoding="utf-8"))]
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("planted", [
    "[the floor](docs/no-such-guide.md)",
    "![a picture](docs/img/no-such-picture.png)",
    "[the floors](docs/architecture.md#no-such-heading)",
    "[above](#no-such-section)",
])
def test_the_link_check_fails_on_a_link_to_nothing(planted):
    good = "# Bringup\n[architecture](docs/architecture.md#the-floors), [up](#bringup), [web](https://example.com)\n"
    assert broken_links(README, good) == []
    assert len(broken_links(README, good + planted + "\n")) == 1


# --- pure modules -----------------------------------------------------------------------------------------


def pure_contract_modules() -> set[str]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["type"] == "forbidden" and "django" in c["forbidden_modules"]]
    return set(contract["source_modules"])


def pure_modules_listed(markdown: str) -> set[str]:
    """The modules named first on each item of the list between `<!-- pure-modules` and `<!-- /pure-modules -->`."""
    found = re.search(r"<!-- pure-modules.*?-->(.*?)<!-- /pure-modules -->", markdown, flags=re.DOTALL)
    assert found, "docs/architecture.md has no <!-- pure-modules --> list"
    return set(re.findall(r"^- `([\w.]+)`", found.group(1), flags=re.MULTILINE))


def test_the_architecture_page_lists_exactly_the_pure_contract_modules():
    assert pure_modules_listed(ARCHITECTURE.read_text(encoding="utf-8")) == pure_contract_modules()


def test_the_pure_list_check_sees_a_module_missing_or_added():
    listed = sorted(pure_contract_modules())
    page = "<!-- pure-modules -->\n" + "".join(f"- `{name}`: what\n" for name in listed[1:]) + "<!-- /pure-modules -->"
    assert pure_modules_listed(page) != pure_contract_modules()  # one left out
    page = page.replace("<!-- /pure", f"- `{listed[0]}`: what\n- `cabling.codes`: what\n<!-- /pure")
    assert pure_modules_listed(page) == pure_contract_modules() | {"cabling.codes"}  # one too many


# --- environment variables --------------------------------------------------------------------------------

ENV_READERS = ("env_bool", "env_list", "getenv")  # settings.py's helpers, and os.getenv


def environment_variables(source: str) -> set[str]:
    """The names `source` reads from the environment: os.environ.get("X"), os.environ["X"], os.getenv("X"),
    and settings' env_bool("X", ...) / env_list("X")."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            function = node.func
            called = getattr(function, "attr", getattr(function, "id", ""))
            on_environ = isinstance(function, ast.Attribute) and getattr(function.value, "attr", "") == "environ"
            if (called == "get" and on_environ) or called in ENV_READERS:
                names.add(node.args[0].value)
        elif isinstance(node, ast.Subscript) and getattr(node.value, "attr", "") == "environ" \
                and isinstance(node.slice, ast.Constant):
            names.add(node.slice.value)
    names.discard("DJANGO_SETTINGS_MODULE")  # set by manage.py, wsgi.py and celery.py themselves, not a setting
    return names


def undocumented(names: set[str], markdown: str) -> set[str]:
    return {name for name in names if f"`{name}`" not in markdown}


def settings_variables() -> set[str]:
    return set().union(*(environment_variables((ROOT / "bringup" / name).read_text(encoding="utf-8"))
                         for name in ("settings.py", "celery.py")))


def test_every_environment_variable_the_settings_read_is_documented_in_operations():
    names = settings_variables()
    assert len(names) > 40, names  # the reader sees what settings.py reads
    missing = undocumented(names, OPERATIONS.read_text(encoding="utf-8"))
    assert not missing, f"docs/operations.md does not document {sorted(missing)}"


def test_the_environment_check_sees_every_way_of_reading_one():
    source = (
        "import os\n"
        "A = os.environ.get('BRINGUP_A', '1')\n"
        "B = os.environ['BRINGUP_B']\n"
        "C = os.getenv('BRINGUP_C')\n"
        "D = env_bool('BRINGUP_D', False)\n"
        "E = env_list('BRINGUP_E')\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'bringup.settings')\n"
    )
    names = environment_variables(source)
    assert names == {"BRINGUP_A", "BRINGUP_B", "BRINGUP_C", "BRINGUP_D", "BRINGUP_E"}
    assert undocumented(names, "`BRINGUP_A`, `BRINGUP_B`, `BRINGUP_C`, `BRINGUP_D`") == {"BRINGUP_E"}
