"""The NetBox push task: thin, it takes the row's id and calls the service; safe to run twice."""

from celery import shared_task

from delivery.handover.services import PUSH_TASK, netbox_push_run


@shared_task(name=PUSH_TASK, acks_late=True)
def netbox_push(push_id: int) -> str:
    """Run a NetBox push (dry run or apply) recorded on its row."""
    return netbox_push_run(push_id=push_id).status
