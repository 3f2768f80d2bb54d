"""The one way a service's refusal reaches a form."""

from django.core.exceptions import ValidationError


def add_service_errors(form, exc: ValidationError) -> None:
    """Put a service's errors on the form's fields, or on the form when the field is not on it."""
    if not hasattr(exc, "error_dict"):
        form.add_error(None, exc.messages)
        return
    for field, errors in exc.error_dict.items():
        form.add_error(field if field in form.fields else None, [m for e in errors for m in e.messages])
