"""`manage.py plan_fabric SPEC --dry-run --json` prints the counts scripts check, for the three
reference fabrics and the demo, with no project and no database (these tests have no `db` fixture,
so pytest-django refuses any query); without --dry-run it needs --project; a spec beyond the planner's
caps or its tiers is refused at once, naming the field."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def dry_run_json(name: str) -> dict:
    out = StringIO()
    call_command("plan_fabric", str(EXAMPLES / name), "--dry-run", "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize(
    ("name", "switches", "links", "planes", "cables"),
    [
        ("fabric-72.yaml", {"leaf": 8, "spine": 4, "super_spine": 0}, 1152, 4, 1152),
        ("fabric-256.yaml", {"leaf": 64, "spine": 32, "super_spine": 0}, 4096, 1, 4096),
        ("fabric-1024.yaml", {"leaf": 256, "spine": 128, "super_spine": 0}, 32768, 2, 24576),
    ],
)
def test_dry_run_json_of_the_reference_fabrics(name, switches, links, planes, cables):
    data = dry_run_json(name)
    assert data["switches"] == {"compute": switches}
    assert data["links"] == {"compute": links}
    assert data["planes"] == {"compute": planes}
    assert data["cables"] == cables
    assert sum(line["count"] for line in data["bom"] if line["category"] == "cable") == cables
    switch_lines = [line for line in data["bom"] if line["category"] == "switch"]
    assert sum(line["count"] for line in switch_lines) == sum(switches.values())


def test_dry_run_json_of_the_demo():
    data = dry_run_json("demo-72.yaml")
    assert set(data["switches"]) == {"compute", "storage", "inband", "oob"}
    assert data["switches"]["compute"] == {"leaf": 8, "spine": 4, "super_spine": 0}
    assert data["links"]["compute"] == 1152 and data["planes"]["compute"] == 4
    assert data["cables"] == sum(data["cables_by_network"].values()) == 1152 + 312 + 144 + 103
    assert data["servers"] == 78


def test_dry_run_text_summary():
    out = StringIO()
    call_command("plan_fabric", str(EXAMPLES / "fabric-72.yaml"), "--dry-run", stdout=out)
    text = out.getvalue()
    assert "compute: 4 plane(s), 2 tiers: 8 leaves, 4 spines; 1152 links, 1152 cables, 1440 optics" in text
    assert "Q3400-RA (leaf)" in text


def test_without_dry_run_it_needs_a_project():
    """Applying (or comparing with) a project is plan_apply's job, which needs --project; without it the
    command says so and exits 1, having touched nothing (these tests have no database)."""
    with pytest.raises(CommandError, match=r"give --project CODE to compare or apply the plan, or --dry-run"):
        call_command("plan_fabric", str(EXAMPLES / "fabric-72.yaml"))
    run = subprocess.run(
        [sys.executable, "manage.py", "plan_fabric", "examples/fabric-72.yaml"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert "give --project CODE" in run.stderr


def test_a_bad_spec_is_a_clear_error_naming_the_field(tmp_path):
    spec = (EXAMPLES / "fabric-256.yaml").read_text().replace("scalable_unit: 32", "scalable_unit: 0")
    path = tmp_path / "bad.yaml"
    path.write_text(spec)
    with pytest.raises(CommandError, match=r"networks.compute.scalable_unit: expected a positive integer, got 0"):
        call_command("plan_fabric", str(path), "--dry-run", "--json")
    with pytest.raises(CommandError, match=r"missing.yaml: cannot read the spec"):
        call_command("plan_fabric", str(tmp_path / "missing.yaml"), "--dry-run")


def test_a_spec_too_large_is_refused_at_once(tmp_path):
    """300,000 servers once took 51 s and 600 MB to be told they do not fit: now the spec caps the count
    (naming the field), and within the caps "too large for the tiers" states the largest size that fits
    (said from the counts, before anything is built: see test_planner_reference)."""
    spec = (EXAMPLES / "fabric-256.yaml").read_text()
    path = tmp_path / "huge.yaml"
    path.write_text(spec.replace("count: 256", "count: 300000"))
    with pytest.raises(CommandError, match=r"servers\[0\].count: 300000 is more than the planner takes"):
        call_command("plan_fabric", str(path), "--dry-run", "--json")
    path.write_text(spec.replace("count: 256", "count: 16384").replace("tiers: 2", "tiers: auto"))
    with pytest.raises(CommandError, match=r"16384 servers do not fit in 3 tiers .* hold at most 8192 servers"):
        call_command("plan_fabric", str(path), "--dry-run", "--json")
