"""The validation REST API: check runs (list, read, start, cancel, re-run failed) and their results.
`register(router)` adds the viewsets to the project router (bringup/api_urls.py)."""

from .views import register

__all__ = ["register"]
