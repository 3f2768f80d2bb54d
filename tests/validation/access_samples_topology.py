"""Samples of the topology comparison pages for the access matrix: one finished comparison with a file and a
faulty link, in `project`. Written directly (nothing is compared), so the matrix stays fast."""

from __future__ import annotations

import hashlib

from django.core.files.base import ContentFile
from django.utils import timezone

from core.choices import JobStatus
from validation.choices import LinkState, TopologySource
from validation.models import TopologyComparison, TopologyFile, TopologyLink

DATA = b"CA: sample mlx5_0:\n"


def samples(project) -> dict[str, dict]:
    comparison = TopologyComparison.objects.create(
        project=project, source=TopologySource.PAGE, status=JobStatus.DONE, finished_at=timezone.now(),
        counts={"ok": 1, "missing": 1, "miswired": 0, "unplanned": 0, "degraded": 0}, changes={"new": 1},
    )
    row = TopologyFile(comparison=comparison, original_name="ib.txt", size_bytes=len(DATA),
                       sha256=hashlib.sha256(DATA).hexdigest(), tool="iblinkinfo")
    row.file.save("ib.txt", ContentFile(DATA), save=False)
    row.save()
    TopologyLink.objects.create(comparison=comparison, key="C1", state=LinkState.MISSING, cable_label="C1",
                                planned_a="a:p1", planned_b="b:p1", advice="Plug in C1.")
    return {
        "validation:topology-list": {},
        "validation:topology-new": {},
        "validation:topology-detail": {"pk": comparison.pk},
        "validation:topology-file": {"pk": comparison.pk, "file_pk": row.pk},
    }
