"""The REST API of the delivery workflow: stages (with their gates, waivers and checklists) and the punch
list. `register(router)` adds its viewsets to the project router (bringup/api_urls.py)."""

from .views import register

__all__ = ["register"]
