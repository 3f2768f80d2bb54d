"""projects' hand-written SQL, behind the fence (docs/architecture.md; tests/test_sql_fence.py): the
reads of every API write's authentication and project check, written out instead of compiled, each a named
function its callers call (projects.access, projects.api.node_tokens). tests/projects/test_sql.py holds each
to the ORM's answer on the same rows.

Why SQL: every scan (200 a second on two cores) pays both, and compiling the ORM's join costs ten times what
running it costs (core.rows builds the instances as the ORM would)."""

from __future__ import annotations

from functools import cache

from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from core.rows import columns_of, fetch, joined

from .models import Membership, Project


@cache
def _member_project_sql():
    project = columns_of(Project, "p")
    sql = (f'SELECT {project.sql}, m."role" FROM "{Project._meta.db_table}" p JOIN "{Membership._meta.db_table}" m '
           'ON m."project_id" = p."id" WHERE m."user_id" = %s AND p."code" = %s')
    return sql, project


def member_project_with_role(*, user_id: int, code: str) -> tuple[Project, str] | None:
    """(the project of that code, the user's role in it) where the user is a member, else None: what
    Membership.objects.select_related("project").filter(user_id=user_id, project__code=code).first() gives,
    as one written-out query."""
    sql, project_columns = _member_project_sql()
    rows = fetch(sql, [user_id, code])
    if not rows:
        return None
    return project_columns.build(rows[0]), rows[0][-1]


@cache
def _person_token_sql():
    token, user = columns_of(Token, "t"), columns_of(get_user_model(), "u")
    sql = (f'SELECT {token.sql}, {user.sql} FROM "{Token._meta.db_table}" t '
           f'JOIN "{get_user_model()._meta.db_table}" u ON u."id" = t."user_id" WHERE t."key" = %s')
    return sql, (token, user)


def person_token_with_user(*, key: str) -> Token | None:
    """The API token of that key with its user (token.user loaded), or None: what DRF's TokenAuthentication
    reads (Token.objects.select_related("user").get(key=key)), as one written-out query."""
    sql, parts = _person_token_sql()
    rows = fetch(sql, [key])
    if not rows:
        return None
    token, user = joined(rows[0], *parts)
    token.user = user
    return token
