"""Delivery's models, one module per feature (stages, punch list, notifications, acceptance reports, NetBox
handover): the features' code imports them from here."""

from delivery.models.handover import NetBoxPush
from delivery.models.notifications import NotificationPreference
from delivery.models.punch import PUNCH_OBJECT_URLS, PunchItem, PunchSync
from delivery.models.reports import (
    CONTENT_TYPES,
    FILE_KINDS,
    FILE_SUFFIXES,
    ORIGINAL_FILE_KINDS,
    PDF_CONTENT_TYPE,
    SIGNED_FILE_KINDS,
    XLSX_CONTENT_TYPE,
    FileKind,
    ReportSignature,
    ReportVersion,
    report_file_path,
)
from delivery.models.stages import (
    RESERVED_KEYS,
    STAGE_FIELDS,
    STAGE_KEY,
    ChecklistItem,
    GateRecompute,
    Stage,
    StageTemplate,
    Waiver,
    stage_list_errors,
)

__all__ = [
    "CONTENT_TYPES",
    "FILE_KINDS",
    "FILE_SUFFIXES",
    "ORIGINAL_FILE_KINDS",
    "PDF_CONTENT_TYPE",
    "PUNCH_OBJECT_URLS",
    "RESERVED_KEYS",
    "SIGNED_FILE_KINDS",
    "STAGE_FIELDS",
    "STAGE_KEY",
    "XLSX_CONTENT_TYPE",
    "ChecklistItem",
    "FileKind",
    "GateRecompute",
    "NetBoxPush",
    "NotificationPreference",
    "PunchItem",
    "PunchSync",
    "ReportSignature",
    "ReportVersion",
    "StageTemplate",
    "Stage",
    "Waiver",
    "report_file_path",
    "stage_list_errors",
]
