"""Creating a project from the site: the form (code, name, customer, site, target date, first members as
"username role" lines, a stage template) and the service that makes the project, its memberships and its
stages in one transaction.

Who may: staff, or a user granted the `projects.add_project` permission (in the admin, to the managers
who start projects). Everyone else gets 403 for the page.
"""

from __future__ import annotations

from django import forms
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from core.spreadsheets import FORMULA_LEADS
from delivery.models import StageTemplate
from delivery.stages.services import stage_template_default, stages_create_from_template
from projects.choices import Role
from projects.models import Project
from projects.services import membership_set, project_create

MAX_MEMBERS = 50
MEMBERS_TEXT_LENGTH = 4000


def may_create_projects(user) -> bool:
    return user.is_authenticated and (user.is_staff or user.has_perm("projects.add_project"))


def _no_formula(value: str) -> None:
    """Names end up in spreadsheets and reports: text a spreadsheet would run as a formula is refused."""
    if value and value.lstrip(" ").startswith(FORMULA_LEADS):
        raise ValidationError("Must not start with =, +, -, @ or a tab (a spreadsheet would run it as a formula).")


def parse_members(text: str) -> list[tuple[str, str]]:
    """[(username, role)] from lines of "username role" (role: manager, technician or customer); errors name
    the line."""
    members, errors, seen = [], [], set()
    roles = {value: value for value in Role.values} | {label.lower(): value for value, label in Role.choices}
    lines = [line.strip() for line in text.splitlines()]
    lines = [(number, line) for number, line in enumerate(lines, start=1) if line]
    if len(lines) > MAX_MEMBERS:
        raise ValidationError(f"At most {MAX_MEMBERS} members here; add more later.")
    for number, line in lines:
        parts = line.split()
        if len(parts) != 2 or parts[1].lower() not in roles:
            errors.append(f'Line {number}: "username role", the role one of {", ".join(Role.values)}.')
            continue
        username = parts[0]
        if username.lower() in seen:
            errors.append(f"Line {number}: {username} is listed twice.")
            continue
        seen.add(username.lower())
        members.append((username, roles[parts[1].lower()]))
    if errors:
        raise ValidationError(errors)
    return members


class ProjectCreateForm(forms.Form):
    code = forms.CharField(max_length=32, help_text="2-32 upper-case letters, digits and dashes, e.g. ACME-72.")
    name = forms.CharField(max_length=200, validators=[_no_formula])
    name_zh = forms.CharField(max_length=200, required=False, label="Name (Chinese)", validators=[_no_formula],
                              help_text="Optional: printed beside the name in the acceptance report.")
    customer_name = forms.CharField(max_length=200, label="Customer", validators=[_no_formula])
    customer_name_zh = forms.CharField(max_length=200, required=False, label="Customer (Chinese)",
                                       validators=[_no_formula], help_text="Optional: as on the customer's contract.")
    site = forms.CharField(max_length=200, required=False, validators=[_no_formula],
                           help_text="Data centre and hall, as the customer names it.")
    target_date = forms.DateField(required=False, help_text="Planned customer acceptance, YYYY-MM-DD.",
                                  widget=forms.DateInput(attrs={"type": "date"}))
    members = forms.CharField(
        required=False, max_length=MEMBERS_TEXT_LENGTH, label="First members",
        widget=forms.Textarea(attrs={"rows": 4, "placeholder": "alice manager\nbob technician\ncarol customer"}),
        help_text='One "username role" a line (manager, technician, customer). You become a manager if no '
        "manager is listed.",
    )
    template = forms.ModelChoiceField(queryset=StageTemplate.objects.order_by("name"), required=False,
                                      empty_label=None, label="Stage template")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["template"].initial = stage_template_default().pk

    def clean_code(self):
        code = self.cleaned_data["code"].strip().upper()
        if Project.objects.filter(code=code).exists():
            raise ValidationError(f"A project {code} exists already.")
        return code

    def clean_members(self):
        members = parse_members(self.cleaned_data["members"])
        users = get_user_model().objects.filter(username__in=[u for u, _ in members])
        found = {u.username: u for u in users}
        unknown = [u for u, _ in members if u not in found]
        if unknown:
            raise ValidationError(f"No such user: {', '.join(unknown)}.")
        return [(found[u], role) for u, role in members]


@transaction.atomic
def project_create_with_team(*, creator, code: str, name: str, customer_name: str, site: str = "",
                             target_date=None, members: list[tuple[object, str]] = (),
                             template: StageTemplate | None = None, name_zh: str = "",
                             customer_name_zh: str = "") -> Project:
    """The project, its first members (the creator a manager when nobody else is) and the stages of
    `template` (the default one when None), or nothing at all when any part is refused."""
    project = project_create(code=code, name=name, customer_name=customer_name, site=site, target_date=target_date,
                             name_zh=name_zh, customer_name_zh=customer_name_zh)
    members = list(members)
    if not any(role == Role.MANAGER for _, role in members) and creator.pk not in {u.pk for u, _ in members}:
        members.insert(0, (creator, Role.MANAGER))
    elif not any(role == Role.MANAGER for _, role in members):
        raise ValidationError({"members": "List at least one manager: a project needs one."})
    for user, role in members:
        membership_set(project=project, user=user, role=role)
    stages_create_from_template(project=project, template=template)
    return project
