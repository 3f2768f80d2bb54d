"""The punch list pages: the project's items (filtered, paginated), one item with its history and the
forms that move it, and the "new item" form (opened from any object's page with ?kind=&id=).

Every member reads the list (a customer only the customer-visible items; an internal one is a 404 to
them); technicians and managers open, edit and move items; only managers close as won't fix (the service
says so); nobody marks an item verified (the sync does, delivery.punch.services). Outsiders get 404."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.shortcuts import redirect
from django.urls import reverse
from django.views import View
from django.views.generic import TemplateView

from core.forms import add_service_errors
from core.history import history_rows
from core.views import FilteredListView
from delivery.choices import PunchSeverity, PunchStatus
from delivery.punch import services as punch
from delivery.punch.selectors import PunchItemFilterSet, punch_item_detail, punch_item_list, punch_object_label
from projects.access import Capability, ProjectViewMixin, can, roles_with


def _workers(project):
    """The people an item may be assigned to: the project's technicians and managers."""
    return get_user_model().objects.filter(
        memberships__project=project, memberships__role__in=roles_with(Capability.RUN_CHECKS)
    ).order_by("username")


class PunchItemForm(forms.Form):
    title = forms.CharField(max_length=200)
    severity = forms.ChoiceField(choices=PunchSeverity.choices, initial=PunchSeverity.MAJOR)
    description = forms.CharField(required=False, max_length=10_000, widget=forms.Textarea(attrs={"rows": 3}))
    assignee = forms.ModelChoiceField(queryset=None, required=False)
    due_date = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    customer_visible = forms.BooleanField(required=False, label="Visible to the customer")

    def __init__(self, *args, project, manager: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assignee"].queryset = _workers(project)
        if not manager:  # only a manager shows an item to the customer
            del self.fields["customer_visible"]


class PunchListView(ProjectViewMixin, FilteredListView):
    template_name = "delivery/punch/punch_list.html"
    context_object_name = "items"
    filterset_class = PunchItemFilterSet

    def base_queryset(self):
        return punch_item_list(user=self.request.user, project=self.project).order_by("-opened_at", "-id")

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["can_open"] = can(self.request.user, Capability.RUN_CHECKS, self.project)
        return context


class PunchDetailView(ProjectViewMixin, TemplateView):
    template_name = "delivery/punch/punch_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        item = punch_item_detail(user=self.request.user, project=self.project, pk=kwargs["pk"])
        can_work = can(self.request.user, Capability.RUN_CHECKS, self.project)
        # A customer reads the item as the acceptance report shows it: no internal notes (description,
        # fingerprint, the evidence trail) and no change history, which would repeat them.
        history = history_rows(item.history.all()) if can_work else []
        context.update(item=item, history=history, can_work=can_work)
        if can_work:
            manager = context["can_manage_project"]
            context["edit_form"] = PunchItemForm(project=self.project, manager=manager, initial={
                "title": item.title, "severity": item.severity, "description": item.description,
                "assignee": item.assignee_id, "due_date": item.due_date, "customer_visible": item.customer_visible,
            })
            context["statuses"] = [(s, PunchStatus(s).label) for s in punch.HAND_STATUSES
                                   if s != item.status and (manager or s != PunchStatus.WONT_FIX)]
        return context


class PunchCreateView(ProjectViewMixin, TemplateView):
    """GET: the form, prefilled with the object named by ?kind=&id= (an object of this project only);
    POST: opens the item through punch.punch_item_open and goes to it, or shows the refusal."""

    template_name = "delivery/punch/punch_form.html"
    required_capability = Capability.RUN_CHECKS

    def _object(self, data):
        kind, object_id = data.get("kind", ""), data.get("id", "")
        if not kind and not object_id:
            return "", None, "", None
        label = punch_object_label(project=self.project, kind=kind, object_id=object_id)
        if label is None:
            return "", None, "", f"No {kind or 'object'} #{str(object_id)[:20]} in this project."
        return kind, int(object_id), label, None

    def get(self, request, *args, **kwargs):
        kind, object_id, label, problem = self._object(request.GET)
        form = PunchItemForm(project=self.project, manager=can(request.user, Capability.MANAGE_PROJECT, self.project),
                             initial={"title": f"{label}: " if label else ""})
        status = 400 if problem else 200
        return self.render_to_response(self.get_context_data(form=form, kind=kind, object_id=object_id, label=label,
                                                             problem=problem), status=status)

    def post(self, request, *args, **kwargs):
        kind, object_id, label, problem = self._object(request.POST)
        manager = can(request.user, Capability.MANAGE_PROJECT, self.project)
        form = PunchItemForm(request.POST, project=self.project, manager=manager)
        if not problem and form.is_valid():
            data = form.cleaned_data
            try:
                item = punch.punch_item_open(
                    project=self.project, user=request.user, title=data["title"], severity=data["severity"],
                    description=data["description"], object_kind=kind, object_id=object_id, object_label=label,
                    assignee=data["assignee"], due_date=data["due_date"],
                    customer_visible=data.get("customer_visible", False),
                )
            except ValidationError as exc:
                add_service_errors(form, exc)
            else:
                messages.success(request, f"Punch item #{item.pk} opened.")
                return redirect("punch:detail", self.project.code, item.pk)
        return self.render_to_response(self.get_context_data(form=form, kind=kind, object_id=object_id, label=label,
                                                             problem=problem), status=400)


class _ItemAction(ProjectViewMixin, View):
    """A POST about one item the user can see; back to the item with what happened."""

    required_capability = Capability.RUN_CHECKS

    def post(self, request, *args, **kwargs):
        item = punch_item_detail(user=request.user, project=self.project, pk=kwargs["pk"])
        try:
            done = self.act(item)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, done)
        return redirect(reverse("punch:detail", args=[self.project.code, item.pk]))


class PunchEditView(_ItemAction):
    def act(self, item) -> str:
        form = PunchItemForm(self.request.POST, project=self.project,
                             manager=can(self.request.user, Capability.MANAGE_PROJECT, self.project))
        if not form.is_valid():
            raise ValidationError([f"{name}: {' '.join(errors)}" for name, errors in form.errors.items()])
        data = form.cleaned_data
        punch.punch_item_update(item=item, user=self.request.user, title=data["title"], severity=data["severity"],
                                description=data["description"], assignee=data["assignee"],
                                due_date=data["due_date"], customer_visible=data.get("customer_visible"))
        return "Saved."


class PunchStatusView(_ItemAction):
    def act(self, item) -> str:
        # The service refuses what a person may not do (verified by hand, won't fix without a manager or
        # a reason), in its own words.
        item = punch.punch_item_set_status(item=item, user=self.request.user,
                                           status=self.request.POST.get("status", "")[:20],
                                           note=self.request.POST.get("note", ""))
        return f"Now {item.get_status_display().lower()}."
