"""Views of the API as a whole."""

from django.http import JsonResponse
from django.views.decorators.csrf import csrf_exempt

NOT_FOUND = "No API endpoint or object at this address."


@csrf_exempt  # like every API view: a token request has no CSRF cookie, and the answer changes nothing
def not_found(request, *args, **kwargs):
    """The last route under /api/: an address no endpoint matches (/api/devices/1.5/) answers 404 in the
    API's one error shape, not the site's HTML page. It matches only paths ending in a slash, so Django
    still sends /api/devices to /api/devices/."""
    return JsonResponse({"detail": NOT_FOUND}, status=404)
