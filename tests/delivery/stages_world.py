"""A small project for the stage tests: two GPU nodes in rack A01 and a leaf in N01, a compute cable from
each node's first port to the leaf, built through the inventory service like any other project's rows."""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib.auth import get_user_model

from delivery.stages.services import stages_create_from_template
from inventory.choices import DeviceRole
from inventory.services import device_create
from tests.cabling.conftest import connect, ports_of, switch_model
from tests.factories import RackFactory, SiteFactory, gpu_server_model


def build_world(project) -> SimpleNamespace:
    site = SiteFactory(project=project, name="Hall 1")
    servers = RackFactory(project=project, site=site, name="A01", row="A", position=1, power_budget_w=40_000)
    network = RackFactory(project=project, site=site, name="N01", row="N", position=1, power_budget_w=10_000)
    gpu, switch = gpu_server_model(), switch_model()
    ns = SimpleNamespace(project=project, servers_rack=servers, network_rack=network)
    ns.gpu1 = device_create(project=project, hardware_model=gpu, name="gpu-001", rack=servers, position_u=1,
                            role=DeviceRole.GPU_NODE)
    ns.gpu2 = device_create(project=project, hardware_model=gpu, name="gpu-002", rack=servers, position_u=11,
                            role=DeviceRole.GPU_NODE)
    ns.leaf = device_create(project=project, hardware_model=switch, name="leaf-01", rack=network, position_u=1,
                            role=DeviceRole.LEAF)
    g1, g2, leaf = ports_of(ns.gpu1), ports_of(ns.gpu2), ports_of(ns.leaf)
    ns.c1 = connect(project, "C00001", g1["ib0"], leaf["p1"], speed=800)
    ns.c2 = connect(project, "C00002", g2["ib0"], leaf["p2"], speed=800)
    ns.devices = [ns.gpu1, ns.gpu2, ns.leaf]
    ns.stages = {s.key: s for s in stages_create_from_template(project=project)}
    return ns


def user_named(username: str):
    return get_user_model().objects.get(username=username)
