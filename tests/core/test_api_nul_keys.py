"""A row named by a key no row could have (a NUL byte, a key longer than any) is refused as not found, with a
400 naming the field, before the lookup reaches the database: on PostgreSQL the lookup itself failed (a 500,
found by schemathesis on POST /api/memberships/ and /api/sites/)."""

from __future__ import annotations

import pytest

from inventory.models import Site
from inventory.services.catalogue import catalogue_load_shipped
from tests.factories import RackFactory

pytestmark = pytest.mark.django_db

HOSTILE_KEYS = ["ACME\x00", "x" * 201]


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_a_project_code_with_a_nul_byte_is_a_400_naming_the_project(api_for, manager, key):
    response = api_for(manager).post("/api/sites/", {"project": key, "name": "Hall 1"}, format="json")
    assert response.status_code == 400 and "project" in response.json()


@pytest.mark.parametrize("key", HOSTILE_KEYS)
def test_a_username_with_a_nul_byte_is_no_such_user(api_for, manager, project, key):
    response = api_for(manager).post(
        "/api/memberships/", {"project": project.code, "user": key, "role": "customer"}, format="json")
    assert response.status_code == 400
    assert response.json()["user"] == ["No active account has exactly this username."]


@pytest.mark.parametrize("field", ["hardware_model", "rack"])
def test_a_device_naming_its_model_or_rack_with_a_nul_byte_is_a_400_naming_it(api_for, manager, project, field):
    catalogue_load_shipped()
    rack = RackFactory(project=project)
    body = {"project": project.code, "name": "gpu-900", "hardware_model": "B300-8GPU", "rack": rack.name}
    body[field] = body[field] + "\x00"
    response = api_for(manager).post("/api/devices/", body, format="json")
    assert response.status_code == 400 and field in response.json()
    assert "\\x00" in response.json()[field][0]  # shown, not sent back raw


@pytest.mark.parametrize("code", ["ACME-72", "ACME\x00"])
def test_an_outsider_is_refused_whatever_the_code_and_nothing_is_made(api_for, outsider, project, code):
    response = api_for(outsider).post("/api/sites/", {"project": code, "name": "Hall 1"}, format="json")
    assert response.status_code == 403
    assert not Site.objects.exists()
