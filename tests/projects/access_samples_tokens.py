"""Samples of the node tokens pages (delivery/token_views.py) for the access matrix: one live token in
`project`, written directly (its secret is never needed: the pages show and revoke, they do not
authenticate)."""

from __future__ import annotations

import secrets

from django.utils import timezone

from projects.choices import NodeScope
from projects.models import NODE_TOKEN_DEFAULT_LIFETIME, NodeToken
from projects.tokens import secret_hash


def make_token(project, *, name: str = "gpu-001", created_by=None, **fields) -> NodeToken:
    now = timezone.now()
    values = {"scopes": [NodeScope.UPLOADS.value], "created_at": now, "expires_at": now + NODE_TOKEN_DEFAULT_LIFETIME}
    values.update(fields)
    return NodeToken.objects.create(project=project, name=name, key_id=secrets.token_hex(6),
                                    secret_hash=secret_hash(secrets.token_urlsafe(32)), created_by=created_by, **values)


def samples(project) -> dict[str, dict]:
    token = make_token(project)
    return {
        "projects:node-token-list": {},
        "projects:node-token-revoke": {"pk": token.pk},
    }
