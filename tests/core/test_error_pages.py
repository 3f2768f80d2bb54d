"""With debug off (the default), errors get pages in the site's style that say what happened and where
to go, never Django's debug page listing every URL."""

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_an_outsider_gets_the_site_s_404_not_the_url_list(client_for, outsider, project):
    response = client_for(outsider).get(reverse("delivery:project-home", args=[project.code]))
    body = response.content.decode()
    assert response.status_code == 404
    assert "Not found" in body and "Your projects" in body
    assert "URLconf" not in body and "p/&lt;str:code&gt;" not in body


def test_a_role_refusal_gets_the_site_s_403(client_for, technician, project):
    response = client_for(technician).get(reverse("plans:page", args=[project.code]))  # managers plan
    assert response.status_code == 403
    assert "Not allowed" in response.content.decode()


def test_a_server_error_page_stands_alone(settings):
    """500.html renders without a request context (the handler gives it none)."""
    from django.template.loader import render_to_string

    body = render_to_string("500.html")
    assert "Something went wrong on our side" in body and 'href="/"' in body


def test_debug_is_off(settings):
    from django.conf import settings as live

    assert live.DEBUG is False
    assert Client().get("/no-such-page/").status_code == 404
