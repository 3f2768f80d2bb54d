"""How a refusal names a person and a moment, in the technician's words: the floor reads these on a
tablet, so a user is their full name (else their username) and a time is the local date and minute."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone


def person(user) -> str:
    """'Tomas Ruiz', or the username of someone without a name; 'someone' for a deleted account."""
    if user is None:
        return "someone"
    return user.get_full_name() or user.get_username()


def moment(at: datetime | None) -> str:
    """'2026-12-03 14:05' in the site's time zone (settings.TIME_ZONE)."""
    if at is None:
        return "an unknown time"
    return timezone.localtime(at).strftime("%Y-%m-%d %H:%M")
