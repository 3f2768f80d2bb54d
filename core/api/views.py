"""Views of the API as a whole."""

from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt

NOT_FOUND = "No API endpoint or object at this address."


@csrf_exempt  # like every API view: a token request has no CSRF cookie, and the answer changes nothing
def not_found(request, *args, **kwargs):
    """The last route under /api/: an address no endpoint matches (/api/devices/1.5/) answers 404 in the
    API's one error shape, not the site's HTML page. It matches only paths ending in a slash, so Django
    still sends /api/devices to /api/devices/."""
    return JsonResponse({"detail": NOT_FOUND}, status=404)


def project_code_in_body(request) -> object:
    """The project code a write names in its body (None when the body is not an object). One with a NUL byte
    names no project (PostgreSQL cannot even compare it): 404, as for a project that does not exist."""
    code = request.data.get("project") if hasattr(request.data, "get") else None
    if isinstance(code, str) and "\x00" in code:
        raise Http404("No Project matches the given query.")
    return code
