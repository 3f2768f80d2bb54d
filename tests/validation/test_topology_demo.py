"""DEMO-72's topology comparison, as seed_demo makes it (after the demo is built): the simulated fabric's
planted faults (a swapped pair, a cable on the wrong leaf, a link at half width, a missing link) are found,
and nothing else; a second call adds nothing."""

import pytest

from cabling.models import Cable
from demo.build import build_demo, demo_plan
from demo.checks import DEMO_SEED, demo_topology_ensure
from validation.choices import LinkState
from validation.cluster import sim_cluster_for
from validation.models import TopologyComparison, TopologyLink
from validation.runners.simfabric import plan_fabric_faults

pytestmark = pytest.mark.django_db


def test_the_demo_comparison_finds_every_planted_fault_and_nothing_else():
    build_demo()
    from projects.models import Project

    demo = Project.objects.get(code="DEMO-72")
    fabric = sim_cluster_for(demo, with_fabric=True).fabric
    planted = plan_fabric_faults(fabric, DEMO_SEED)
    assert planted.swapped and planted.wrong_leaf and planted.half_width and planted.missing
    comparison = demo_topology_ensure(demo)
    found = {link.key: link.state for link in comparison.links.exclude(state=LinkState.OK)}
    assert found == planted.expected()
    cables = len(demo_plan().cables)
    assert comparison.counts["in_scope"] == cables == Cable.objects.filter(project=demo).count()
    assert comparison.counts["ok"] == cables - 5 and comparison.counts["unplanned"] == 0
    swapped = comparison.links.filter(key__in=planted.swapped)
    one, other = (link.b for link in (fabric_link(fabric, key) for key in planted.swapped))
    assert {link.advice for link in swapped} == {f"Swap the cables in {one.device} ports {one.port} and {other.port}."}
    wrong = comparison.links.get(key=planted.wrong_leaf[0])
    assert wrong.observed_b == planted.wrong_leaf[1].text and wrong.planned_b == fabric_link(fabric, wrong.key).b.text
    assert "simulated faults: " in comparison.run.log
    rows = TopologyComparison.objects.count(), TopologyLink.objects.count()
    assert demo_topology_ensure(demo) is None
    assert (TopologyComparison.objects.count(), TopologyLink.objects.count()) == rows


def fabric_link(fabric, key):
    return next(link for link in fabric.links if link.key == key)
