"""Swap pages under /p/<code>/cabling/swaps/: the project's swaps with their RMA (filtered by RMA state,
kind, serial or case), one swap with its RMA form, and the "Replace" form reached from a cable's page or an
optic's. The project's technicians and managers read and write them (EDIT_INVENTORY); customers get 403
and outsiders 404, through projects.access.ProjectViewMixin. Each form posts to one service and shows its
refusal next to the field it names (core.forms.add_service_errors)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.generic import FormView

from cabling.choices import CableStatus, SwapKind
from cabling.models import Cable, CableEnd
from cabling.selectors import cable_list
from cabling.swaps.filters import SwapFilterSet
from cabling.swaps.forms import SwapForm, SwapRmaForm
from cabling.swaps.selectors import swap_detail, swap_list
from cabling.swaps.services import cable_swap, optic_swap, swap_rma_update
from core.forms import add_service_errors
from core.views import FilteredListView
from inventory.selectors import optic_list
from projects.access import Capability, ProjectViewMixin

SWAPPING = Capability.EDIT_INVENTORY


class SwapListView(ProjectViewMixin, FilteredListView):
    template_name = "cabling/swaps/list.html"
    context_object_name = "swaps"
    filterset_class = SwapFilterSet
    required_capability = SWAPPING

    def base_queryset(self):
        return swap_list(user=self.request.user, project=self.project)


class SwapDetailView(ProjectViewMixin, FormView):
    """One swap: what went out and in, why, who and when, and the RMA form."""

    template_name = "cabling/swaps/detail.html"
    form_class = SwapRmaForm
    required_capability = SWAPPING

    def get_swap(self):
        if not hasattr(self, "swap"):
            self.swap = swap_detail(user=self.request.user, project=self.project, pk=self.kwargs["pk"])
        return self.swap

    def get_initial(self):
        swap = self.get_swap()
        return {"rma_case": swap.rma_case, "rma_state": swap.rma_state}

    def form_valid(self, form):
        try:
            swap = swap_rma_update(swap=self.get_swap(), user=self.request.user, **form.cleaned_data)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"RMA of swap {swap.pk}: {swap.get_rma_state_display()}.")
        return redirect(reverse("cabling:swap-detail", args=[self.project.code, swap.pk]))

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        swap = self.get_swap()
        context["swap"] = swap
        context["rescan"] = _cables_to_rescan(swap)
        return context


def _cables_to_rescan(swap) -> list[Cable]:
    """The cables a swap sent back through verification that are still waiting for their scans."""
    if swap.kind == SwapKind.CABLE:
        cables = Cable.objects.filter(pk=swap.cable_id)
    else:
        cables = Cable.objects.filter(pk__in=CableEnd.objects.filter(
            Q(port_id=swap.port_id) | Q(port__parent_id=swap.port_id)).values("cable_id"))
    return list(cables.filter(status=CableStatus.INSTALLED).order_by("label"))


class SwapCreateView(ProjectViewMixin, FormView):
    """"Replace" for one optic (seated in a port) or one cable of the project; `kind` says which."""

    template_name = "cabling/swaps/form.html"
    form_class = SwapForm
    required_capability = SWAPPING
    kind: str = SwapKind.OPTIC

    def get_target(self):
        if not hasattr(self, "target"):
            if self.kind == SwapKind.OPTIC:
                self.target = get_object_or_404(optic_list(user=self.request.user, project=self.project),
                                                pk=self.kwargs["pk"])
            else:
                self.target = get_object_or_404(cable_list(user=self.request.user, project=self.project),
                                                pk=self.kwargs["pk"])
        return self.target

    def get_form(self, form_class=None):
        form = super().get_form(form_class)
        if self.kind == SwapKind.OPTIC:
            del form.fields["old_serial"]  # an optic's serial is always known
        return form

    def form_valid(self, form):
        target, data = self.get_target(), form.cleaned_data
        try:
            if self.kind == SwapKind.OPTIC:
                swap = optic_swap(optic=target, user=self.request.user, **data)
            else:
                swap = cable_swap(cable=target, user=self.request.user, **data)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.form_invalid(form)
        messages.success(self.request, f"Swap recorded: {swap.serials_text}. Scan the cable's ends again to "
                                       "verify it.")
        return redirect(reverse("cabling:swap-detail", args=[self.project.code, swap.pk]))

    def form_invalid(self, form):
        return self.render_to_response(self.get_context_data(form=form), status=400)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        context["kind"] = self.kind
        context["target"] = self.get_target()
        return context
