"""The edge of the API: a request declaring a body larger than any endpoint takes is refused before
anything reads it (a 413 in the one error shape), whichever view, parser or check would read it first:
DRF's CSRF check reads a signed-in browser's form body before the view's parsers do."""

from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse

from .parsers import declared_length

API_PREFIX = "/api/"


class DeclaredLengthMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith(API_PREFIX):
            declared, limit = declared_length(request.META), settings.API_BODY_MAX_BYTES
            if declared > limit:
                detail = f"The request body of {declared:,} bytes is larger than the limit of {limit:,} bytes."
                return JsonResponse({"detail": detail}, status=413)
        return self.get_response(request)
