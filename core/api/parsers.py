"""The JSON parser of every endpoint: bounded in size and in depth.

DRF's own parser hands the body to json.load, which recurses once per level: `[` x 100,000 raised
RecursionError (a 500) on every endpoint, the unauthenticated token endpoint included. Here a body is
read at most up to its limit, a document nested deeper than MAX_DEPTH is a 400, and so is one the
decoder cannot read (NaN and Infinity included: JSON has no such numbers).
"""

from __future__ import annotations

import json

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import APIException, ParseError

MAX_DEPTH = 32  # no payload of this API is deeper than a handful of levels


class RequestTooLarge(APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "too_large"


def _depth_within(value, limit: int) -> bool:
    """Whether `value` nests at most `limit` containers deep (iterative: no recursion to exhaust)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return False
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return True


def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


class BoundedJSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_JSON_MAX_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise RequestTooLarge(f"The JSON body is larger than {limit:,} bytes.")
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            data = json.loads(raw.decode(encoding), parse_constant=_no_constant)
        except RecursionError:
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.") from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        if not _depth_within(data, MAX_DEPTH):
            raise ParseError(f"JSON parse error - nested deeper than {MAX_DEPTH} levels.")
        return data
