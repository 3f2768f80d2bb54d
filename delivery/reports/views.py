"""The acceptance report's pages: the project's versions with their state, progress, figures, files and the
customer's decisions; one version with its downloads, who issued it and who decided on it, the button that
issues it (managers, with what holds it back), and, on an issued version, the customer's forms that accept
it (plainly or with exceptions) or reject it; and "Check a file", which says which version (and which file
of it) a PDF or workbook someone holds is.

Every member reads them and checks files; managers ask for a new version (after an acceptance: the as-built
addendum) and issue one; the customer decides (the service says who may: a member with the customer role).
Outsiders get 404, anonymous visitors the login page (projects.access.ProjectViewMixin).

Checking a file: with JavaScript in a secure context the browser hashes the file (crypto.subtle) and sends
only its SHA-256 (GET check/?sha256=, answered in JSON); otherwise the file is uploaded (POST check/) and
hashed by the service as it streams from Django's temporary file. Both answer the re-rendered page to a
plain form, and JSON to static/js/report-verify.js.
"""

from __future__ import annotations

from dataclasses import dataclass

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.generic.base import ContextMixin, TemplateResponseMixin

from core.api.parsers import declared_length
from core.choices import JobStatus
from core.forms import add_service_errors
from delivery.choices import ReportDecision, ReportState, StageStatus
from delivery.models import CONTENT_TYPES, FILE_KINDS, FileKind, ReportVersion, Stage
from delivery.reports.acceptance import (
    ADDENDUM,
    acceptance_exceptions,
    accepted_at,
    addendum_title,
    changes_since,
    exception_counts,
)
from delivery.reports.gates import ACCEPTANCE_SIGNED
from delivery.reports.sections import READY, SECTION_TITLES, acceptance_statement_default
from delivery.reports.selectors import report_version_for, report_versions_visible
from delivery.reports.services import (
    COMMENTS_LENGTH,
    NAME_LENGTH,
    STATEMENT_LENGTH,
    TITLE_LENGTH,
    Match,
    file_sha256,
    report_decision_refusal,
    report_hash_match,
    report_issue_refusal,
    report_match_limit,
    report_version_issue,
    report_version_reject,
    report_version_request,
    report_version_sign,
    sha256_normalised,
)
from projects.access import Capability, ProjectViewMixin
from projects.choices import Role
from projects.reports import report_registry

# A multipart body carries the file plus its boundaries and the CSRF field: allow that much over the file.
MULTIPART_OVERHEAD = 64 * 1024

# How a sentence names each file ("matches version 3 (full PDF)").
KIND_WORDS = {
    FileKind.PDF: "full PDF",
    FileKind.SUMMARY_PDF: "summary PDF",
    FileKind.XLSX: "Excel workbook",
    FileKind.SIGNED_PDF: "signed copy of the full PDF",
    FileKind.SIGNED_XLSX: "signed copy of the Excel workbook",
}


def _day(moment) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d}"


def _wants_json(request) -> bool:
    return "application/json" in request.headers.get("Accept", "")


# --- what the pages show of a version --------------------------------------------------------------------


@dataclass(frozen=True)
class VersionFile:
    kind: str
    label: str
    name: str
    size: int | None
    sha256: str
    url: str


def version_files(version: ReportVersion) -> list[VersionFile]:
    """The version's rendered files, originals first, each with its download URL (no query)."""
    code = version.project.code
    return [
        VersionFile(kind=kind, label=FileKind(kind).label, name=version.file_name(kind),
                    size=version.size_of(kind), sha256=version.sha256_of(kind),
                    url=reverse("reports:file", args=[code, version.number, kind]))
        for kind in FILE_KINDS if version.has_file(kind)
    ]


def _dressed(version: ReportVersion) -> ReportVersion:
    """The version with what its templates show beside the row: its files, whether its figures call the
    project ready, whether it waits for the customer's decision, and that decision (no query: the list's
    select_related brought them)."""
    version.files = version_files(version)
    version.ready = (version.figures or {}).get("verdict") == READY
    version.awaits_decision = version.state == ReportState.ISSUED
    version.shows_state = version.status == JobStatus.DONE or version.state != ReportState.DRAFT
    version.decision = version.signature_or_none
    return version


def _section_titles(version: ReportVersion) -> list[str]:
    """The report's contents, from the section keys its snapshot recorded (in the figures)."""
    titles = {registered.key: registered.title for registered in report_registry.sections()}
    if version.is_addendum:
        titles[ADDENDUM] = addendum_title(version.addendum_to.number)
    return [titles.get(key) or SECTION_TITLES.get(key, key) for key in (version.figures or {}).get("sections") or ()]


# --- checking a file -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckOutcome:
    """What checking one file (or one SHA-256) found, worded once for the page and the JSON."""

    project_code: str
    sha256: str
    matches: list[Match]
    file_name: str = ""

    @property
    def matched(self) -> bool:
        return bool(self.matches)

    @staticmethod
    def match_text(match: Match) -> str:
        text = f"Matches version {match.number} ({KIND_WORDS[match.kind]})"
        signature = match.signature
        if signature is None:
            return text + ", not signed."
        if signature.is_rejection:
            return text + f", rejected {_day(signature.signed_at)} by {signature.name}."
        return text + f", signed {_day(signature.signed_at)} by {signature.name}."

    @property
    def message(self) -> str:
        if not self.matches:
            return (f"No match: this file is none of the files of {self.project_code}'s acceptance report. "
                    "It was changed, or it comes from elsewhere.")
        return " ".join(self.match_text(match) for match in self.matches)

    def lines(self) -> list[dict]:
        return [
            {"version": match.number, "kind": match.kind, "kind_label": FileKind(match.kind).label,
             "text": self.match_text(match), "signed": match.signature is not None and match.signature.is_acceptance,
             "signed_at": match.signature.signed_at.isoformat() if match.signature else None,
             "signed_by": match.signature.name if match.signature else "",
             "url": reverse("reports:version", args=[self.project_code, match.number])}
            for match in self.matches
        ]

    def as_json(self) -> dict:
        return {"sha256": self.sha256, "file_name": self.file_name, "matched": self.matched,
                "message": self.message, "matches": self.lines()}


class CheckFileForm(forms.Form):
    file = forms.FileField(label="File", help_text="A PDF or Excel file of this project's acceptance report.",
                           error_messages={"required": "Choose the file to check."})

    @classmethod
    def refused(cls, message: str) -> CheckFileForm:
        """A form carrying one error on `file`, for a refusal made before the request's body is read."""
        form = cls()
        form.cleaned_data = {}  # what add_error expects of a form that was cleaned
        form.add_error("file", message)
        return form


class CheckHashForm(forms.Form):
    sha256 = forms.CharField(label="SHA-256", max_length=100, strip=True,
                             error_messages={"required": "Paste the file's SHA-256 (64 hexadecimal characters)."})


# --- the list page and its forms -------------------------------------------------------------------------


class GenerateForm(forms.Form):
    """No fields: the button. It carries the service's refusal (nothing changed since the acceptance, one is
    queued)."""


class _ListPage(ProjectViewMixin, TemplateResponseMixin, ContextMixin, View):
    template_name = "delivery/reports/report_list.html"

    def render_list(self, *, status: int = 200, **context):
        context.setdefault("check_form", CheckFileForm())
        context.setdefault("hash_form", CheckHashForm())
        context.setdefault("generate_form", GenerateForm())
        return self.render_to_response(self.get_context_data(**context), status=status)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        versions = [_dressed(version) for version in report_versions_visible(self.request.user, self.project)]
        accepted = next((version for version in versions if version.is_accepted), None)
        context.update(versions=versions, accepted_version=accepted,
                       check_max_bytes=settings.REPORT_MATCH_MAX_BYTES, is_customer=self.role == Role.CUSTOMER,
                       can_generate=context["can_manage_project"])
        if accepted is not None and context["can_manage_project"]:
            context.update(self.changes_context(accepted, versions))
        return context

    def changes_context(self, accepted: ReportVersion, versions: list[ReportVersion]) -> dict:
        """What changed on the floor since the acceptance, and since the latest as-built addendum (what a new
        one would list): a few counts, the same queries however many versions or swaps."""
        latest = next((version for version in versions if version.addendum_to_id == accepted.pk
                       and version.status != JobStatus.FAILED), None)
        since_acceptance = changes_since(self.project, accepted_at(accepted))
        since_latest = changes_since(self.project, latest.created_at) if latest is not None else since_acceptance
        return {"changes_since_acceptance": since_acceptance, "latest_addendum": latest,
                "changes_since_latest": since_latest}


class ReportListView(_ListPage):
    def get(self, request, *args, **kwargs):
        return self.render_list()


class ReportGenerateView(_ListPage):
    """A manager asks for the next version; it renders in the background (at once without a broker)."""

    required_capability = Capability.MANAGE_PROJECT

    def post(self, request, *args, **kwargs):
        form = GenerateForm(request.POST)
        try:
            version = report_version_request(project=self.project, user=request.user)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.render_list(generate_form=form, status=400)
        what = (f"Version {version.number}, the as-built addendum to version {version.addendum_to.number},"
                if version.is_addendum else f"Version {version.number} of the acceptance report")
        messages.success(request, f"{what} requested.")
        return redirect("reports:version", self.project.code, version.number)


@method_decorator(csrf_exempt, name="dispatch")  # checked in post(), once the body's size is known to be sane
class ReportCheckView(_ListPage):
    """Which version a file is: GET ?sha256= (what the browser hashed) or POST a file (multipart). Every member
    may check: it reads the versions and writes nothing, though an upload has to be a POST."""

    # The customer checks what they were sent: a POST (an upload) that changes nothing. The access matrix's
    # "a customer writes nothing" cannot say so: the route is in its EXEMPT list (tests/access_world.py).
    write_capability = Capability.VIEW

    def get(self, request, *args, **kwargs):
        if "sha256" not in request.GET:
            return redirect("reports:list", self.project.code)
        form = CheckHashForm(request.GET)
        if not form.is_valid():
            return self._refused(hash_form=form)
        try:
            sha256 = sha256_normalised(form.cleaned_data["sha256"])
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self._refused(hash_form=form)
        matches = report_hash_match(project=self.project, sha256=sha256)
        name = request.GET.get("name", "")[:200]  # the file's name, which the browser sends beside its hash
        return self._found(CheckOutcome(self.project.code, sha256, matches, file_name=name))

    def post(self, request, *args, **kwargs):
        # Refused before Django reads (and spools to disk) a body larger than the largest file the project's
        # versions recorded: a larger file matches none of them, so nobody needs to send one.
        limit = report_match_limit(self.project)
        if declared_length(request.META) > limit + MULTIPART_OVERHEAD:
            form = CheckFileForm.refused(
                f"The file is larger than {limit:,} bytes, the largest file of this project's report versions: it is "
                "none of them." if limit else "No version of the report is rendered yet: there is nothing to check "
                "a file against.")
            return self._refused(check_form=form, status=413)
        return csrf_protect(self._check_upload)(request, *args, **kwargs)

    def _check_upload(self, request, *args, **kwargs):
        form = CheckFileForm(request.POST, request.FILES)
        if not form.is_valid():
            return self._refused(check_form=form)
        upload = form.cleaned_data["file"]
        try:
            with upload:  # hashed in 1 MiB chunks from Django's temporary file, then closed (and deleted)
                sha256 = file_sha256(upload)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self._refused(check_form=form)
        matches = report_hash_match(project=self.project, sha256=sha256)
        return self._found(CheckOutcome(self.project.code, sha256, matches, file_name=upload.name[:200]))

    def _found(self, outcome: CheckOutcome):
        if _wants_json(self.request):
            return JsonResponse(outcome.as_json())
        return self.render_list(check=outcome)

    def _refused(self, *, status: int = 400, **forms_with_errors):
        if _wants_json(self.request):
            errors = {}
            for form in forms_with_errors.values():
                errors |= {field or "non_field_errors": list(messages_) for field, messages_ in form.errors.items()}
            return JsonResponse({"errors": errors}, status=status)
        return self.render_list(status=status, **forms_with_errors)


# --- one version -----------------------------------------------------------------------------------------


class SignForm(forms.Form):
    """The customer accepts an issued version: plainly, or with the exceptions the page lists (`decision`, set
    by the page from what it showed; the service refuses a plain acceptance while there are exceptions)."""

    name = forms.CharField(max_length=NAME_LENGTH, label="Your name", help_text="As it should appear on the report.")
    title = forms.CharField(max_length=TITLE_LENGTH, label="Your title", help_text="Your position at your company.")
    statement = forms.CharField(max_length=STATEMENT_LENGTH, widget=forms.Textarea(attrs={"rows": 6}),
                                help_text="The standard statement; you may word your own.")
    comments = forms.CharField(max_length=COMMENTS_LENGTH, required=False, label="Comments (optional)",
                               widget=forms.Textarea(attrs={"rows": 3}),
                               help_text="On the exceptions, for instance: recorded with your signature.")
    decision = forms.ChoiceField(choices=[(ReportDecision.ACCEPTED, ReportDecision.ACCEPTED.label),
                                          (ReportDecision.ACCEPTED_WITH_EXCEPTIONS,
                                           ReportDecision.ACCEPTED_WITH_EXCEPTIONS.label)],
                                 initial=ReportDecision.ACCEPTED, required=False, widget=forms.HiddenInput)
    has_read = forms.BooleanField(error_messages={"required": "Confirm that you have read this version."})

    def __init__(self, *args, number: int, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["has_read"].label = f"I have read version {number} of the acceptance report"


class RejectForm(forms.Form):
    """The customer rejects an issued version, saying why."""

    name = forms.CharField(max_length=NAME_LENGTH, label="Your name", help_text="As it should appear on the report.")
    title = forms.CharField(max_length=TITLE_LENGTH, label="Your title", help_text="Your position at your company.")
    comments = forms.CharField(max_length=COMMENTS_LENGTH, label="Why you reject it",
                               widget=forms.Textarea(attrs={"rows": 4}),
                               help_text="The managers fix what you name, then issue the next version.",
                               error_messages={"required": "Say why you reject this version."})

    def __init__(self, *args, prefix: str = "reject", **kwargs):
        super().__init__(*args, prefix=prefix, **kwargs)


class IssueForm(forms.Form):
    """No fields: the manager's button. It carries the service's refusal (what is left before issuing)."""


def _signer_name(user) -> str:
    return " ".join(filter(None, [user.first_name, user.last_name])) or user.get_username()


class _VersionPage(ProjectViewMixin, TemplateResponseMixin, ContextMixin, View):
    template_name = "delivery/reports/report_version.html"

    def version(self) -> ReportVersion:
        return report_version_for(self.request.user, self.project, self.kwargs["number"])

    def render_version(self, version: ReportVersion, *, status: int = 200, **forms_posted):
        return self.render_to_response(self.get_context_data(version=version, **forms_posted), status=status)

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        version = _dressed(context["version"])
        signature = version.signature_or_none
        context.update(signature=signature, contents=_section_titles(version),
                       exceptions_recorded=signature.exceptions if signature is not None else {},
                       addenda=list(version.addenda.order_by("number")) if version.is_accepted else [])
        if self.role == Role.CUSTOMER:
            context.update(self.decision_context(version, context))
        elif context["can_manage_project"]:
            context.update(self.issue_context(version, context))
        if signature is not None and signature.is_acceptance:
            stage = Stage.objects.filter(project=self.project, gate_key=ACCEPTANCE_SIGNED).order_by("order").first()
            context.update(acceptance_stage=stage,
                           acceptance_complete=stage is not None and stage.status == StageStatus.DONE)
        return context

    def decision_context(self, version: ReportVersion, context: dict) -> dict:
        """The customer's forms, on an issued version only, with the exceptions that stand now (what an
        acceptance would record); otherwise why they may not decide. A form just posted shows again whatever
        the state, with the service's refusal on it."""
        posted = context.get("sign_form") is not None or context.get("reject_form") is not None
        if not posted and not version.awaits_decision:
            return {"may_decide": False,
                    "decision_refusal": "" if version.decision else report_decision_refusal(version)}
        exceptions = acceptance_exceptions(self.project)
        counts = exception_counts(exceptions)
        decision = ReportDecision.ACCEPTED_WITH_EXCEPTIONS if counts else ReportDecision.ACCEPTED
        name = _signer_name(self.request.user)
        sign_form = context.get("sign_form") or SignForm(number=version.number, initial={
            "name": name, "statement": acceptance_statement_default(self.project), "decision": decision})
        reject_form = context.get("reject_form") or RejectForm(initial={"name": name})
        return {"may_decide": True, "sign_form": sign_form, "reject_form": reject_form,
                "exceptions_now": exceptions, "exception_counts": counts,
                "with_exceptions": sign_form["decision"].value() == ReportDecision.ACCEPTED_WITH_EXCEPTIONS}

    def issue_context(self, version: ReportVersion, context: dict) -> dict:
        """The manager's Issue button on a rendered draft (not an addendum), or what holds it back."""
        issuable = (version.state == ReportState.DRAFT and not version.is_addendum
                    and version.status == JobStatus.DONE)
        if not issuable and context.get("issue_form") is None:
            return {}
        refusal = report_issue_refusal(version) if context.get("issue_form") is None else []
        return {"issue_section": True, "issue_refusal": refusal, "issue_form": context.get("issue_form") or IssueForm()}


class ReportVersionView(_VersionPage):
    def get(self, request, *args, **kwargs):
        return self.render_version(self.version())


class ReportIssueView(_VersionPage):
    """A manager issues the version for acceptance; the service refuses in words while gates fail unwaived."""

    write_capability = Capability.MANAGE_PROJECT

    def post(self, request, *args, **kwargs):
        version = self.version()
        form = IssueForm(request.POST)
        try:
            report_version_issue(version=version, user=request.user)
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.render_version(self.version(), issue_form=form, status=400)
        messages.success(request, f"Version {version.number} is issued for acceptance: the customer may now accept "
                                  "or reject it.")
        return redirect("reports:version", self.project.code, version.number)


class ReportSignView(_VersionPage):
    """The customer accepts the version, plainly or with exceptions. The service decides who may (a member with
    the customer role, on an issued version) and refuses in words; the form only checks what was typed."""

    # A customer's write: the service admits the customer role only (in the access matrix's EXEMPT list).
    write_capability = Capability.VIEW

    def post(self, request, *args, **kwargs):
        version = self.version()
        form = SignForm(request.POST, number=version.number)
        if not form.is_valid():
            return self.render_version(version, sign_form=form, status=400)
        data = form.cleaned_data
        try:
            report_version_sign(version=version, user=request.user, name=data["name"], title=data["title"],
                                statement=data["statement"], decision=data["decision"] or ReportDecision.ACCEPTED,
                                comments=data["comments"])
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.render_version(version, sign_form=form, status=400)
        how = " with exceptions" if data["decision"] == ReportDecision.ACCEPTED_WITH_EXCEPTIONS else ""
        messages.success(request, f"Version {version.number} accepted{how} and signed. Thank you: acceptance is "
                                  "recorded.")
        return redirect("reports:version", self.project.code, version.number)


class ReportRejectView(_VersionPage):
    """The customer rejects the version with comments; the service decides who may, as for signing."""

    write_capability = Capability.VIEW  # a customer's write (in the access matrix's EXEMPT list)

    def post(self, request, *args, **kwargs):
        version = self.version()
        form = RejectForm(request.POST)
        if not form.is_valid():
            return self.render_version(version, reject_form=form, status=400)
        data = form.cleaned_data
        try:
            report_version_reject(version=version, user=request.user, name=data["name"], title=data["title"],
                                  comments=data["comments"])
        except ValidationError as exc:
            add_service_errors(form, exc)
            return self.render_version(version, reject_form=form, status=400)
        messages.success(request, f"Version {version.number} rejected. The managers are told, with your comments.")
        return redirect("reports:version", self.project.code, version.number)


class ReportFileView(ProjectViewMixin, View):
    """One file of a version, as an attachment named <CODE>-acceptance-v<N>[-summary|-signed].pdf/.xlsx."""

    def get(self, request, *args, **kwargs):
        version = report_version_for(request.user, self.project, kwargs["number"])
        kind = kwargs["kind"]
        if kind not in FILE_KINDS or not version.has_file(kind):
            raise Http404("This file of the version is not rendered.")
        try:
            handle = version.file_of(kind).open("rb")
        except FileNotFoundError as exc:
            raise Http404("The stored file is gone: ask a manager for a new version.") from exc
        return FileResponse(handle, as_attachment=True, filename=version.file_name(kind),
                            content_type=CONTENT_TYPES[kind])
