"""Reads of the floor's API: scan events and cables with everything their answers show (each end's rack,
U, device, port, optic and who confirmed it), scoped to what the user may see, in a fixed number of
queries whatever the number of rows. The scan's own reads of the same (a cable's ends, the cable locked, a device
with its place) are written out in cabling.sql, each held to what END_RELATIONS loads by tests/cabling/test_sql.py."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from projects.access import scope_to_user

from .models import Cable, CableEnd, ScanEvent

# What an end shows: its port, the device with its rack and model (for the top U), who confirmed it.
END_RELATIONS = ("port__device__rack", "port__device__hardware_model", "confirmed_by")


def ends_for_answers() -> QuerySet[CableEnd]:
    return CableEnd.objects.select_related(*END_RELATIONS).order_by("side", "position")


def with_ends(cables: QuerySet[Cable], prefix: str = "") -> QuerySet:
    """Prefetch each cable's ends into `end_list` (one query for all of them)."""
    return cables.prefetch_related(Prefetch(f"{prefix}ends", queryset=ends_for_answers(), to_attr="end_list"))


def cable_list_for_api(*, user) -> QuerySet[Cable]:
    """Every cable the user may see, with its ends (2 queries a page), in label order."""
    cables = scope_to_user(Cable.objects.all(), user).select_related("verified_by")
    return with_ends(cables).order_by("label", "pk")


def scan_list_rows() -> QuerySet[ScanEvent]:
    """Scan events with what each resolved to: its device (rack, model), optic (its port), port, cable and
    its ends (2 queries for any number of events). Not scoped: scan_list is, for the API's lists."""
    scans = ScanEvent.objects.select_related(
        "project", "user", "device__rack", "device__hardware_model", "device__racked_by", "optic__port__device",
        "optic__installed_by", "port__device", "cable__verified_by",
    )
    return scans.prefetch_related(Prefetch("cable__ends", queryset=ends_for_answers(), to_attr="end_list"))


def scan_list(*, user) -> QuerySet[ScanEvent]:
    """Every scan the user may see, newest first, with what each resolved to (scan_list_rows)."""
    return scope_to_user(scan_list_rows(), user).order_by("-created_at", "-id")
