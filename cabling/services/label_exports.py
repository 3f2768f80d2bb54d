"""Label sheet exports: a label sheet too large for one download (up to the whole fabric) rendered by a
task into a file on a LabelSheetExport row (a core.models.Job), which the page polls and then serves."""

from __future__ import annotations

import logging
import tempfile

from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction

from core.choices import ACTIVE_JOB_STATUSES, JobStatus
from core.jobs import enqueue_on_commit, progress_reporter
from inventory.models import Rack
from projects.models import Project

from ..choices import LabelScope, LabelStockName
from ..exports.labels_pdf import STOCKS, write_labels
from ..models import LabelSheetExport
from ..selectors import end_count, label_export_cables

logger = logging.getLogger(__name__)

# Sent by name (core.jobs): cabling.tasks imports this module, so importing the task back would be a cycle.
RENDER_LABELS_TASK = "cabling.tasks.render_label_sheet"


@transaction.atomic
def label_sheet_export_start(
    *, project: Project, user, scope: str = LabelScope.ALL, rack: str = "", network: str = "",
    stock: str = LabelStockName.L7651,
) -> LabelSheetExport:
    """Queue the label sheet of the whole fabric, one rack (the ends in it) or one network (both ends of
    its cables), on one stock. A rack the project does not have is refused on `rack`."""
    export = LabelSheetExport(
        project=project, requested_by=user, scope=scope, rack=(rack or "").strip(), network=network or "",
        stock=stock, status=JobStatus.QUEUED,
    )
    export.full_clean()
    if export.scope == LabelScope.RACK and not Rack.objects.filter(project=project, name=export.rack).exists():
        raise ValidationError({"rack": f"This project has no rack {export.rack}."})
    export.save()
    enqueue_on_commit(RENDER_LABELS_TASK, export.pk)
    return export


def label_sheet_export_run(*, export_id: int) -> LabelSheetExport:
    """Render the export's PDF (the task's body) into its `output`, reporting progress on the row. Safe to
    run twice: an export that is done or failed is left alone, one still running (its worker was lost)
    is rendered again from the start; the file is only attached when the export is finished."""
    export = LabelSheetExport.objects.select_related("project").get(pk=export_id)
    if export.status not in ACTIVE_JOB_STATUSES:
        return export
    cables = label_export_cables(export=export)
    rack = export.rack or None
    if not (export.start(step="labels", total=end_count(cables, rack=rack)) or export.status == JobStatus.RUNNING):
        return export  # another worker took it between the read and the start
    try:
        name = _render(export, cables, rack)
    except Exception as exc:  # whatever went wrong, the row says so rather than stay "running"
        logger.exception("label sheet export %s failed", export.pk)
        export.fail(f"The label sheet could not be rendered ({exc.__class__.__name__}: {exc}).")
        return export
    if not export.finish(output=name):  # a second run finished first: keep its file, not this one
        export.output.storage.delete(name)
    return export


def _render(export: LabelSheetExport, cables, rack: str | None) -> str:
    """Write the PDF to a temporary file, then to storage; the stored name."""
    title = f"{export.project.code} cable labels, {export.scope_text}"
    with tempfile.TemporaryFile() as pdf, progress_reporter(export) as report:
        write_labels(pdf, cables, stock=STOCKS[export.stock], rack=rack, title=title, progress=report)
        pdf.seek(0)
        export.output.save(export.download_name, File(pdf), save=False)
    return export.output.name
