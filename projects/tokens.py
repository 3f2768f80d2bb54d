"""Node tokens: what a node sends to post its tool outputs, instead of a person's token.

A token reads `bnt_<key_id>_<secret>`: `key_id` (12 hex digits) finds the row, the secret (256 random bits)
proves the holder. Only the secret's SHA-256 is stored, and compared in constant time; a high-entropy
secret needs no slow hash. The whole token is shown once, when it is made.

A request that carries a node token is made by a NodePrincipal, not by the manager who made the token: it
is no member of any project, so every rule that asks for a signed-in user refuses it. projects.access lets
it see its own project and run checks there, and only the endpoints that admit node tokens
(projects.api.node_tokens) ever let it that far.

Writes (`node_token_create`, `node_token_revoke`) need MANAGE_PROJECT; reads (`node_token_list`) are scoped
like every selector.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from projects.access import Capability, can, scope_to_user
from projects.models import NODE_TOKEN_DEFAULT_LIFETIME, NODE_TOKEN_MAX_LIFETIME, NodeToken, Project

TOKEN_PREFIX = "bnt"
KEY_ID_HEX_DIGITS = 12
SECRET_BYTES = 32
TOKEN_PATTERN = re.compile(r"^bnt_(?P<key_id>[0-9a-f]{12})_(?P<secret>[A-Za-z0-9_-]{43})$")
LAST_USE_RESOLUTION = timedelta(minutes=1)  # at most one write per token and minute, however busy the node
NOT_ALLOWED = "Only the project's managers may make or revoke node tokens."

__all__ = [
    "LAST_USE_RESOLUTION", "NODE_TOKEN_DEFAULT_LIFETIME", "NODE_TOKEN_MAX_LIFETIME", "IssuedToken", "NodePrincipal",
    "NodeTokenRefused", "node_token_check", "node_token_create", "node_token_list", "node_token_revoke",
    "node_token_touch", "secret_hash",
]


class NodeTokenRefused(Exception):
    """A node token that cannot be used, with the reason its holder is told."""


@dataclass(frozen=True)
class IssuedToken:
    token: NodeToken
    value: str  # the whole token: shown once, never stored


class NodePrincipal(AnonymousUser):
    """Who a request with a node token is. An AnonymousUser underneath: not staff, no membership, no
    permission, `is_authenticated` False, so a view or rule that wants a user refuses it. What it may do is
    exactly `may` (its project, the capability its scopes stand for) on the endpoints that admit it."""

    is_node = True
    capabilities = frozenset({Capability.RUN_CHECKS})  # posting tool outputs and topology is running checks

    def __init__(self, token: NodeToken):
        self.token = token
        self.project_id = token.project_id
        self.scopes = frozenset(token.scopes)

    def __str__(self) -> str:
        return f"node token {self.token.name} ({self.token.key_id})"

    def __eq__(self, other) -> bool:
        return isinstance(other, NodePrincipal) and other.token.pk == self.token.pk

    def __hash__(self) -> int:
        return hash(("node", self.token.pk))

    def may(self, capability: Capability, project: Project | int) -> bool:
        project_id = project if isinstance(project, int) else project.pk
        return project_id == self.project_id and capability in self.capabilities


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def _new_key_id() -> str:
    while True:  # 48 random bits: a clash is next to impossible, but the column is unique, so make sure
        key_id = secrets.token_hex(KEY_ID_HEX_DIGITS // 2)
        if not NodeToken.objects.filter(key_id=key_id).exists():
            return key_id


@transaction.atomic
def node_token_create(
    *, project: Project, user, name: str, scopes: list[str], lifetime: timedelta = NODE_TOKEN_DEFAULT_LIFETIME
) -> IssuedToken:
    """Make a token for `project`; the returned `value` is the only time its secret exists in the clear.
    ValidationError naming the field for a blank name, no or unknown scopes, or a lifetime over the maximum."""
    if not can(user, Capability.MANAGE_PROJECT, project):
        raise PermissionDenied(NOT_ALLOWED)
    secret = secrets.token_urlsafe(SECRET_BYTES)
    now = timezone.now()
    token = NodeToken(
        project=project,
        name=(name or "").strip(),
        key_id=_new_key_id(),
        secret_hash=secret_hash(secret),
        scopes=sorted(set(scopes or [])) if isinstance(scopes, (list, tuple, set)) else scopes,
        created_by=user,
        created_at=now,
        expires_at=now + lifetime,
    )
    token.full_clean()
    token.save()
    return IssuedToken(token=token, value=f"{TOKEN_PREFIX}_{token.key_id}_{secret}")


@transaction.atomic
def node_token_revoke(*, token: NodeToken, user) -> NodeToken:
    """Revoke the token from now on. Revoking a revoked token changes nothing (the first revocation stands)."""
    if not can(user, Capability.MANAGE_PROJECT, token.project_id):
        raise PermissionDenied(NOT_ALLOWED)
    NodeToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now(), revoked_by=user)
    token.refresh_from_db()
    return token


def node_token_list(*, user, project: Project) -> QuerySet[NodeToken]:
    """The project's tokens, newest first, with who made and revoked them (one query for a page of them)."""
    tokens = NodeToken.objects.filter(project=project).select_related("project", "created_by", "revoked_by")
    return scope_to_user(tokens, user).order_by("-created_at", "-id")


def _when(moment: datetime) -> str:
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M %Z")


def node_token_check(value: str, *, now: datetime | None = None) -> NodeToken:
    """The token `value` names, if its secret is right and it is neither revoked nor expired; else
    NodeTokenRefused with what to tell its holder. Whether a token was revoked or expired is only said to
    whoever holds its secret."""
    match = TOKEN_PATTERN.match(value or "")
    if match is None:
        raise NodeTokenRefused("Not a node token: expected bnt_<key id>_<secret> as it was shown when it was made.")
    token = NodeToken.objects.select_related("project").filter(key_id=match["key_id"]).first()
    presented = secret_hash(match["secret"])
    if token is None or not hmac.compare_digest(presented, token.secret_hash):
        raise NodeTokenRefused("Invalid node token.")
    now = now or timezone.now()
    ask = f"ask a manager of {token.project.code} for a new one"
    if token.revoked_at is not None:
        raise NodeTokenRefused(f"This node token was revoked on {_when(token.revoked_at)}; {ask}.")
    if token.expires_at <= now:
        raise NodeTokenRefused(f"This node token expired on {_when(token.expires_at)}; {ask}.")
    return token


def _ip_or_none(address: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address((address or "").strip()))
    except ValueError:
        return None


def node_token_touch(*, token: NodeToken, ip: str | None, now: datetime | None = None) -> bool:
    """Record the token's use: at most once per LAST_USE_RESOLUTION, so a node posting many files writes one
    row a minute, and one conditional UPDATE, so concurrent requests record it once. True if it wrote."""
    now = now or timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USE_RESOLUTION:
        return False
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USE_RESOLUTION)
    address = _ip_or_none(ip)
    written = NodeToken.objects.filter(stale, pk=token.pk).update(last_used_at=now, last_used_ip=address)
    if written:
        token.last_used_at, token.last_used_ip = now, address
    return bool(written)

