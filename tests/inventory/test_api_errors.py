"""The one error shape where the inventory and delivery serializers meet a service: a refusal rises as
Django's ValidationError and the API's exception handler makes it a 400 on the field (no serializer
translates it by hand); a unique rule lost to a race is a 400 on its field too; an outsider's write into
a project is a 400 that does not reveal the project."""

import pytest
from django.db import IntegrityError
from django.urls import reverse

from projects.api import serializers as delivery_serializers
from projects.choices import Role
from projects.models import Membership
from tests.factories import MembershipFactory, RackFactory, UserFactory, gpu_server_model

pytestmark = pytest.mark.django_db


def test_demoting_the_last_manager_is_a_400_on_role(api_for, manager, project):
    membership = Membership.objects.get(user=manager, project=project)
    response = api_for(manager).patch(
        reverse("membership-detail", args=[membership.pk]), {"role": Role.CUSTOMER}, format="json"
    )
    assert response.status_code == 400
    assert list(response.json()) == ["role"] and "last manager" in response.json()["role"][0]
    membership.refresh_from_db()
    assert membership.role == Role.MANAGER


def test_a_membership_lost_to_a_race_is_a_400_on_user(api_for, manager, project, monkeypatch):
    def lost_race(**kwargs):
        raise IntegrityError("UNIQUE constraint failed: delivery_membership.user_id, delivery_membership.project_id")

    monkeypatch.setattr(delivery_serializers, "membership_set", lost_race)
    payload = {"project": project.code, "user": UserFactory(username="newbie").username, "role": Role.CUSTOMER}
    response = api_for(manager).post(reverse("membership-list"), payload, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["user"]


def test_an_outsider_cannot_add_themselves_to_a_project(api_for, outsider, project, manager):
    payload = {"project": project.code, "user": outsider.username, "role": Role.MANAGER}
    made_up = {**payload, "project": "NO-SUCH-1"}
    MembershipFactory(user=outsider, role=Role.MANAGER)  # a manager elsewhere, so not refused before validation
    real, fake = (api_for(outsider).post(reverse("membership-list"), p, format="json") for p in (payload, made_up))
    assert real.status_code == fake.status_code == 400
    assert real.json()["project"] == [m.replace("NO-SUCH-1", project.code) for m in fake.json()["project"]]
    assert not Membership.objects.filter(user=outsider, project=project).exists()


def test_a_rack_space_refusal_from_the_service_is_a_400_on_position_u(api_for, technician, project):
    rack = RackFactory(project=project, name="R1")
    model = gpu_server_model()
    api = api_for(technician)
    first = {"project": project.code, "name": "gpu-1", "hardware_model": model.part_number, "rack": "R1",
             "position_u": 1}
    assert api.post(reverse("device-list"), first, format="json").status_code == 201
    response = api.post(reverse("device-list"), {**first, "name": "gpu-2", "position_u": 5}, format="json")
    assert response.status_code == 400
    assert response.json() == {"position_u": [f"U5 of rack {rack.name} is already taken by gpu-1."]}
