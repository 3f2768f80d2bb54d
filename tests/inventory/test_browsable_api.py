"""The browsable API (HTML) of every endpoint renders for a member: the create form of a list has no
payload to take a project from, and related fields must not list every row the user can see."""

import pytest
from django.urls import reverse

from projects.choices import Role
from tests.factories import MembershipFactory, UserFactory
from tests.projects.test_api_scoping import one_of_everything

pytestmark = pytest.mark.django_db


def list_basenames() -> list[str]:
    """Every list endpoint on the API router, read when the test runs (importing the URLconf while tests
    are collected would turn one app's import error into an aborted session)."""
    from bringup.api_urls import router

    # A viewset without a list (checklist items are read inside their stage) has no "-list" route.
    return sorted({basename for _prefix, viewset, basename in router.registry if hasattr(viewset, "list")})


@pytest.fixture
def rows(project, manager):
    return one_of_everything(project, manager)


def test_every_list_endpoint_renders_as_html_for_a_manager(client_for, manager, rows):
    client = client_for(manager)
    client.raise_request_exception = False  # a 500 is reported below with the others
    answers = {}
    for basename in list_basenames():
        response = client.get(reverse(f"{basename}-list"), HTTP_ACCEPT="text/html")
        answers[basename] = (response.status_code, response["Content-Type"].split(";")[0])
    assert {"site", "rack", "device", "nic", "port", "optic", "membership", "project"} <= set(answers)
    assert {name: answer for name, answer in answers.items() if answer != (200, "text/html")} == {}


@pytest.mark.parametrize("basename", ["site", "rack", "device", "nic", "port", "optic", "membership"])
def test_detail_pages_render_as_html_with_their_edit_form(client_for, manager, rows, basename):
    obj = rows[basename]
    response = client_for(manager).get(reverse(f"{basename}-detail", args=[obj.pk]), HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    assert "<form" in response.content.decode()


def test_format_api_works_like_the_accept_header(client_for, manager, rows):
    assert client_for(manager).get(reverse("rack-list") + "?format=api").status_code == 200


def test_related_fields_are_text_boxes_not_lists_of_every_row(client_for, manager, rows, other_project):
    """A port's form would otherwise offer every port of every project the user is in."""
    body = client_for(manager).get(reverse("port-list"), HTTP_ACCEPT="text/html").content.decode()
    assert '<select class="form-control" name="parent"' not in body
    assert 'name="parent"' in body


def test_the_membership_form_does_not_list_other_tenants_users(client_for, manager, rows):
    UserFactory(username="zz-someone-elses-customer")
    MembershipFactory(user=UserFactory(username="zz-member-elsewhere"), role=Role.CUSTOMER)
    body = client_for(manager).get(reverse("membership-list"), HTTP_ACCEPT="text/html").content.decode()
    assert "zz-someone-elses-customer" not in body and "zz-member-elsewhere" not in body
    assert 'name="user"' in body  # the field is there, as a text box


def test_outsider_gets_404_on_the_html_detail(client_for, outsider, rows):
    url = reverse("rack-detail", args=[rows["rack"].pk])
    assert client_for(outsider).get(url, HTTP_ACCEPT="text/html").status_code == 404
