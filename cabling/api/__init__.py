"""The cabling REST API: viewsets register themselves on the project router (bringup/api_urls.py)."""
