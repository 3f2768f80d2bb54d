"""The stages pages: a project's stages with their gates as last computed, one stage with its gate items,
checklist, waivers and the runs its start started, and the forms that post to the workflow services.

Every member reads them; managers start, complete, skip and waive; technicians (and managers) confirm
checklist items; outsiders get 404 (projects.access.ProjectViewMixin)."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect
from django.views import View
from django.views.generic import TemplateView

from delivery.choices import SATISFIED_STAGE_STATUSES, StageStatus
from delivery.models import ChecklistItem
from delivery.stages import services
from delivery.stages.selectors import current_stage, stage_detail, stage_jobs, stage_list, waivers_named
from delivery.stages.work import STAGE_RUNNERS
from projects.access import Capability, ProjectViewMixin, can


class SkipForm(forms.Form):
    reason = forms.CharField(max_length=services.REASON_LENGTH, widget=forms.TextInput(attrs={"required": True}))

    def __init__(self, *args, **kwargs):
        # Both forms sit on the stage page and both have a "reason": distinct ids keep each label on its field.
        kwargs.setdefault("auto_id", "skip_%s")
        super().__init__(*args, **kwargs)


class WaiverForm(forms.Form):
    reason = forms.CharField(max_length=services.WAIVER_REASON_LENGTH, widget=forms.Textarea(attrs={"rows": 3}))
    items = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)
    all_items = forms.BooleanField(required=False, label="Waive every missing item")

    def __init__(self, *args, stage=None, **kwargs):
        kwargs.setdefault("auto_id", "waiver_%s")
        super().__init__(*args, **kwargs)
        self.fields["items"].choices = [(i.get("ref"), i.get("label")) for i in (stage.gate_missing if stage else [])]


class CustomStageForm(forms.Form):
    title = forms.CharField(max_length=100)
    checklist = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), help_text="One item per line.")
    depends_on = forms.MultipleChoiceField(required=False, widget=forms.CheckboxSelectMultiple)

    def __init__(self, *args, stages=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["depends_on"].choices = [(s.key, s.title) for s in stages]


def _stage_url(view, stage) -> str:
    from django.urls import reverse

    return reverse("stages:detail", args=[view.project.code, stage.key])


class StageListView(ProjectViewMixin, TemplateView):
    template_name = "delivery/stages/stage_list.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        stages = list(stage_list(user=self.request.user, project=self.project))
        context["stages"] = stages
        context["current"] = current_stage(stages)
        context["computed_at"] = max((s.gate_computed_at for s in stages if s.gate_computed_at), default=None)
        if context["can_manage_project"]:
            context["custom_form"] = CustomStageForm(stages=stages)
        return context


class StageDetailView(ProjectViewMixin, TemplateView):
    template_name = "delivery/stages/stage_detail.html"

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        stage = stage_detail(user=self.request.user, project=self.project, key=kwargs["key"])
        waivers = list(stage.waivers.all())
        covered = services.waivers_cover(stage, waivers)
        context.update(
            stage=stage,
            checklist=list(stage.checklist.all()),
            waivers=waivers_named(waivers, project=self.project),
            # A missing item a waiver covers shows as waived: by its ref, or all of them when the waivers cover
            # the gate as it stands.
            waived_refs={ref for waiver in waivers for ref in waiver.items or []},
            all_waived=covered and stage.gate_passed is False,
            jobs=stage_jobs(stage=stage),
            unmet=services.unmet_dependencies(stage),
            can_confirm=can(self.request.user, Capability.RUN_CHECKS, self.project),
            can_start=stage.status == StageStatus.NOT_STARTED,
            can_finish=stage.status not in SATISFIED_STAGE_STATUSES,
            covered=covered,
            runners=STAGE_RUNNERS,
            skip_form=SkipForm(),
            waiver_form=WaiverForm(stage=stage),
        )
        return context


class _StageAction(ProjectViewMixin, View):
    """A POST that calls one workflow service on the stage named in the URL, then goes back to the stage
    page with what happened (a refusal in the service's words)."""

    required_capability = Capability.MANAGE_PROJECT
    done = ""

    def post(self, request, *args, **kwargs):
        stage = stage_detail(user=request.user, project=self.project, key=kwargs["key"])
        try:
            self.act(stage)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, self.done.format(stage=stage))
        return redirect(_stage_url(self, stage))

    def act(self, stage) -> None:
        raise NotImplementedError


class StageStartView(_StageAction):
    done = "{stage.title} started."

    def act(self, stage) -> None:
        services.stage_start(stage=stage, user=self.request.user,
                             runner=self.request.POST.get("runner") or STAGE_RUNNERS[0])


class StageCompleteView(_StageAction):
    done = "{stage.title} completed."

    def act(self, stage) -> None:
        services.stage_complete(stage=stage, user=self.request.user)


class StageSkipView(_StageAction):
    done = "{stage.title} skipped."

    def act(self, stage) -> None:
        form = SkipForm(self.request.POST)
        if not form.is_valid():
            raise ValidationError("Say why the stage is skipped (at most 300 characters).")
        services.stage_skip(stage=stage, user=self.request.user, reason=form.cleaned_data["reason"])


class StageWaiveView(_StageAction):
    done = "Waiver recorded on {stage.title}."

    def act(self, stage) -> None:
        form = WaiverForm(self.request.POST, stage=stage)
        if not form.is_valid():
            raise ValidationError([f"{name}: {' '.join(errors)}" for name, errors in form.errors.items()])
        services.waiver_record(stage=stage, user=self.request.user, reason=form.cleaned_data["reason"],
                               items=form.cleaned_data["items"], all_items=form.cleaned_data["all_items"])


class ChecklistConfirmView(ProjectViewMixin, View):
    required_capability = Capability.RUN_CHECKS

    def post(self, request, *args, **kwargs):
        stage = stage_detail(user=request.user, project=self.project, key=kwargs["key"])
        item = get_object_or_404(ChecklistItem, stage=stage, pk=kwargs["pk"])
        try:
            services.checklist_item_confirm(item=item, user=request.user)
        except ValidationError as exc:
            messages.error(request, " ".join(exc.messages))
        else:
            messages.success(request, f"Confirmed: {item.text}.")
        return redirect(_stage_url(self, stage))


class StagesRecomputeView(ProjectViewMixin, View):
    """A manager asks for the gates again (after a change no service reports, such as a rack's budget)."""

    required_capability = Capability.MANAGE_PROJECT

    def post(self, request, *args, **kwargs):
        if services.gates_recompute_request(project_id=self.project.pk):
            messages.success(request, "The gates are being recomputed.")
        else:
            messages.info(request, "A recompute is already queued." if self.project.stages.exists()
                          else "The project has no stages yet.")
        return redirect("stages:list", self.project.code)


class StagesCreateView(ProjectViewMixin, View):
    """A manager gives a project without stages the default template's (and adds a custom stage)."""

    required_capability = Capability.MANAGE_PROJECT

    def post(self, request, *args, **kwargs):
        if "title" in request.POST:
            form = CustomStageForm(request.POST, stages=list(stage_list(user=request.user, project=self.project)))
            if not form.is_valid():
                messages.error(request, " ".join(f"{n}: {' '.join(e)}" for n, e in form.errors.items()))
                return redirect("stages:list", self.project.code)
            try:
                stage = services.stage_add_custom(
                    project=self.project, user=request.user, title=form.cleaned_data["title"],
                    checklist=form.cleaned_data["checklist"].splitlines(), depends_on=form.cleaned_data["depends_on"],
                )
            except ValidationError as exc:
                messages.error(request, " ".join(exc.messages))
                return redirect("stages:list", self.project.code)
            messages.success(request, f"Stage {stage.title} added.")
            return redirect(_stage_url(self, stage))
        created = services.stages_create_from_template(project=self.project)
        messages.success(request, f"{len(created)} stage(s) created from the default template.")
        return redirect("stages:list", self.project.code)
