"""The access matrix's samples for the handover pages (tests/access_world.py): a finished NetBox dry run of
the project, whose page only managers read (the download and the page itself take no URL kwargs)."""

from __future__ import annotations

from django.utils import timezone

from core.choices import JobStatus
from delivery.models import NetBoxPush


def samples(project) -> dict[str, dict]:
    push = NetBoxPush.objects.create(
        project=project, netbox_url="https://netbox.example.com", status=JobStatus.DONE, finished_at=timezone.now(),
        summary={"steps": [{"key": "sites", "title": "Sites", "create": 1, "update": 0, "unchanged": 0,
                            "examples": {"create": ["Hall 1"], "update": []}}], "applied": False},
    )
    return {"delivery:handover:push-detail": {"pk": push.pk}}
