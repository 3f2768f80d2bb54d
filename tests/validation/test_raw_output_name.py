"""The raw output of a check result opens in the browser (inline) under the name result-<id>.txt, set
through core.http like every other download (issue 12); an `inline` name that is not ASCII keeps its
RFC 6266 `filename*`. Members read it, an outsider gets 404."""

from __future__ import annotations

import pytest
from django.http import HttpResponse
from django.urls import reverse

from core.http import attachment

pytestmark = pytest.mark.django_db


def raw_url(project, result) -> str:
    return reverse("validation:result-raw", args=[project.code, result.pk])


def test_the_raw_output_opens_inline_with_its_name(client_for, customer, technician, outsider, project, link_run):
    result = link_run.results.first()
    for member in (customer, technician):
        response = client_for(member).get(raw_url(project, result))
        assert response.status_code == 200
        assert response["Content-Disposition"] == f'inline; filename="result-{result.pk}.txt"'
        assert response.content.decode().startswith(result.raw_output)
    assert client_for(outsider).get(raw_url(project, result)).status_code == 404


def test_inline_keeps_a_non_ascii_name():
    response = attachment(HttpResponse(b"x", content_type="text/plain"), "北京-计算-01.txt", inline=True)
    assert response["Content-Disposition"] == (
        "inline; filename=\"01.txt\"; filename*=UTF-8''%E5%8C%97%E4%BA%AC-%E8%AE%A1%E7%AE%97-01.txt"
    )
