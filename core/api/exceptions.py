"""The one error shape of the API, whatever raised the error.

- 400: the fields at fault under their names, everything else (a body that is not JSON included) under
  `non_field_errors`:
  `{"serial": ["Already used by gpu-017."], "non_field_errors": ["The rack is full."]}`.
- Every other client error: `{"detail": "..."}` (401, 403, 404, 405, 409, 413, 415, 429).

A service refuses with Django's ValidationError; views and serializers let it rise and this handler
turns it into that 400, so no view translates errors by hand. Django's PermissionDenied and Http404
get DRF's 403 and 404.
"""

from __future__ import annotations

import re
from contextlib import contextmanager

from django.core.exceptions import NON_FIELD_ERRORS, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from rest_framework import exceptions, serializers
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from .parsers import RequestTooLarge

NON_FIELD_KEY = api_settings.NON_FIELD_ERRORS_KEY  # "non_field_errors"


def validation_detail(exc: DjangoValidationError) -> dict[str, list[str]]:
    """A Django ValidationError as the 400 body: keyed by field, the rest under non_field_errors."""
    if hasattr(exc, "error_dict"):
        detail = {}
        for field, errors in exc.error_dict.items():
            key = NON_FIELD_KEY if field in (NON_FIELD_ERRORS, None) else field
            detail.setdefault(key, []).extend(m for e in errors for m in e.messages)
        return detail
    return {NON_FIELD_KEY: list(exc.messages)}


def as_api_error(exc: DjangoValidationError) -> exceptions.ValidationError:
    return exceptions.ValidationError(validation_detail(exc))


def exception_handler(exc, context):
    """REST_FRAMEWORK["EXCEPTION_HANDLER"]: DRF's handler, after mapping Django's ValidationError and
    Django's refusal of an oversized body (otherwise an HTML page), and with a 400 that came as a bare
    list put under non_field_errors."""
    if isinstance(exc, DjangoValidationError):
        exc = as_api_error(exc)
    elif isinstance(exc, RequestDataTooBig):
        exc = RequestTooLarge(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is not None and response.status_code == 400:
        if isinstance(response.data, list):
            response.data = {NON_FIELD_KEY: response.data}
        elif isinstance(response.data, dict) and set(response.data) == {"detail"}:  # a body DRF could not parse
            response.data = {NON_FIELD_KEY: [response.data["detail"]]}
    return response


# "UNIQUE constraint failed: inventory_rack.project_id, inventory_rack.name" (SQLite) or
# "DETAIL:  Key (project_id, name)=(1, R1) already exists." (PostgreSQL): the columns at fault.
_INTEGRITY_COLUMNS = re.compile(r"(?:constraint failed: ([^\n]+))|(?:Key \(([^)]+)\)=)")


def blamed_field(exc: IntegrityError, fields) -> str:
    """The serializer field an integrity error is about: the last offending column that the payload
    sets (project_id, name -> name), or the non-field key."""
    match = _INTEGRITY_COLUMNS.search(str(exc))
    if match:
        columns = [c.strip().rsplit(".", 1)[-1] for c in (match.group(1) or match.group(2)).split(",")]
        for column in reversed(columns):
            name = column.removesuffix("_id")
            if name in fields and name != "project":
                return name
    return NON_FIELD_KEY


@contextmanager
def django_errors_as_400(fields):
    """For serializers that save models: the model layer's refusals as the 400 above, and a unique
    constraint lost to a race (the same rules are checked first in full_clean) blamed on its field."""
    try:
        yield
    except DjangoValidationError as exc:
        raise as_api_error(exc) from exc
    except IntegrityError as exc:
        message = "Conflicts with a row saved at the same moment; retry."
        raise serializers.ValidationError({blamed_field(exc, fields): [message]}) from exc
