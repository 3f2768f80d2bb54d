import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from projects.access import Capability, can
from projects.choices import Role
from projects.models import Membership
from projects.services import LastManagerError, membership_delete, membership_set
from tests.factories import MembershipFactory, ProjectFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_project_list_shows_only_the_users_projects(client_for, technician, project, other_project):
    response = client_for(technician).get(reverse("delivery:project-list"))
    assert response.status_code == 200
    assert project.code in response.content.decode()
    assert other_project.code not in response.content.decode()


def test_project_list_query_count_does_not_grow(client_for, django_assert_num_queries):
    user = UserFactory(username="many")
    for _ in range(3):
        MembershipFactory(user=user, project=ProjectFactory())
    client = client_for(user)
    client.get(reverse("delivery:project-list"))  # warm the session
    with django_assert_num_queries(3) as small:
        client.get(reverse("delivery:project-list"))
    for _ in range(20):
        MembershipFactory(user=user, project=ProjectFactory())
    with django_assert_num_queries(len(small.captured_queries)):
        client.get(reverse("delivery:project-list"))


def test_anonymous_is_sent_to_login(client, project):
    response = client.get(reverse("delivery:project-home", args=[project.code]))
    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_outsider_gets_404_on_project_home(client_for, outsider, project):
    assert client_for(outsider).get(reverse("delivery:project-home", args=[project.code])).status_code == 404


def test_member_sees_project_home(client_for, customer, project):
    response = client_for(customer).get(reverse("delivery:project-home", args=[project.code]))
    assert response.status_code == 200
    assert project.name in response.content.decode()


def test_staff_sees_every_project(client_for, project, other_project):
    staff = UserFactory(username="staff", is_staff=True)
    body = client_for(staff).get(reverse("delivery:project-list")).content.decode()
    assert project.code in body and other_project.code in body


@pytest.mark.parametrize(
    ("role", "capability", "allowed"),
    [
        (Role.MANAGER, Capability.MANAGE_PROJECT, True),
        (Role.TECHNICIAN, Capability.MANAGE_PROJECT, False),
        (Role.TECHNICIAN, Capability.EDIT_INVENTORY, True),
        (Role.CUSTOMER, Capability.EDIT_INVENTORY, False),
        (Role.CUSTOMER, Capability.VIEW, True),
    ],
)
def test_role_capabilities(project, role, capability, allowed):
    user = UserFactory()
    MembershipFactory(user=user, project=project, role=role)
    assert can(user, capability, project) is allowed


def test_login_page_logs_in_and_throttles_after_repeated_failures(client, settings, project):
    settings.AXES_FAILURE_LIMIT = 3
    UserFactory(username="alice")
    for _ in range(3):
        client.post(reverse("login"), {"username": "alice", "password": "wrong"}, REMOTE_ADDR="10.0.0.1")
    locked = client.post(reverse("login"), {"username": "alice", "password": "pw-for-tests-1"}, REMOTE_ADDR="10.0.0.1")
    assert locked.status_code == 429
    fresh = client.post(reverse("login"), {"username": "alice", "password": "pw-for-tests-1"}, REMOTE_ADDR="10.0.0.2")
    assert fresh.status_code == 302


class TestMembershipApi:
    url = "/api/memberships/"

    def test_manager_adds_a_member(self, api_for, manager, project):
        UserFactory(username="newtech")
        response = api_for(manager).post(
            self.url, {"project": project.code, "user": "newtech", "role": Role.TECHNICIAN}, format="json"
        )
        assert response.status_code == 201, response.content
        assert Membership.objects.filter(project=project, user__username="newtech", role=Role.TECHNICIAN).exists()

    def test_technician_cannot_change_membership(self, api_for, technician, customer, project):
        membership = Membership.objects.get(user=customer, project=project)
        response = api_for(technician).patch(f"{self.url}{membership.pk}/", {"role": Role.MANAGER}, format="json")
        assert response.status_code == 403
        membership.refresh_from_db()
        assert membership.role == Role.CUSTOMER
        newcomer = UserFactory(username="newcomer")  # a valid payload: only the role can refuse it
        response = api_for(technician).post(
            self.url, {"project": project.code, "user": "newcomer", "role": Role.MANAGER}, format="json"
        )
        assert response.status_code == 403
        assert not Membership.objects.filter(user=newcomer).exists()

    def test_outsider_gets_404_and_cannot_add_itself(self, api_for, outsider, manager, project):
        membership = Membership.objects.get(user=manager, project=project)
        api = api_for(outsider)
        assert api.get(f"{self.url}{membership.pk}/").status_code == 404
        assert api.delete(f"{self.url}{membership.pk}/").status_code == 404
        response = api.post(self.url, {"project": project.code, "user": "outsider", "role": "manager"}, format="json")
        assert response.status_code == 403  # a customer everywhere: no write right in any project
        assert not Membership.objects.filter(project=project, user=outsider).exists()

    def test_manager_of_another_project_gets_400_not_a_hint(self, api_for, other_project, project):
        other_manager = UserFactory(username="othermgr")
        MembershipFactory(user=other_manager, project=other_project, role=Role.MANAGER)
        response = api_for(other_manager).post(
            self.url, {"project": project.code, "user": "othermgr", "role": "manager"}, format="json"
        )
        assert response.status_code == 400
        assert "project" in response.json()
        made_up = api_for(other_manager).post(
            self.url, {"project": "NO-SUCH", "user": "othermgr", "role": "manager"}, format="json"
        )
        assert made_up.json() == {"project": [response.json()["project"][0].replace(project.code, "NO-SUCH")]}
        assert not Membership.objects.filter(project=project, user=other_manager).exists()

    def test_duplicate_membership_is_a_400_naming_the_user(self, api_for, manager, technician, project):
        response = api_for(manager).post(
            self.url, {"project": project.code, "user": "tech", "role": Role.CUSTOMER}, format="json"
        )
        assert response.status_code == 400
        assert "user" in response.json()

    def test_projects_api_lists_only_members_projects(self, api_for, customer, project, other_project):
        data = api_for(customer).get("/api/projects/").json()
        assert [p["code"] for p in data["results"]] == [project.code]
        assert api_for(customer).get(f"/api/projects/{other_project.code}/").status_code == 404

    # --- the user is named by exact username, and nothing else is revealed ---------------------------

    @pytest.mark.parametrize("username", ["nobody-xyz", "NEWTECH", "inactive-one"])
    def test_an_unknown_username_gets_one_neutral_error(self, api_for, manager, project, username):
        UserFactory(username="newtech")
        UserFactory(username="inactive-one", is_active=False)
        response = api_for(manager).post(
            self.url, {"project": project.code, "user": username, "role": Role.CUSTOMER}, format="json"
        )
        assert response.status_code == 400
        assert response.json() == {"user": ["No active account has exactly this username."]}
        assert Membership.objects.filter(project=project).count() == 1

    def test_the_user_of_a_membership_cannot_change(self, api_for, manager, technician, project):
        UserFactory(username="someone")
        membership = Membership.objects.get(user=technician, project=project)
        response = api_for(manager).patch(f"{self.url}{membership.pk}/", {"user": "someone"}, format="json")
        assert response.status_code == 400
        assert response.json() == {"user": ["A membership cannot move to another user."]}
        assert Membership.objects.get(pk=membership.pk).user == technician

    def test_memberships_list_the_username(self, api_for, manager, technician, project):
        rows = api_for(manager).get(self.url).json()["results"]
        assert sorted(row["user"] for row in rows) == ["mgr", "tech"]

    # --- a project keeps a manager ------------------------------------------------------------------

    def test_the_last_manager_cannot_be_demoted(self, api_for, manager, project):
        membership = Membership.objects.get(user=manager, project=project)
        response = api_for(manager).patch(f"{self.url}{membership.pk}/", {"role": Role.CUSTOMER}, format="json")
        assert response.status_code == 400
        assert list(response.json()) == ["role"]
        assert "last manager" in response.json()["role"][0]
        assert Membership.objects.get(pk=membership.pk).role == Role.MANAGER

    def test_the_last_manager_cannot_be_removed(self, api_for, manager, project):
        membership = Membership.objects.get(user=manager, project=project)
        response = api_for(manager).delete(f"{self.url}{membership.pk}/")
        assert response.status_code == 409
        assert "last manager of ACME-72" in response.json()["detail"]
        assert Membership.objects.filter(pk=membership.pk).exists()

    def test_a_manager_can_step_down_once_there_is_another(self, api_for, manager, project):
        second = UserFactory(username="mgr2")
        MembershipFactory(user=second, project=project, role=Role.MANAGER)
        membership = Membership.objects.get(user=manager, project=project)
        api = api_for(manager)
        assert api.patch(f"{self.url}{membership.pk}/", {"role": Role.TECHNICIAN}, format="json").status_code == 200
        assert api.delete(f"{self.url}{membership.pk}/").status_code == 204
        last = Membership.objects.get(user=second, project=project)
        assert api_for(second).delete(f"{self.url}{last.pk}/").status_code == 409


def test_membership_set_refuses_to_demote_the_last_manager(manager, project, other_project):
    MembershipFactory(user=UserFactory(username="boss-elsewhere"), project=other_project, role=Role.MANAGER)
    with pytest.raises(ValidationError) as refused:
        membership_set(project=project, user=manager, role=Role.TECHNICIAN)
    assert list(refused.value.message_dict) == ["role"]  # a manager of another project does not count


def test_membership_delete_refuses_the_last_manager_and_removes_others(manager, technician, project):
    with pytest.raises(LastManagerError):
        membership_delete(membership=Membership.objects.get(user=manager, project=project))
    membership_delete(membership=Membership.objects.get(user=technician, project=project))
    assert list(Membership.objects.filter(project=project).values_list("user__username", flat=True)) == ["mgr"]


def test_membership_set_creates_and_changes_roles(manager, project):
    user = UserFactory(username="fresh")
    assert membership_set(project=project, user=user, role=Role.CUSTOMER).role == Role.CUSTOMER
    assert membership_set(project=project, user=user, role=Role.MANAGER).role == Role.MANAGER
    assert Membership.objects.filter(project=project, user=user).count() == 1


def test_project_home_counts_cables_and_check_runs(client_for, manager, project):
    from cabling.choices import CableType
    from cabling.models import Cable
    from inventory.choices import Network
    from validation.choices import CheckKind, RunnerKind
    from validation.models import CheckRun

    Cable.objects.create(project=project, label="C00001", network=Network.COMPUTE, cable_type=CableType.DAC,
                         length_m=1, speed_gbps=800)
    CheckRun.objects.create(project=project, kind=CheckKind.LINK_HEALTH, runner=RunnerKind.SIMULATED)
    body = client_for(manager).get(reverse("delivery:project-home", args=[project.code])).content.decode()
    assert "<b>1</b> cables" in body
    assert "<b>1</b> check runs" in body


# --- projects.access: writes -----------------------------------------------------------------------------


def test_project_to_write_hides_the_project_from_outsiders_and_refuses_roles(project, outsider, customer, technician):
    from django.core.exceptions import PermissionDenied
    from django.http import Http404

    from projects.access import project_to_write

    assert project_to_write(technician, project.code, Capability.EDIT_INVENTORY) == project
    with pytest.raises(PermissionDenied):
        project_to_write(customer, project.code, Capability.EDIT_INVENTORY)
    with pytest.raises(Http404):
        project_to_write(outsider, project.code, Capability.VIEW)
    with pytest.raises(Http404):
        project_to_write(technician, "NO-SUCH", Capability.EDIT_INVENTORY)
    assert project_to_write(technician, "", Capability.EDIT_INVENTORY) is None
    assert project_to_write(technician, ["ACME-72"], Capability.EDIT_INVENTORY) is None


def test_a_page_every_member_reads_refuses_the_post_of_a_role_without_its_write_capability(
    rf, project, customer, technician, manager
):
    """ProjectViewMixin: `required_capability` for every request, `write_capability` too for a POST."""
    from django.core.exceptions import PermissionDenied
    from django.http import HttpResponse
    from django.views import View

    from projects.access import ProjectViewMixin

    class Settings(ProjectViewMixin, View):
        write_capability = Capability.MANAGE_PROJECT

        def get(self, request, code):
            return HttpResponse("read")

        def post(self, request, code):
            return HttpResponse("written")

    def answer(user, method):
        request = getattr(rf, method)("/")
        request.user = user
        try:
            return Settings.as_view()(request, code=project.code).content.decode()
        except PermissionDenied:
            return 403

    assert [answer(user, "get") for user in (customer, technician, manager)] == ["read"] * 3
    assert [answer(user, "post") for user in (customer, technician, manager)] == [403, 403, "written"]


def test_project_create_checks_its_fields(db):
    from projects.services import project_create

    project = project_create(code="NEW-8", name="New cluster", customer_name="Example")
    assert (project.code, project.status) == ("NEW-8", "planning")
    with pytest.raises(ValidationError) as refused:
        project_create(code="bad code", name="x", customer_name="y")
    assert list(refused.value.message_dict) == ["code"]
    with pytest.raises(ValidationError) as taken:
        project_create(code="NEW-8", name="Again", customer_name="Example")
    assert "code" in taken.value.message_dict


def test_user_ensure_makes_a_superuser_once_and_keeps_an_existing_password(db):
    from projects.services import user_ensure

    existing = UserFactory(username="ops")
    user = user_ensure(username="ops", password="something-else", superuser=True)
    assert user.pk == existing.pk and user.is_staff and user.is_superuser
    assert user.check_password("pw-for-tests-1") and not user.check_password("something-else")
    plain = user_ensure(username="plain", password="pw-plain-1")
    assert not (plain.is_staff or plain.is_superuser) and plain.check_password("pw-plain-1")
