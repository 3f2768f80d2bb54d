"""A new project shows its next steps on its home page until each is done (issue 21): the hardware catalogue,
a fabric plan or an import, the racks' power budgets, the team, the stages; each with where to do it. The
customer does not see them; the page's queries do not grow with the project."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from delivery.project_setup.selectors import next_steps
from delivery.stages.services import stages_create_from_template
from inventory.models import Rack
from inventory.services import device_create
from projects.choices import Role
from tests.factories import HardwareModelFactory, MembershipFactory, RackFactory, UserFactory, gpu_server_model
from tests.support import count_queries

pytestmark = pytest.mark.django_db


def steps_shown(client, project) -> dict[str, str]:
    body = client.get(reverse("delivery:project-home", args=[project.code])).content.decode()
    return {key: state for state, key in re.findall(r'<li class="(is-done|is-todo)" data-step="([a-z]+)"', body)}


def test_a_new_project_lists_what_it_needs_and_each_step_is_ticked_as_it_is_done(project, manager, client_for):
    client = client_for(manager)
    assert steps_shown(client, project) == {"catalogue": "is-todo", "fabric": "is-todo", "power": "is-todo",
                                            "team": "is-todo", "stages": "is-todo"}
    body = client.get(reverse("delivery:project-home", args=[project.code])).content.decode()
    assert reverse("plans:page", args=[project.code]) in body and reverse("imports:page", args=[project.code]) in body

    model = gpu_server_model()
    rack = RackFactory(project=project, power_budget_w=0)
    device_create(project=project, hardware_model=model, name="gpu-001", rack=rack, position_u=1)
    shown = steps_shown(client, project)
    assert (shown["catalogue"], shown["fabric"], shown["power"]) == ("is-done", "is-done", "is-todo")
    home = client.get(reverse("delivery:project-home", args=[project.code])).content.decode()
    assert "1 of 1 racks have no budget" in home
    Rack.objects.filter(pk=rack.pk).update(power_budget_w=40_000)
    for role in (Role.TECHNICIAN, Role.CUSTOMER):
        MembershipFactory(project=project, user=UserFactory(), role=role)
    assert steps_shown(client, project) == {"catalogue": "is-done", "fabric": "is-done", "power": "is-done",
                                            "team": "is-done", "stages": "is-todo"}
    stages_create_from_template(project=project)
    assert steps_shown(client, project) == {}  # every step done: the card is gone


def test_the_customer_does_not_see_them_and_outsiders_get_404(project, customer, outsider, client_for):
    assert steps_shown(client_for(customer), project) == {}
    assert client_for(outsider).get(reverse("delivery:project-home", args=[project.code])).status_code == 404


def test_the_steps_cost_the_same_queries_for_a_few_racks_or_many(project, manager, client_for):
    HardwareModelFactory()
    client = client_for(manager)
    url = reverse("delivery:project-home", args=[project.code])
    RackFactory(project=project, power_budget_w=0)
    few = count_queries(lambda: client.get(url))
    for _ in range(20):
        RackFactory(project=project, power_budget_w=0)
    assert count_queries(lambda: client.get(url)) == few
    assert [step.key for step in next_steps(project=project) if not step.done] == ["fabric", "power", "team",
                                                                                  "stages"]
