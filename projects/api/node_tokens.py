"""Node tokens in the API: `Authorization: Bearer bnt_<key id>_<secret>` (projects.tokens).

- `NodeTokenAuthentication` (first in DEFAULT_AUTHENTICATION_CLASSES) turns a node token into a
  NodePrincipal, never into the user who made it. A revoked, expired or wrong token is a 401 saying which.
  On a view that does not admit node tokens at all, a node token is a 403 before the view runs.
- `UserOrNodeToken.for_scope(scope, actions=[...])` is how a view admits them: as its permission class it
  lets in signed-in users (the view's own rules follow) and node tokens that hold `scope`, on `actions` only,
  naming no project but their own. Every other action, scope or project is a 403 saying why.

So a node token can post what its scopes name into its own project and nothing else: it cannot read a
list, change a device, or post into another project, whatever rights its maker has.

A person's own API token (`Authorization: Token <key>`, DRF's authtoken) is read by
`PersonTokenAuthentication`: DRF's TokenAuthentication with its one query written out (projects.sql), since
every scan from a scanner app or script pays it.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions, permissions
from rest_framework.authentication import BaseAuthentication, TokenAuthentication, get_authorization_header

from projects.access import is_node
from projects.sql import person_token_with_user
from projects.tokens import NodePrincipal, NodeTokenRefused, node_token_check, node_token_touch

KEYWORD = "Bearer"
NOT_HERE = ("A node token may only post what its scopes allow (tool outputs: POST /api/uploads/) into its own "
            "project; anything else needs a person's sign-in or token.")


def admits_node_tokens(view) -> bool:
    """Whether the view declares UserOrNodeToken among its permission classes."""
    return any(isinstance(cls, type) and issubclass(cls, UserOrNodeToken)
               for cls in getattr(view, "permission_classes", ()))


class NodeTokenAuthentication(BaseAuthentication):
    """`Authorization: Bearer bnt_...`: the request is the token's NodePrincipal. Other schemes are left to
    the next authentication class (a person's session or `Token <key>`)."""

    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None
        if len(parts) != 2:
            raise exceptions.AuthenticationFailed("Send one node token: `Authorization: Bearer bnt_...`.")
        try:
            value = parts[1].decode("ascii")
        except UnicodeDecodeError:
            raise exceptions.AuthenticationFailed("Invalid node token.") from None
        try:
            token = node_token_check(value)
        except NodeTokenRefused as refused:
            raise exceptions.AuthenticationFailed(str(refused)) from None
        view = (getattr(request, "parser_context", None) or {}).get("view")
        if view is None or not admits_node_tokens(view):
            raise exceptions.PermissionDenied(NOT_HERE)
        return NodePrincipal(token), token

    def authenticate_header(self, request) -> str:
        # The first class's header makes DRF answer 401 (not 403) to a refused or missing credential.
        return f'{KEYWORD} realm="api"'


class UserOrNodeToken(permissions.BasePermission):
    """A signed-in user, or a node token holding `scope` on one of `actions` and naming only its project.
    Made per view with `for_scope`; a use that passes is recorded on the token (at most once a minute)."""

    scope: str = ""
    actions: tuple[str, ...] = ()

    @classmethod
    def for_scope(cls, scope: str, *, actions=("create",)) -> type[UserOrNodeToken]:
        return type(f"UserOr{str(scope).title()}NodeToken", (cls,), {"scope": str(scope), "actions": tuple(actions)})

    def has_permission(self, request, view) -> bool:
        principal = request.user
        if not is_node(principal):
            return bool(principal and principal.is_authenticated)
        token = principal.token
        if getattr(view, "action", None) not in self.actions:
            self.message = NOT_HERE
            return False
        if self.scope not in principal.scopes:
            self.message = f"This node token does not hold the {self.scope} scope."
            return False
        others = sorted(code for code in _projects_named(request) if code != token.project.code)
        if others:
            self.message = (f"This node token is for project {token.project.code}; it cannot post into "
                            f"{', '.join(others)}.")
            return False
        node_token_touch(token=token, ip=request.META.get("REMOTE_ADDR"))
        return True


def _projects_named(request) -> set[str]:
    """Every project code a request names, in its query string or its body (a JSON object or a form)."""
    named = set(request.query_params.getlist("project"))
    data = request.data
    if hasattr(data, "getlist"):
        named.update(data.getlist("project"))
    elif isinstance(data, dict) and "project" in data:
        named.add(data["project"])
    return {code if isinstance(code, str) else repr(code) for code in named}


class NodeTokenScheme(OpenApiAuthenticationExtension):
    """The schema names node tokens as a security scheme on the operations that admit them only."""

    target_class = NodeTokenAuthentication
    name = "nodeToken"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "bearerFormat": "bnt_<key id>_<secret>",
                "description": "A node token, made on the project's Node tokens page."}

    def get_security_requirement(self, auto_schema):
        return {self.name: []} if admits_node_tokens(auto_schema.view) else None


class PersonTokenAuthentication(TokenAuthentication):
    """`Authorization: Token <key>`: exactly DRF's TokenAuthentication (the same answers and refusals), its
    token-and-user query written out instead of compiled on every request (a tenth of the CPU)."""

    def authenticate_credentials(self, key):
        token = person_token_with_user(key=key)
        if token is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        user = token.user
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        return user, token
