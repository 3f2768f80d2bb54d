"""The floors hold (docs/architecture.md): the import-linter contracts of pyproject.toml are kept, and they
do catch what they forbid. The second test plants one violation per contract in a copy of the tree, so
the repository itself is never touched, and expects every contract to name its planted import."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
CONTRACTS = {contract["type"]: contract["name"] for contract in CONFIG["contracts"]}

# One violation per contract, written into a copy of the tree: (file, text appended, contract, what the
# contract's report must name). Imports inside functions on purpose: the contracts count them too. Every floor
# gets an import of the floor above it, so the layers contract is shown to hold at each of them.
FLOORS = ["core", "projects", "inventory", "cabling", "validation", "delivery", "demo", "bringup"]
UPWARD = [
    (f"{floor}/_planted_upward.py", f"def planted():\n    from {above} import {module}  # noqa\n", CONTRACTS["layers"],
     f"{floor}._planted_upward -> {above}.{module}")
    for floor, above in zip(FLOORS, FLOORS[1:], strict=False)
    for module in ["urls" if above == "bringup" else "apps"]
]
PLANTS = [
    *UPWARD,
    ("cabling/planner/_planted_django.py", "import django  # noqa\n",
     "The planner, the parsers and the criteria are pure Python: no Django, no database, no broker",
     "cabling.planner._planted_django -> django"),
    ("validation/_planted_a.py", "from validation import _planted_b  # noqa\n", CONTRACTS["acyclic_siblings"],
     "._planted_b -> ._planted_a"),
    ("validation/_planted_b.py", "def planted():\n    from validation import _planted_a  # noqa\n", None, None),
]


def lint_imports(cwd: Path) -> subprocess.CompletedProcess:
    """`lint-imports` on the tree in `cwd` (its packages are found there first), with no cache left behind
    and lines wide enough that no contract name is wrapped."""
    command = [sys.executable, "-c", "from importlinter.cli import lint_imports_command; lint_imports_command()",
               "--no-cache"]
    env = {**os.environ, "COLUMNS": "400", "NO_COLOR": "1", "PYTHONPATH": str(cwd)}
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)


def broken_sections(output: str) -> dict[str, str]:
    """The report of each broken contract, by contract name."""
    _, _, broken = output.partition("Broken contracts")
    names = [c["name"] for c in CONFIG["contracts"]]
    starts = sorted((broken.find(f"\n{name}\n"), name) for name in names if f"\n{name}\n" in broken)
    sections = {}
    for (start, name), (end, _) in zip(starts, [*starts[1:], (len(broken), "")], strict=True):
        sections[name] = broken[start:end]
    return sections


def test_the_floors_are_one_stack_of_every_app_with_no_ignored_import():
    layers = next(contract for contract in CONFIG["contracts"] if contract["type"] == "layers")
    assert layers["layers"] == list(reversed(FLOORS))
    assert set(CONFIG["root_packages"]) == set(FLOORS)
    assert all("ignore_imports" not in contract for contract in CONFIG["contracts"])


def test_the_contracts_are_kept():
    result = lint_imports(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"Contracts: {len(CONFIG['contracts'])} kept, 0 broken." in result.stdout


def test_a_planted_violation_breaks_each_contract_by_name(tmp_path):
    assert {plant[2] for plant in PLANTS if plant[2]} == {c["name"] for c in CONFIG["contracts"]}, (
        "a contract without a planted violation here: add one to PLANTS"
    )
    for package in CONFIG["root_packages"]:
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    for path, text, _, _ in PLANTS:
        with (tmp_path / path).open("a", encoding="utf-8") as planted:
            planted.write(text)

    result = lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    sections = broken_sections(result.stdout)
    for path, _, contract, named in PLANTS:
        if contract is None:
            continue
        assert contract in sections, f"{path} did not break {contract!r}:\n{result.stdout}"
        assert named in sections[contract], f"{contract!r} does not name {named!r}:\n{sections[contract]}"

