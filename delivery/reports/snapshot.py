"""Writing a version's snapshot (the projects.reports format): the meta record delivery owns (the report, the
project, the integrator, the cluster's counts), then every registered section in order.

The snapshot is the report: both renderers read it and nothing else, so a version re-rendered later says
what it said the day it was made, whatever the database holds now.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from django.db.models import Q

from cabling.models import Cable
from delivery.models import ReportVersion
from delivery.reports.acceptance import ADDENDUM, ADDENDUM_ORDER, addendum_section, addendum_title
from delivery.reports.sections import person
from inventory.choices import DeviceRole, HardwareKind, Network, PortKind
from inventory.models import Device, Optic, Port, Rack
from projects.models import Project
from projects.reports import SnapshotWriter, json_scalar, report_registry

SWITCH_ROLES = (DeviceRole.LEAF, DeviceRole.SPINE, DeviceRole.SUPER_SPINE, DeviceRole.MGMT_SWITCH)
SWITCH_KINDS = (HardwareKind.IB_SWITCH, HardwareKind.ETH_SWITCH, HardwareKind.MGMT_SWITCH)
COMPUTE_PORT_KINDS = (PortKind.INFINIBAND, PortKind.ETHERNET)  # an InfiniBand or a RoCE fabric


class SectionFailed(RuntimeError):
    """A section's provider raised: the message names the section, so the failed job says which."""


def _gpu_nodes():
    return Q(role=DeviceRole.GPU_NODE) | Q(hardware_model__kind=HardwareKind.GPU_SERVER)


def cluster_counts(project: Project) -> dict[str, int]:
    """The cover's figures, one count each. GPUs are the GPU nodes' physical compute-fabric ports (InfiniBand or
    RoCE): the rail-optimised mapping the checks use (validation.cluster.Rail: rail i is GPU i); optics count
    those seated in a port."""
    nodes = Device.objects.filter(project=project).filter(_gpu_nodes())
    return {
        "racks": Rack.objects.filter(project=project).count(),
        "servers": nodes.count(),
        "gpus": Port.objects.filter(device__in=nodes.values("pk"), parent__isnull=True, network=Network.COMPUTE,
                                    kind__in=COMPUTE_PORT_KINDS).count(),
        "switches": Device.objects.filter(project=project).filter(
            Q(role__in=SWITCH_ROLES) | Q(hardware_model__kind__in=SWITCH_KINDS)).count(),
        "cables": Cable.objects.filter(project=project, removed_from_plan=False).count(),
        "optics": Optic.objects.filter(project=project, port__isnull=False).count(),
    }


def snapshot_meta(*, project: Project, version: ReportVersion) -> dict:
    """The meta record (the contract in projects/reports.py and the common brief), without its "t"/"schema"."""
    who = version.requested_by
    return {
        "report": {
            "id": str(version.report_id),
            "version": version.number,
            "generated_at": json_scalar(version.generated_at),
            "generated_by": person(who.first_name, who.last_name, who.username) if who else "",
        },
        "project": {
            "code": project.code, "name": project.name, "name_zh": project.name_zh,
            "customer_name": project.customer_name, "customer_name_zh": project.customer_name_zh,
            "site": project.site, "status": project.status,
            "start_date": json_scalar(project.start_date), "target_date": json_scalar(project.target_date),
        },
        "integrator": {"name": settings.INTEGRATOR_NAME, "name_zh": settings.INTEGRATOR_NAME_ZH},
        "cluster": cluster_counts(project),
    }


@dataclass(frozen=True)
class SnapshotWritten:
    rows: int  # table rows written, all sections together
    sections: tuple[str, ...]  # the keys of the sections written, in order (providers returning None left out)


def snapshot_write(*, project: Project, version: ReportVersion, target: IO[bytes],
                   on_progress: Callable[[int], None] | None = None) -> SnapshotWritten:
    """Write the snapshot of `version` to `target` (a binary file object): the meta record, then (for an
    as-built addendum) the changes since the acceptance, then every registered section in order.
    `on_progress(rows)` is told how many table rows are written so far. A provider that raises stops the
    snapshot with SectionFailed naming its section."""
    written = 0

    def counted(rows: int) -> None:
        nonlocal written
        written += rows
        if on_progress:
            on_progress(written)

    writer = SnapshotWriter(target, on_rows=counted)
    writer.meta(snapshot_meta(project=project, version=version))
    keys = []
    if version.addendum_to_id is not None:  # an as-built addendum opens with what changed since the acceptance
        _addendum_write(writer, version)
        keys.append(ADDENDUM)
    for registered in report_registry.sections():
        try:
            section = registered.provider(project)
            if section is None:
                continue
            writer.section(registered.key, registered.title, registered.order, section)
        except Exception as exc:
            raise SectionFailed(f"The {registered.title} section ({registered.key}) could not be written: "
                                f"{exc.__class__.__name__}: {exc}") from exc
        keys.append(registered.key)
    writer.close()
    return SnapshotWritten(rows=written, sections=tuple(keys))


def _addendum_write(writer: SnapshotWriter, version: ReportVersion) -> None:
    title = addendum_title(version.addendum_to.number)
    try:
        writer.section(ADDENDUM, title, ADDENDUM_ORDER, addendum_section(version))
    except Exception as exc:
        raise SectionFailed(f"The {title} section ({ADDENDUM}) could not be written: "
                            f"{exc.__class__.__name__}: {exc}") from exc
