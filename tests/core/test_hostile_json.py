"""Hostile JSON is a 400 (or a 413), never a 500, on every endpoint, the unauthenticated token endpoint
included."""

import json

import pytest

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize("body", [DEEP, '{"a":' * 5000 + "1" + "}" * 5000, "[" * 40 + "]" * 40])
def test_deep_nesting_is_a_400_on_the_token_endpoint(client, body):
    response = client.post("/api/token/", body, content_type="application/json")
    assert response.status_code == 400
    assert "nested deeper" in response.json()["non_field_errors"][0]


def test_deep_nesting_is_a_400_for_a_signed_in_user(api_for, manager, project):
    response = api_for(manager).post("/api/racks/", DEEP, content_type="application/json")
    assert response.status_code == 400


@pytest.mark.parametrize("body", ['{"username": NaN}', '{"username": "x"', "\xff\xfe", "1" * 5000])
def test_what_is_not_json_is_a_400(client, body):
    response = client.post("/api/token/", body, content_type="application/json")
    assert response.status_code == 400


def test_a_body_over_the_limit_is_a_413_in_the_error_shape(api_for, manager, project, settings):
    settings.API_JSON_MAX_BYTES = 1000
    response = api_for(manager).post(
        "/api/racks/", json.dumps({"project": project.code, "name": "x" * 2000}), content_type="application/json"
    )
    assert response.status_code == 413
    assert set(response.json()) == {"detail"}


def test_ordinary_json_still_works(client, manager):
    manager.set_password("pw-for-tests-1")
    manager.save()
    response = client.post("/api/token/", {"username": manager.username, "password": "pw-for-tests-1"},
                           content_type="application/json")
    assert response.status_code == 200 and response.json()["token"]
