"""The parsers of every endpoint: bounded in size (and JSON in depth), each refusal in the one error shape.

Size: a request's declared Content-Length is checked before a byte of its body is read (a 413), and the
body is then read no further than the limit, whatever the header claimed (Django reads no further than
the declared length either, so a client that lies gets its body cut short, never more memory).
core/api/middleware.py refuses, at the edge, a body larger than any endpoint takes; the parsers hold
each kind of body to its own limit:

- JSON: settings.API_JSON_MAX_BYTES. Read here from the stream, not through `request.body`: DRF hands a
  JSONParser `request.body`, bounded by DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB), which refused a 3 MiB
  upload the API promises to take (20 MiB).
- multipart: Django's parser, whose upload handlers keep a file over FILE_UPLOAD_MAX_MEMORY_SIZE on disk.
- a raw body (text/plain): copied in chunks to a temporary file (on disk past the same threshold), and
  refused once it passes settings.UPLOAD_MAX_BYTES.

Depth: DRF's own JSON parser hands the body to json.load, which recurses once per level: `[` x 100,000
raised RecursionError (a 500) on every endpoint, the unauthenticated token endpoint included. Here a
document nested deeper than MAX_DEPTH is a 400, and so is one the decoder cannot read (NaN and Infinity
included: JSON has no such numbers).
"""

from __future__ import annotations

import json
import tempfile

from django.conf import settings
from rest_framework import parsers, renderers
from rest_framework.exceptions import APIException, ParseError

MAX_DEPTH = 32  # no payload of this API is deeper than a handful of levels
CHUNK_BYTES = 64 * 1024  # what a raw body is read by


class RequestTooLarge(APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "too_large"


def declared_length(meta) -> int:
    """The body's length as the request declares it (0 when it declares none or nonsense, as Django
    reads it: no body)."""
    try:
        return max(int(meta.get("CONTENT_LENGTH") or 0), 0)
    except (TypeError, ValueError):
        return 0


def refuse_declared_over(parser_context, limit: int, what: str) -> None:
    """A 413 before reading, when the request declares a body over `limit`."""
    request = (parser_context or {}).get("request")
    declared = declared_length(request.META) if request is not None else 0
    if declared > limit:
        raise RequestTooLarge(f"{what} of {declared:,} bytes is larger than the limit of {limit:,} bytes.")


def read_bounded(stream, limit: int, what: str) -> bytes:
    """At most `limit` bytes of the stream; a 413 when there are more (read: limit + 1 at most)."""
    raw = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise RequestTooLarge(f"{what} is larger than the limit of {limit:,} bytes.")
    return raw


def spool_bounded(stream, limit: int, what: str):
    """The stream copied in chunks to a temporary file (in memory up to FILE_UPLOAD_MAX_MEMORY_SIZE, on
    disk past it), positioned at its start; a 413 once it passes `limit` (read: limit + one chunk at most)."""
    spool = tempfile.SpooledTemporaryFile(
        max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, dir=settings.FILE_UPLOAD_TEMP_DIR
    )
    size = 0
    while stream is not None:
        chunk = stream.read(CHUNK_BYTES)
        if not chunk:
            break
        size += len(chunk)
        if size > limit:
            spool.close()
            raise RequestTooLarge(f"{what} is larger than the limit of {limit:,} bytes.")
        spool.write(chunk)
    spool.seek(0)
    return spool


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


class BoundedJSONParser(parsers.BaseParser):
    """application/json, bounded in size and depth. Not a subclass of DRF's JSONParser on purpose: DRF
    gives those `request.body` (see the module's docstring)."""

    media_type = "application/json"
    renderer_class = renderers.JSONRenderer

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_JSON_MAX_BYTES
        refuse_declared_over(parser_context, limit, "The JSON body")
        raw = read_bounded(stream, limit, "The JSON body")
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


class BoundedMultiPartParser(parsers.MultiPartParser):
    """multipart/form-data no larger than settings.API_BODY_MAX_BYTES, refused before reading; files
    stream to disk through Django's upload handlers."""

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_declared_over(parser_context, settings.API_BODY_MAX_BYTES, "The form")
        return super().parse(stream, media_type, parser_context)


class BoundedRawParser(parsers.BaseParser):
    """A body taken as it was sent (text/plain): a file object, spooled to disk past a small size, of at
    most settings.UPLOAD_MAX_BYTES."""

    media_type = "text/plain"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.UPLOAD_MAX_BYTES
        refuse_declared_over(parser_context, limit, "The body")
        return spool_bounded(stream, limit, "The body")
