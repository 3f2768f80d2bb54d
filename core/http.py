"""Download responses whose file names survive any language.

A Content-Disposition header is Latin-1 at best, so a name such as "华东-机柜.csv" cannot go in the plain
`filename="..."` parameter. RFC 6266 (with RFC 5987's encoding) adds `filename*=UTF-8''<percent-encoded>`,
which every current browser prefers; the plain parameter stays as an ASCII fallback for the rest. A name
that is plain ASCII to begin with gets the plain parameter alone, as before.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote

from django.http import HttpResponse

# Characters the ASCII fallback leaves out: those a quoted-string must escape, those naive parsers split
# on or decode, and path separators.
_FALLBACK_UNSAFE = set('"\\;%/,*?<>|:')
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_EXTENSION = re.compile(r"[A-Za-z0-9]{1,10}")


def ascii_filename(filename: str, default: str = "download") -> str:
    """A plain ASCII stand-in for `filename`: accents dropped ("é" -> "e"), any other non-ASCII or unsafe
    character replaced with "_" (runs collapsed, none left at the ends of the name); `default` (with the
    extension) when nothing is left: "华东项目-racks.csv" -> "racks.csv", "机柜.csv" -> "download.csv"."""
    decomposed = unicodedata.normalize("NFKD", filename)
    chars = []
    for char in decomposed:
        if unicodedata.combining(char):
            continue
        chars.append(char if " " <= char <= "~" and char not in _FALLBACK_UNSAFE else "_")
    fallback = re.sub(r"_+", "_", "".join(chars)).strip()
    stem, dot, suffix = fallback.rpartition(".")
    if not (dot and _EXTENSION.fullmatch(suffix)):
        stem, suffix = fallback, ""
    stem = stem.strip(" ._-")
    return f"{stem or default}.{suffix}" if suffix else stem or default


def content_disposition(filename: str, disposition: str = "attachment") -> str:
    """The header's value: `attachment; filename="..."` (or `inline; ...`), plus `filename*=UTF-8''...` when
    the name is not plain ASCII (or holds characters the fallback leaves out)."""
    name = _CONTROL.sub("", filename).replace("/", "_").replace("\\", "_") or "download"
    fallback = ascii_filename(name)
    value = f'{disposition}; filename="{fallback}"'
    if fallback != name:
        value += f"; filename*=UTF-8''{quote(name, safe='')}"
    return value


def attachment(
    response: HttpResponse | None, filename: str, content_type: str | None = None, *, inline: bool = False
) -> HttpResponse:
    """`response` (a new empty HttpResponse of `content_type` when None) as a download named `filename`;
    with `inline`, shown in the browser when it can, the name kept for "save as"."""
    if response is None:
        response = HttpResponse(content_type=content_type)
    elif content_type:
        response["Content-Type"] = content_type
    response["Content-Disposition"] = content_disposition(filename, "inline" if inline else "attachment")
    return response
