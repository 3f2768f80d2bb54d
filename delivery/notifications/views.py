"""Each user's notification settings (/account/notifications/: which kinds of email they receive, for every
project or per project)."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.mixins import LoginRequiredMixin
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.views.generic import TemplateView

from delivery.choices import NotificationKind
from delivery.notifications.services import KIND_ROLES, notification_preferences_set, preferences_of
from projects.access import visible_projects

ALL_PROJECTS = "all"


class NotificationSettingsView(LoginRequiredMixin, TemplateView):
    """One form per scope (every project, then each project the user belongs to): a checkbox per kind,
    checked when the kind is sent. Saving a scope stores the kinds left unchecked as turned off."""

    template_name = "delivery/notifications/settings.html"

    def _projects(self):
        return list(visible_projects(self.request.user).filter(memberships__user=self.request.user)
                    .order_by("code"))

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        off = preferences_of(self.request.user)
        scopes = [(ALL_PROJECTS, "All my projects", off.get(None, set()))]
        scopes += [(p.code, f"{p.code} {p.name}", off.get(p.pk, set())) for p in self._projects()]
        context["scopes"] = [
            {"key": key, "label": label,
             "kinds": [{"value": kind.value, "label": kind.label, "on": kind.value not in muted}
                       for kind in NotificationKind]}
            for key, label, muted in scopes
        ]
        context["kind_roles"] = KIND_ROLES
        return context

    def post(self, request, *args, **kwargs):
        scope = request.POST.get("scope", "")
        if scope == ALL_PROJECTS:
            project = None
        else:
            project = next((p for p in self._projects() if p.code == scope), None)
            if project is None:  # not one of theirs: the same answer as for a project that does not exist
                messages.error(request, "No such project among yours.")
                return redirect("delivery:notification-settings")
        on = set(request.POST.getlist("on"))
        off = [kind for kind in NotificationKind.values if kind not in on]
        try:
            notification_preferences_set(user=request.user, project=project, off=off)
        except ValidationError as refusal:
            messages.error(request, " ".join(refusal.messages))
        else:
            messages.success(request, f"Saved for {'all your projects' if project is None else project.code}.")
        return redirect("delivery:notification-settings")
