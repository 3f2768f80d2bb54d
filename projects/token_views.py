"""The project's node tokens page, /p/<code>/tokens/: the tokens with their scopes, expiry and last use (for
those who run checks), and for managers the form that makes one and the button that revokes one. A new
token's value is shown once, in the answer to the form, and never stored. Thin: access through
ProjectViewMixin (outsiders 404, customers 403), writes through projects.tokens."""

from __future__ import annotations

from datetime import timedelta

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.views import View
from django.views.generic import ListView

from core.forms import add_service_errors
from projects.access import Capability, ProjectViewMixin
from projects.choices import NodeScope, NodeTokenState
from projects.models import NODE_TOKEN_DEFAULT_LIFETIME, NODE_TOKEN_MAX_LIFETIME
from projects.tokens import node_token_create, node_token_list, node_token_revoke

TOKENS_PER_PAGE = 50


class NodeTokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="The node or what the token is for, e.g. gpu-017 or rack R12.")
    scopes = forms.MultipleChoiceField(
        choices=NodeScope.choices, initial=[NodeScope.UPLOADS], widget=forms.CheckboxSelectMultiple,
        help_text="What the token may post. It can read nothing and change nothing else.",
    )
    days = forms.IntegerField(
        label="Valid for (days)", min_value=1, max_value=NODE_TOKEN_MAX_LIFETIME.days,
        initial=NODE_TOKEN_DEFAULT_LIFETIME.days,
    )


class NodeTokenListView(ProjectViewMixin, ListView):
    """Technicians see the tokens (they set up the nodes); only managers make them (the POST here)."""

    required_capability = Capability.RUN_CHECKS
    write_capability = Capability.MANAGE_PROJECT
    template_name = "projects/node_tokens.html"
    context_object_name = "tokens"
    paginate_by = TOKENS_PER_PAGE

    def get_queryset(self):
        return node_token_list(user=self.request.user, project=self.project)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        if context["can_manage_project"]:
            context.setdefault("form", NodeTokenForm())
        context["states"] = NodeTokenState
        context["now"] = timezone.now()
        context["uploads_url"] = self.request.build_absolute_uri(reverse("tool-upload-list"))
        return context

    def post(self, request, *args, **kwargs):
        form = NodeTokenForm(request.POST)
        issued = None
        if form.is_valid():
            try:
                issued = node_token_create(
                    project=self.project, user=request.user, name=form.cleaned_data["name"],
                    scopes=form.cleaned_data["scopes"], lifetime=timedelta(days=form.cleaned_data["days"]),
                )
            except ValidationError as exc:
                add_service_errors(form, exc)
        if issued is not None:
            form = NodeTokenForm()
        self.object_list = self.get_queryset()
        response = self.render_to_response(self.get_context_data(form=form, issued=issued))
        response["Cache-Control"] = "no-store"  # the page holds the only copy of the secret
        return response


class NodeTokenRevokeView(ProjectViewMixin, View):
    required_capability = Capability.MANAGE_PROJECT

    def post(self, request, *args, **kwargs):
        token = get_object_or_404(node_token_list(user=request.user, project=self.project), pk=kwargs["pk"])
        token = node_token_revoke(token=token, user=request.user)
        messages.success(request, f"Node token {token.name} ({token.key_id}) is revoked: it is refused from now on.")
        return redirect("projects:node-token-list", self.project.code)
