"""projects.sql, each read against the ORM query it stands for, on the same rows: the suite runs on SQLite
here and on PostgreSQL in CI, so each holds on both. Through the API, the person token's answers are held to
DRF's by tests/cabling/test_scan_rows.py."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token

from projects import sql
from projects.models import Membership

pytestmark = pytest.mark.django_db


def field_values(instance) -> dict:
    return {field.attname: getattr(instance, field.attname) for field in type(instance)._meta.concrete_fields}


def test_a_members_project_and_role_are_the_orms(project, other_project, manager, technician, outsider):
    for user in (manager, technician, outsider):
        for code in (project.code, other_project.code, "NO-SUCH", project.code.lower()):
            membership = Membership.objects.select_related("project").filter(user=user, project__code=code).first()
            found = sql.member_project_with_role(user_id=user.pk, code=code)
            if membership is None:
                assert found is None, (user, code)
            else:
                assert (field_values(found[0]), found[1]) == (field_values(membership.project), membership.role)


def test_a_person_token_with_its_user_is_the_orms(technician, outsider):
    for user in (technician, outsider):
        key = Token.objects.create(user=user).key
        loaded = Token.objects.select_related("user").get(key=key)
        found = sql.person_token_with_user(key=key)
        assert field_values(found) == field_values(loaded)
        assert type(found).user.is_cached(found) and field_values(found.user) == field_values(loaded.user)
    assert sql.person_token_with_user(key="not-a-real-token") is None
