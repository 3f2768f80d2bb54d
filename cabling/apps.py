from django.apps import AppConfig


class CablingConfig(AppConfig):
    name = "cabling"
    verbose_name = "Cabling"
