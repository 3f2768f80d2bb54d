"""API routes of port traces (filled in by the floor issue)."""


def register(router) -> None:
    """Add this module's viewsets to the one API router (bringup/api_urls.py)."""
