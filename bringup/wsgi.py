import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
application = get_wsgi_application()
# The URLconf, and with it every view, viewset, serializer and filter: otherwise each worker would load them at
# its first request, after the fork, unfrozen and unshared.
get_resolver().url_patterns  # noqa: B018 - loading is the point

# What is loaded by now (Django, the apps, their modules, the URLconf and its views) lives as long as the
# process: frozen out of the garbage collector's reach, a full collection no longer walks it. In a gunicorn
# worker such a walk was a pause of about 100 ms every few thousand requests, in the scans' p99
# (bench/bench_scan.py), and 40 % of the collector's CPU. With gunicorn's --preload this runs before the
# workers fork, which also keeps those pages shared between them.
gc.freeze()
