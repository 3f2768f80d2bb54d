"""Creating a project from the site (/projects/new/): staff or users with `projects.add_project` make the
project, its first members and its stages from a template in one go; anyone else gets 403; hostile input
is refused with the field named, never a 500."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from delivery.models import Stage, StageTemplate
from delivery.stages.data import DEFAULT_STAGES
from projects.choices import Role
from projects.models import Membership, Project
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def default_template():
    """The default template a data migration loads. A browser test's database flush on the same worker
    (transactional tests empty every table) takes migration rows with it, so it is made sure of here."""
    from delivery.stages.services import stage_template_default

    return stage_template_default()

URL = "/projects/new/"


@pytest.fixture
def staff():
    return UserFactory(username="boss", is_staff=True)


def form(**overrides) -> dict:
    data = {"code": "NEW-1", "name": "New cluster", "customer_name": "Initech", "site": "Hall 2",
            "target_date": "2027-03-01", "members": "", "template": StageTemplate.objects.get().pk}
    data.update(overrides)
    return data


def test_the_url_is_the_named_route():
    assert reverse("delivery:project-create") == URL


def test_staff_create_a_project_with_its_members_and_the_templates_stages(staff, client_for):
    alice, bob = UserFactory(username="alice"), UserFactory(username="bob")
    response = client_for(staff).post(URL, form(members="alice manager\nbob Technician\n\n"))
    project = Project.objects.get(code="NEW-1")
    assert response.status_code == 302 and response["Location"] == reverse("delivery:dashboard", args=["NEW-1"])
    assert (project.name, project.customer_name, project.site, str(project.target_date)) == (
        "New cluster", "Initech", "Hall 2", "2027-03-01")
    assert dict(Membership.objects.filter(project=project).values_list("user__username", "role")) == {
        alice.username: Role.MANAGER, bob.username: Role.TECHNICIAN}
    keys = list(Stage.objects.filter(project=project).values_list("key", flat=True))
    assert keys == [s["key"] for s in DEFAULT_STAGES]


def test_a_user_granted_add_project_may_and_becomes_its_manager_when_none_is_listed(client_for):
    lead = UserFactory(username="lead")
    lead.user_permissions.add(Permission.objects.get(codename="add_project", content_type__app_label="projects"))
    client = client_for(lead)
    assert client.get(URL).status_code == 200
    assert client.post(URL, form(members="")).status_code == 302
    assert Membership.objects.get(project__code="NEW-1").user == lead
    assert client.get(reverse("delivery:dashboard", args=["NEW-1"])).status_code == 200


def test_anyone_else_gets_403_and_an_anonymous_visitor_the_login_page(project, manager, client_for, client):
    client.logout()
    assert client.get(URL).status_code == 302
    client = client_for(manager)  # a project's manager is not, by that, allowed to start new projects
    assert client.get(URL).status_code == 403
    assert client.post(URL, form()).status_code == 403
    assert not Project.objects.filter(code="NEW-1").exists()


@pytest.mark.parametrize(("field", "value", "says"), [
    ("code", "lower case!", "upper-case"),
    ("code", "ACME-72", "exists already"),
    ("name", "x" * 100_000, "at most 200"),
    ("name", "=HYPERLINK(\"http://evil\")", "formula"),
    ("customer_name", "@SUM(A1)", "formula"),
    ("site", "+cmd|' /C calc'!A0", "formula"),
    ("target_date", "31/02/2027", "valid date"),
    ("members", "ghost manager", "No such user: ghost"),
    ("members", "alice overlord", "Line 1"),
    ("members", "alice manager\nalice customer", "Line 2: alice is listed twice"),
    ("members", "a manager\n" * 60, "At most 50"),
    ("members", "x" * 100_000, "at most 4000"),
    ("template", "999999", "valid choice"),
])
def test_hostile_or_wrong_input_is_refused_naming_the_field(staff, project, client_for, field, value, says):
    UserFactory(username="alice")
    response = client_for(staff).post(URL, form(**{field: value}))
    assert response.status_code == 200  # the form again, with its errors
    errors = response.context["form"].errors
    assert list(errors) == [field], errors
    assert says in " ".join(errors[field]), errors[field]
    assert Project.objects.count() == 1  # only the fixture's


def test_a_member_list_without_a_manager_that_names_the_creator_is_refused_and_nothing_is_made(staff, client_for):
    response = client_for(staff).post(URL, form(members="boss customer"))
    assert response.status_code == 200
    assert "at least one manager" in " ".join(response.context["form"].errors["members"])
    assert not Project.objects.filter(code="NEW-1").exists() and not Stage.objects.exists()


def test_the_portfolio_offers_creation_only_to_those_who_may(staff, project, manager, client_for):
    assert 'id="project-create-link"' in client_for(staff).get(reverse("delivery:portfolio")).content.decode()
    assert 'id="project-create-link"' not in client_for(manager).get(reverse("delivery:portfolio")).content.decode()
