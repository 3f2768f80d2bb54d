"""The signal the domain apps send and delivery listens to, so that nothing below delivery imports it.

`evidence_changed` says "something a stage's gate reads has changed in this project": a check run
finished, a scan verified a cable or racked a device, a cable's status moved, a topology comparison
landed. Senders call `evidence_changed_send` from their services with the project's id; delivery
(delivery.apps) recomputes the project's gates in a task once the transaction commits, so a
rolled-back write asks for nothing and a page view never recomputes anything.

(A module of its own rather than projects/signals.py, which holds the API token's receivers.)
"""

from django.dispatch import Signal

# Sent with project_id (int) and what (a short word for the log: "check_run", "scan", "cable", ...).
evidence_changed = Signal()


def evidence_changed_send(*, project_id: int, what: str) -> None:
    """Send `evidence_changed` for `project_id` (senders call this rather than Signal.send, so the
    arguments stay the same everywhere)."""
    evidence_changed.send(sender=None, project_id=project_id, what=what)
