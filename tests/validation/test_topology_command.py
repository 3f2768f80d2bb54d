"""`compare_topology --project CODE [HOST=]FILE... [--json]`: the counts and every faulty link with its
planned and observed ends and its cable; files named, HOST= for LLDP tables; the comparison kept."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from validation.choices import TopologySource
from validation.models import TopologyComparison

from .conftest import FIXTURES
from .test_topology_fixtures import cumulus_fabric
from .topology_support import sb7700_fabric

pytestmark = pytest.mark.django_db


def run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("compare_topology", *map(str, args), stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_json_counts_and_the_faulty_links_with_both_ends_and_the_cable(project):
    cumulus_fabric(project)
    sb7700_fabric(project)
    lldp = FIXTURES / "lldpcli_show_neighbors_01_cumulus41_doc.txt"
    ib = FIXTURES / "iblinkinfo_02_edr_sb7700_down_polling.txt"
    out, err = run("--project", project.code, "--json", f"TORC-1-1={lldp}", ib)
    data = json.loads(out)
    assert {k: data[k] for k in ("ok", "missing", "miswired", "unplanned", "degraded")} == {
        "ok": 7, "missing": 2, "miswired": 2, "unplanned": 1, "degraded": 0}
    assert len(data["links"]) == 5 and err == ""
    swapped = next(link for link in data["links"] if link["cable"] == "T3")
    assert swapped == {
        "state": "miswired", "cable": "T3", "planned": {"a": "TORC-1-1:p3", "b": "MSP-2:p2"},
        "observed": {"a": "TORC-1-1:p3", "b": "MSP-2:p1"},
        "note": "planned to MSP-2:p2, found on MSP-2:p1 (where T4 belongs); swapped with T4",
        "advice": "Swap the cables in MSP-2 ports p1 and p2.", "change": "new",
    }
    missing = next(link for link in data["links"] if link["cable"] == "C4")
    assert (missing["planned"], missing["observed"]) == ({"a": "n03:ib0", "b": "SB7700:p1"}, None)
    unplanned = next(link for link in data["links"] if link["state"] == "unplanned")
    assert unplanned["cable"] is None and unplanned["planned"] is None
    comparison = TopologyComparison.objects.get(pk=data["comparison"])
    assert comparison.source == TopologySource.COMMAND and comparison.requested_by is None
    assert sorted(comparison.files.values_list("original_name", "host", "tool")) == [
        ("iblinkinfo_02_edr_sb7700_down_polling.txt", "n01", "iblinkinfo"),  # the capture's own prompt
        ("lldpcli_show_neighbors_01_cumulus41_doc.txt", "TORC-1-1", "lldp"),
    ]


def test_text_summary_names_a_bad_file_with_its_line_and_compares_the_rest(project, tmp_path):
    sb7700_fabric(project)
    bad = tmp_path / "SB7700.txt"
    bad.write_text("garbage\nmore garbage\n")
    out, err = run("--project", project.code, FIXTURES / "iblinkinfo_02_edr_sb7700_down_polling.txt", bad)
    assert out.startswith(f"Topology comparison #{TopologyComparison.objects.get().pk} of ACME-72: 3 ok, 1 missing")
    assert "missing   C4" in out and "Check C4 at both ends" in out
    assert err.strip() == ("SB7700.txt: line 1: could not tell which tool produced this output; expected the output "
                           "of one of: " + err.split("one of: ", 1)[1].strip())


def test_nothing_readable_fails_and_says_why(project, tmp_path):
    sb7700_fabric(project)
    bad = tmp_path / "x.txt"
    bad.write_text((FIXTURES / "nccl_allreduce_01.txt").read_text())
    with pytest.raises(CommandError, match="No file could be read"):
        run("--project", project.code, bad)
    with pytest.raises(CommandError, match="No project 'NOPE'"):
        run("--project", "NOPE", bad)
    with pytest.raises(CommandError, match="cannot read the file"):
        run("--project", project.code, tmp_path / "absent.txt")


def test_a_file_past_the_size_limit_is_refused_after_reading_one_byte_more(project, tmp_path, settings):
    """/dev/zero never ends: the command reads the limit and one byte, then refuses, comparing nothing."""
    sb7700_fabric(project)
    settings.TOPOLOGY_MAX_FILE_BYTES = 4096
    with pytest.raises(CommandError, match=r"/dev/zero: larger than 4,096 bytes .*nothing was compared"):
        run("--project", project.code, "/dev/zero")
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * 4097)
    with pytest.raises(CommandError, match="big.txt: larger than 4,096 bytes"):
        run("--project", project.code, big)
    assert not TopologyComparison.objects.exists()
