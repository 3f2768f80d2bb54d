"""The access matrix's samples for the activity feed (tests/access_world.py): /p/<code>/activity/ takes only
the project's code; the stages it makes give the feed something to list. (/account/notifications/ is not
under /p/<code>/: its outsider and role cases are tests/delivery/test_notifications.py's.)"""

from __future__ import annotations

from delivery.stages.services import stages_create_from_template


def samples(project) -> dict[str, dict]:
    stages_create_from_template(project=project)
    return {}
