"""Fixtures for the validation engine's tests: a small GPU cluster built through the real inventory
service (so every node has 8 ConnectX-8 rails of 4 x 200G lanes, from the templates), and runs started
on it through the service."""

from pathlib import Path

import pytest

from inventory.choices import DeviceRole
from inventory.models import HardwareModel
from inventory.services import device_create
from tests.factories import gpu_server_model
from validation import services
from validation.choices import CheckKind

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tool-outputs"
SEED = 1  # the simulated runner's fault placement the tests expect


def fixture_text(name: str) -> str:
    """A real tool output, from tests/fixtures/tool-outputs (copied from other people's runs; see SOURCES.md)."""
    return (FIXTURES / name).read_text()


def two_plane_server_model(nics: int = 2) -> HardwareModel:
    """A GPU server whose 800G XDR NIC ports each run 2 x 400G, one per plane (DOMAIN.md's dual-plane
    reference fabric, on InfiniBand)."""
    return gpu_server_model(nics=nics, part_number="TEST-2PLANE", lanes=2, bmc=False, model_name="2-plane 8-GPU")


def make_gpu_nodes(project, count: int, *, prefix: str = "gpu", model=None):
    model = model or gpu_server_model()
    return [
        device_create(
            project=project, hardware_model=model, name=f"{prefix}-{i:03d}", role=DeviceRole.GPU_NODE
        )
        for i in range(1, count + 1)
    ]


@pytest.fixture
def gpu_nodes(project):
    """Four GPU nodes: enough for pairs, rounds and two NCCL groups."""
    return make_gpu_nodes(project, 4)


@pytest.fixture
def nodes(project):
    """Two GPU nodes: one pair, 16 ports."""
    return make_gpu_nodes(project, 2)


@pytest.fixture
def start(project, django_capture_on_commit_callbacks):
    """Start a run through the service; with `execute` (the default) its on-commit dispatch runs too, so
    eagerly the run has finished when this returns. Options default to the tests' seed."""

    def start_run(kind, *, user=None, execute=True, **options):
        options.setdefault("seed", SEED)
        with django_capture_on_commit_callbacks(execute=execute):
            run = services.check_run_start(project=project, kind=kind, requested_by=user, options=options)
        run.refresh_from_db()
        return run

    return start_run


@pytest.fixture
def link_run(start, nodes):
    """A finished link-health run on the two nodes: 16 ports, the seed's two faults."""
    return start(CheckKind.LINK_HEALTH)
