"""The check-kind table: every CheckKind and the module that says what it does (validation.kinds.base.Kind).

Adding a kind is one module here that declares its `KIND` and one line in `KINDS` below (and its value
in validation.choices.CheckKind, which the database column holds); the services, the pages, the forms
and the API find it through `kind_of` and STARTABLE_CHECK_KINDS.
"""

from __future__ import annotations

from ..choices import CheckKind
from . import bw_matrix, cpu_bw, gpu_rdma, link_health, lossless, nccl, node_inventory, port_state, soak, topology
from .base import Kind, Measurement, Option, Target, TargetInputs

KINDS: dict[str, Kind] = {
    entry.kind: entry
    for entry in (
        link_health.KIND,
        cpu_bw.KIND,
        gpu_rdma.KIND,
        bw_matrix.KIND,
        nccl.KIND,
        node_inventory.KIND,
        soak.KIND,
        port_state.KIND,
        topology.KIND,
        lossless.KIND,
    )
}


# Kinds a person starts as a run of targets (the others come from uploads or soak windows), in the
# order of CheckKind: what the start form and the API offer.
STARTABLE_CHECK_KINDS = tuple(kind for kind in CheckKind if KINDS[kind].startable)


def kind_of(kind: str) -> Kind:
    """The kind's entry in the table; KeyError for a value that is not a check kind."""
    return KINDS[kind]


__all__ = ["KINDS", "STARTABLE_CHECK_KINDS", "Kind", "Measurement", "Option", "Target", "TargetInputs", "kind_of"]
