"""Cursor pagination for the API's big lists (ports, cables, cabled ports, devices, NICs, optics, scans).

Why a cursor: a page number is an OFFSET, and the database walks every row before it, so page 200 of the
ports of a 1,024-server fabric (103,000 rows) costs 200 times page 1, and a row added between two pages
shifts the next one. A cursor says "the rows after this one" in the list's ordering: with a unique,
indexed key (the id unless a list says otherwise), every page costs the same at any depth.

The contract, as the OpenAPI schema says it:
- the answer is `{"next": url | null, "previous": url | null, "results": [...]}`; follow `next` until it
  is null (there is no total count: counting every row is what the cursor saves);
- `?page_size=N` asks for N rows, 1 to MAX_PAGE_SIZE; a larger number gets MAX_PAGE_SIZE (capped, not
  refused, so a client asking for "everything" still pages); anything else (0, -1, "ten") is a 400 naming
  `page_size`;
- `?cursor=` takes only what a `next` or `previous` link holds: a cursor that is not one of ours, or names
  a position that cannot be in the list, is a 404 "Invalid cursor", never a 500.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.core.exceptions import FieldDoesNotExist
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models
from django.utils import timezone
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination

DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 500
PAGE_SIZE_PARAM = "page_size"
# A page size is ASCII digits only: int() would take odd input such as " 10" or "1_0". Up to 20 digits (any
# number a client could mean, 2**64 included) is capped at MAX_PAGE_SIZE; only a longer string is refused,
# so int() never has to read a number thousands of digits long.
PAGE_SIZE = re.compile(r"[0-9]{1,20}")
BIGINT_RANGE = (-(2**63), 2**63 - 1)  # what PostgreSQL's bigint and SQLite's integer hold


class BigListPagination(CursorPagination):
    """Cursor pages of `page_size` rows (DEFAULT_PAGE_SIZE unless asked, at most MAX_PAGE_SIZE), in
    `ordering`: its first field must be unique (or nearly) and indexed, since the cursor is a position
    in it. Subclass to change the ordering or the default page size (scans: newest first)."""

    ordering = ("id",)
    page_size = DEFAULT_PAGE_SIZE
    page_size_query_param = PAGE_SIZE_PARAM
    max_page_size = MAX_PAGE_SIZE
    page_size_query_description = (
        f"Rows per page, 1 to {MAX_PAGE_SIZE} (default {DEFAULT_PAGE_SIZE}); a larger number gets {MAX_PAGE_SIZE}."
    )
    cursor_query_description = (
        "Where the page starts: the cursor of a `next` or `previous` link, as given (omit it for the first page)."
    )

    def paginate_queryset(self, queryset, request, view=None):
        self._model = queryset.model  # decode_cursor checks a cursor's position against the ordering field
        return super().paginate_queryset(queryset, request, view)

    def get_page_size(self, request):
        given = request.query_params.get(self.page_size_query_param)
        if given is None or given == "":
            return self.page_size
        if not PAGE_SIZE.fullmatch(given) or int(given) < 1:
            raise ValidationError(
                {self.page_size_query_param: [f"A whole number from 1 to {self.max_page_size}."]}
            )
        return min(int(given), self.max_page_size)

    def decode_cursor(self, request):
        cursor = super().decode_cursor(request)  # a cursor that does not decode is NotFound already
        if cursor is not None and cursor.position is not None and not self._position_fits(cursor.position):
            raise NotFound(self.invalid_cursor_message)
        return cursor

    def _position_fits(self, position: str) -> bool:
        """Whether `position` is a value of the ordering's first field: a forged cursor naming "x" as an id,
        an id beyond bigint or a NUL byte would otherwise reach the database as a 500."""
        if "\x00" in position:
            return False  # PostgreSQL refuses NUL in any text
        name = self.ordering[0].lstrip("-")
        meta = self._model._meta
        try:
            field = meta.pk if name == "pk" else meta.get_field(name)
        except FieldDoesNotExist:
            return True  # an annotation: the database compares it
        try:
            value = field.to_python(position)
        except (DjangoValidationError, TypeError, ValueError, OverflowError):
            return False
        if isinstance(field, models.IntegerField) and value is not None:
            return BIGINT_RANGE[0] <= value <= BIGINT_RANGE[1]
        if isinstance(field, models.DateTimeField) and value is not None:
            return self._moment_fits(value)
        return True

    @staticmethod
    def _moment_fits(value: datetime) -> bool:
        """Our cursors write an aware date (the ordering's datetimes are stored in UTC). A naive one is not
        ours, and an aware one the database cannot hold in UTC (0001-01-01 at +14:00 is still year 0 in UTC)
        would raise OverflowError as the query is built: neither is a position."""
        if timezone.is_naive(value):
            return False
        try:
            value.astimezone(UTC)
        except OverflowError:
            return False
        return True

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {"type": "integer", "minimum": 1, "maximum": self.max_page_size,
                                       "default": self.page_size}
        return parameters

    def get_paginated_response_schema(self, schema):
        described = super().get_paginated_response_schema(schema)
        described["description"] = (
            f"A page of at most {self.max_page_size} rows. Follow `next` (null on the last page); "
            "there is no total count."
        )
        return described


__all__ = ["BigListPagination", "DEFAULT_PAGE_SIZE", "MAX_PAGE_SIZE"]
