"""The one error shape: Django's ValidationError from a service, DRF's own errors and a bare list all
come out the same way, and the schema documents it."""

import pytest
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404
from rest_framework import exceptions

from core.api.exceptions import exception_handler, validation_detail


def handled(exc):
    return exception_handler(exc, {"view": None, "request": None})


def test_a_service_s_field_errors_keep_their_names_and_the_rest_is_non_field():
    exc = DjangoValidationError({"serial": ["Already used."], "__all__": ["The rack is full."]})
    response = handled(exc)
    assert response.status_code == 400
    assert response.data == {"serial": ["Already used."], "non_field_errors": ["The rack is full."]}


def test_a_message_without_a_field_is_non_field():
    assert validation_detail(DjangoValidationError("Nothing failed.")) == {"non_field_errors": ["Nothing failed."]}
    response = handled(exceptions.ValidationError(["a", "b"]))
    assert response.data == {"non_field_errors": ["a", "b"]}


@pytest.mark.parametrize("exc, status", [(PermissionDenied("no"), 403), (Http404("x"), 404)])
def test_other_errors_carry_detail(exc, status):
    response = handled(exc)
    assert response.status_code == status and set(response.data) == {"detail"}


@pytest.mark.django_db
def test_the_schema_documents_the_error_shape(client, manager):
    client.force_login(manager)
    schema = client.get("/api/schema/?format=json").json()
    assert schema["components"]["schemas"]["ValidationError"]["properties"]["non_field_errors"]
    operation = schema["paths"]["/api/racks/"]["post"]
    assert operation["responses"]["400"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ValidationError"
    }
    assert operation["responses"]["404"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }
