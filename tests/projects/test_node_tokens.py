"""Node tokens: a node posts its tool outputs with a token of its own (projects.tokens,
projects.api.node_tokens), scoped to one project and to named scopes, expiring, revocable, stored hashed;
it is never its maker, so it can read nothing, change nothing and post into no other project. The
project's page lists, makes and revokes them (outsiders 404, customers 403, technicians read). A
person's API token dies with their password."""

from __future__ import annotations

import hashlib
from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from inventory.models import Device
from projects.choices import NodeScope, Role
from projects.models import NodeToken
from projects.tokens import TOKEN_PATTERN, node_token_check, node_token_create, node_token_revoke, node_token_touch
from tests.factories import MembershipFactory, UserFactory
from tests.support import count_queries
from tests.validation.conftest import fixture_text, make_gpu_nodes
from validation.choices import CheckKind, UploadSource
from validation.models import CheckRun, ToolUpload

from .access_samples_tokens import make_token

pytestmark = pytest.mark.django_db

MLXLINK_LOOP = "mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt"
UPLOADS = "/api/uploads/"


@pytest.fixture
def nodes(project):
    return make_gpu_nodes(project, 3)


@pytest.fixture
def issue(manager):
    """A token made the way a manager makes one; returns (row, the whole token as shown once)."""

    def make(project, *, scopes=(NodeScope.UPLOADS,), user=None, name="gpu-001", lifetime=timedelta(days=90)):
        issued = node_token_create(project=project, user=user or manager, name=name, scopes=list(scopes),
                                   lifetime=lifetime)
        return issued.token, issued.value

    return make


@pytest.fixture
def node(django_capture_on_commit_callbacks):
    """An API client that sends a node token, as a node would, and runs what the request commits."""

    def client_with(value: str) -> APIClient:
        client = APIClient(REMOTE_ADDR="10.0.7.17")
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {value}")

        def send(method, *args, **kwargs):
            with django_capture_on_commit_callbacks(execute=True):
                return getattr(client, method)(*args, **kwargs)

        client.send = send
        return client

    return client_with


def mlxlink_upload(project_code="ACME-72", host="gpu-001"):
    return {"project": project_code, "host": host,
            "file": SimpleUploadedFile("mlxlink.txt", fixture_text(MLXLINK_LOOP).encode())}


# -- the upload, end to end ------------------------------------------------------------------------------


def test_a_node_token_posts_a_tool_output_that_is_parsed_and_filed(issue, project, nodes, node):
    token, value = issue(project)
    response = node(value).send("post", UPLOADS, mlxlink_upload(), format="multipart")
    assert response.status_code == 201, response.content
    upload = ToolUpload.objects.get(pk=response.json()["id"])
    assert (upload.project, upload.device.name, upload.source) == (project, "gpu-001", UploadSource.API)
    assert upload.requested_by is None  # the node is nobody: not the manager who made its token
    assert upload.run.kind == CheckKind.LINK_HEALTH and upload.run.results.count() == 8
    token.refresh_from_db()
    assert token.last_used_at is not None and token.last_used_ip == "10.0.7.17"


def test_a_node_token_posts_a_raw_text_body_too(issue, project, nodes, node):
    _, value = issue(project)
    response = node(value).send("post", f"{UPLOADS}?project=ACME-72&host=gpu-002", data=fixture_text(MLXLINK_LOOP),
                                content_type="text/plain")
    assert response.status_code == 201, response.content
    assert ToolUpload.objects.get(pk=response.json()["id"]).device.name == "gpu-002"


# -- what a node token cannot do ------------------------------------------------------------------------


def _assert_refused(response, status: int, *words: str):
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"detail"}, body  # the API's one error shape
    for word in words:
        assert word in body["detail"], body


def test_a_node_token_made_by_a_staff_manager_cannot_change_a_device(project, nodes, node):
    """The issue's case: a node's token patched a device. A node token carries none of its maker's rights."""
    boss = UserFactory(username="boss", is_staff=True, is_superuser=True)
    MembershipFactory(user=boss, project=project, role=Role.MANAGER)
    value = node_token_create(project=project, user=boss, name="gpu-001", scopes=[NodeScope.UPLOADS]).value
    device = nodes[0]
    response = node(value).send("patch", f"/api/devices/{device.pk}/", {"name": "hijacked"}, format="json")
    _assert_refused(response, 403, "node token")
    assert Device.objects.get(pk=device.pk).name == device.name


@pytest.mark.parametrize("method,url,payload", [
    ("get", "/api/devices/", None),
    ("get", "/api/projects/", None),
    ("get", "/api/projects/ACME-72/", None),
    ("get", UPLOADS, None),
    ("get", "/api/check-runs/", None),
    ("post", "/api/check-runs/", {"project": "ACME-72", "kind": "link_health"}),
    ("post", "/api/memberships/", {"project": "ACME-72", "user": 1, "role": "manager"}),
    ("post", "/api/token/", {"username": "mgr", "password": "x"}),
])
def test_a_node_token_reads_nothing_and_writes_nothing_but_uploads(issue, project, nodes, node, method, url, payload):
    _, value = issue(project)
    response = node(value).send(method, url, payload, format="json") if payload else node(value).send(method, url)
    _assert_refused(response, 403, "node token")
    assert CheckRun.objects.count() == 0


def test_a_node_token_cannot_read_an_upload_even_its_own(issue, project, nodes, node):
    _, value = issue(project)
    client = node(value)
    created = client.send("post", UPLOADS, mlxlink_upload(), format="multipart")
    assert created.status_code == 201
    _assert_refused(client.send("get", f"{UPLOADS}{created.json()['id']}/"), 403, "node token")


def test_a_node_token_cannot_post_into_another_project(issue, project, other_project, nodes, node):
    make_gpu_nodes(other_project, 1)
    _, value = issue(project)
    client = node(value)
    _assert_refused(client.send("post", UPLOADS, mlxlink_upload("OTHER-8"), format="multipart"), 403, "ACME-72")
    raw = client.send("post", f"{UPLOADS}?project=OTHER-8&host=gpu-001", data=fixture_text(MLXLINK_LOOP),
                      content_type="text/plain")
    _assert_refused(raw, 403, "OTHER-8")
    # naming its project in the query string and another in the body changes nothing
    mixed = client.send("post", f"{UPLOADS}?project=ACME-72", mlxlink_upload("OTHER-8"), format="multipart")
    _assert_refused(mixed, 403, "OTHER-8")
    assert not ToolUpload.objects.exists()


def test_a_token_without_the_uploads_scope_cannot_upload(issue, project, nodes, node):
    _, value = issue(project, scopes=[NodeScope.TOPOLOGY])
    _assert_refused(node(value).send("post", UPLOADS, mlxlink_upload(), format="multipart"), 403, "uploads scope")
    assert not ToolUpload.objects.exists()


def test_expired_revoked_and_wrong_tokens_are_401_saying_which(issue, project, nodes, node, manager):
    expired, expired_value = issue(project, name="old")
    NodeToken.objects.filter(pk=expired.pk).update(created_at=timezone.now() - timedelta(days=91),
                                                   expires_at=timezone.now() - timedelta(seconds=1))
    revoked, revoked_value = issue(project, name="gone")
    node_token_revoke(token=revoked, user=manager)
    _, good = issue(project, name="good")
    wrong_secret = good[:-4] + ("AAAA" if not good.endswith("AAAA") else "BBBB")
    cases = [(expired_value, "expired"), (revoked_value, "revoked"), (wrong_secret, "Invalid node token"),
             ("bnt_nothex_x", "Not a node token"), (good + " extra", "one node token"),
             ("bnt_" + "a" * 100_000, "Not a node token"), ("bnt_\u00e9t\u00e9", "Invalid node token")]
    for value, words in cases:
        response = node(value).send("post", UPLOADS, mlxlink_upload(), format="multipart")
        _assert_refused(response, 401, words)
        assert response["WWW-Authenticate"].startswith("Bearer")
    assert not ToolUpload.objects.exists()
    assert "ask a manager of ACME-72" in node(expired_value).send("post", UPLOADS, {}).json()["detail"]


def test_a_revoked_token_stops_working_at_once(issue, project, nodes, node, manager):
    token, value = issue(project)
    client = node(value)
    assert client.send("post", UPLOADS, mlxlink_upload(), format="multipart").status_code == 201
    first = node_token_revoke(token=token, user=manager)
    _assert_refused(client.send("post", UPLOADS, mlxlink_upload(), format="multipart"), 401, "revoked")
    other_manager = UserFactory(username="mgr2")
    MembershipFactory(user=other_manager, project=project, role=Role.MANAGER)
    again = node_token_revoke(token=token, user=other_manager)
    assert (again.revoked_at, again.revoked_by) == (first.revoked_at, manager)  # the first revocation stands


def test_a_person_with_a_bearer_that_is_no_node_token_gets_a_401_not_someone_elses_rights(manager):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {Token.objects.create(user=manager).key}")
    _assert_refused(client.get("/api/projects/"), 401, "Not a node token")


# -- storage and last use -------------------------------------------------------------------------------


def test_only_a_hash_of_the_secret_is_stored(issue, project):
    token, value = issue(project)
    match = TOKEN_PATTERN.match(value)
    assert match and match["key_id"] == token.key_id
    secret = match["secret"]
    assert len(secret) >= 43  # 256 random bits
    assert token.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {NodeToken._meta.db_table}")
        stored = " ".join(str(cell) for row in cursor.fetchall() for cell in row)
    assert secret not in stored and value not in stored
    assert node_token_check(value) == token


def test_last_use_is_written_at_most_once_a_minute(issue, project, nodes, node):
    token, value = issue(project)
    client = node(value)
    assert client.send("post", UPLOADS, mlxlink_upload(), format="multipart").status_code == 201
    token.refresh_from_db()
    first_use = token.last_used_at
    with CaptureQueriesContext(connection) as captured:
        assert client.send("post", UPLOADS, mlxlink_upload(host="gpu-002"), format="multipart").status_code == 201
    table = NodeToken._meta.db_table
    assert not [q for q in captured.captured_queries if q["sql"].startswith("UPDATE") and table in q["sql"]]
    token.refresh_from_db()
    assert token.last_used_at == first_use
    NodeToken.objects.filter(pk=token.pk).update(last_used_at=first_use - timedelta(minutes=2))
    assert client.send("post", UPLOADS, mlxlink_upload(host="gpu-003"), format="multipart").status_code == 201
    token.refresh_from_db()
    assert token.last_used_at > first_use


def test_two_requests_at_once_record_the_use_once(issue, project):
    """Two requests that both read the token before either wrote: the conditional UPDATE lets one write."""
    token, _ = issue(project)
    first, second = NodeToken.objects.get(pk=token.pk), NodeToken.objects.get(pk=token.pk)
    now = timezone.now()
    assert node_token_touch(token=first, ip="10.0.0.1", now=now) is True
    assert node_token_touch(token=second, ip="10.0.0.2", now=now + timedelta(seconds=5)) is False
    token.refresh_from_db()
    assert (token.last_used_at, token.last_used_ip) == (now, "10.0.0.1")
    assert node_token_touch(token=second, ip="not an address", now=now + timedelta(minutes=2)) is True
    token.refresh_from_db()
    assert token.last_used_ip is None


# -- making tokens: the rules ---------------------------------------------------------------------------


def test_only_managers_make_and_revoke_tokens(project, technician, customer, outsider, manager):
    for user in (technician, customer, outsider):
        with pytest.raises(PermissionDenied):
            node_token_create(project=project, user=user, name="n", scopes=[NodeScope.UPLOADS])
    token = node_token_create(project=project, user=manager, name="n", scopes=[NodeScope.UPLOADS]).token
    with pytest.raises(PermissionDenied):
        node_token_revoke(token=token, user=technician)
    assert NodeToken.objects.get().revoked_at is None


@pytest.mark.parametrize("fields,error_field", [
    ({"scopes": []}, "scopes"),
    ({"scopes": ["uploads", "admin"]}, "scopes"),
    ({"name": "  "}, "name"),
    ({"lifetime": timedelta(days=366)}, "expires_at"),
])
def test_a_token_needs_a_name_known_scopes_and_a_bounded_lifetime(project, manager, fields, error_field):
    arguments = {"name": "gpu-001", "scopes": [NodeScope.UPLOADS], **fields}
    with pytest.raises(ValidationError) as refused:
        node_token_create(project=project, user=manager, **arguments)
    assert error_field in refused.value.message_dict
    assert not NodeToken.objects.exists()


def test_the_default_lifetime_is_ninety_days(issue, project):
    token, _ = issue(project)
    assert token.expires_at - token.created_at == timedelta(days=90)


# -- the page -------------------------------------------------------------------------------------------


def page(project):
    return reverse("projects:node-token-list", args=[project.code])


def test_a_manager_makes_a_token_and_sees_it_once(client_for, project, manager):
    client = client_for(manager)
    response = client.post(page(project), {"name": "gpu-017", "scopes": ["uploads"], "days": "30"})
    assert response.status_code == 200
    token = NodeToken.objects.get()
    value = response.context["issued"].value
    assert TOKEN_PATTERN.match(value) and value in response.content.decode()
    assert response["Cache-Control"] == "no-store"
    assert (token.name, token.scopes, token.created_by, token.expires_at - token.created_at) == (
        "gpu-017", ["uploads"], manager, timedelta(days=30))
    later = client.get(page(project)).content.decode()
    assert value not in later and value.split("_", 2)[2] not in later and f"bnt_{token.key_id}_" in later


def test_the_form_refuses_bad_input_with_the_field(client_for, project, manager):
    client = client_for(manager)
    for data, field in [
        ({"name": "n", "scopes": ["uploads"], "days": "400"}, "days"),
        ({"name": "n", "days": "30"}, "scopes"),
        ({"name": "n", "scopes": ["root"], "days": "30"}, "scopes"),
        ({"name": "x" * 5000, "scopes": ["uploads"], "days": "30"}, "name"),
        ({"name": "n", "scopes": ["uploads"], "days": "1e30"}, "days"),
    ]:
        response = client.post(page(project), data)
        assert response.status_code == 200 and field in response.context["form"].errors, data
    assert not NodeToken.objects.exists()


def test_the_list_shows_scopes_expiry_last_use_and_state(client_for, project, manager, technician):
    used = make_token(project, name="gpu-001", created_by=manager, last_used_at=timezone.now(),
                      last_used_ip="10.1.2.3")
    make_token(project, name="gpu-002", revoked_at=timezone.now(), revoked_by=manager)
    make_token(project, name="gpu-003", expires_at=timezone.now() + timedelta(seconds=1),
               created_at=timezone.now() - timedelta(days=1))
    NodeToken.objects.filter(name="gpu-003").update(expires_at=timezone.now() - timedelta(hours=1))
    html = client_for(technician).get(page(project)).content.decode()
    assert "10.1.2.3" in html and "uploads" in html and used.key_id in html
    assert html.count(">Active<") == 1 and html.count(">Revoked<") == 1 and html.count(">Expired<") == 1
    assert "node-token-form" not in html and ">Revoke</button>" not in html  # a technician reads, makes nothing


def test_a_manager_revokes_a_token_from_the_page(client_for, project, manager, issue, nodes, node):
    token, value = issue(project)
    response = client_for(manager).post(reverse("projects:node-token-revoke", args=[project.code, token.pk]))
    assert response.status_code == 302 and response.url == page(project)
    token.refresh_from_db()
    assert token.revoked_at is not None and token.revoked_by == manager
    _assert_refused(node(value).send("post", UPLOADS, mlxlink_upload(), format="multipart"), 401, "revoked")


def test_page_access_outsider_404_customer_403_technician_reads_anonymous_to_login(
    client, client_for, project, other_project, manager, technician, customer, outsider
):
    token = make_token(project)
    revoke = reverse("projects:node-token-revoke", args=[project.code, token.pk])
    form = {"name": "n", "scopes": ["uploads"], "days": "30"}
    assert client.get(page(project)).status_code == 302
    assert client_for(outsider).get(page(project)).status_code == 404
    assert client_for(outsider).post(page(project), form).status_code == 404
    assert client_for(outsider).post(revoke).status_code == 404
    assert client_for(customer).get(page(project)).status_code == 403
    assert client_for(customer).post(revoke).status_code == 403
    assert client_for(technician).get(page(project)).status_code == 200
    assert client_for(technician).post(page(project), form).status_code == 403
    assert client_for(technician).post(revoke).status_code == 403
    # a token of another project cannot be revoked through this one's URL, even by a manager of both
    theirs = make_token(other_project)
    MembershipFactory(user=manager, project=other_project, role=Role.MANAGER)
    through_this_project = reverse("projects:node-token-revoke", args=[project.code, theirs.pk])
    assert client_for(manager).post(through_this_project).status_code == 404
    assert NodeToken.objects.filter(revoked_at__isnull=False).count() == 0
    assert NodeToken.objects.filter(project=project).count() == 1


def test_the_project_home_links_the_page_for_those_who_run_checks(client_for, project, manager, technician, customer):
    link = page(project)
    assert link in client_for(manager).get(reverse("delivery:project-home", args=[project.code])).content.decode()
    assert link in client_for(technician).get(reverse("delivery:project-home", args=[project.code])).content.decode()
    assert link not in client_for(customer).get(reverse("delivery:project-home", args=[project.code])).content.decode()


def test_the_list_query_count_does_not_grow(client_for, project, manager):
    client = client_for(manager)

    def tokens(count: int, start: int):
        for i in range(start, start + count):
            maker = UserFactory(username=f"maker-{i}")
            make_token(project, name=f"gpu-{i:03d}", created_by=maker, revoked_at=timezone.now() if i % 2 else None,
                       revoked_by=maker if i % 2 else None, last_used_at=timezone.now(), last_used_ip="10.0.0.1")

    tokens(2, 0)
    few = count_queries(lambda: client.get(page(project)))
    tokens(30, 2)
    many = count_queries(lambda: client.get(page(project)))
    assert few == many


# -- the schema -----------------------------------------------------------------------------------------


def test_the_schema_names_node_tokens_on_the_upload_only(api_for, manager):
    schema = api_for(manager).get("/api/schema/?format=json").json()
    assert schema["components"]["securitySchemes"]["nodeToken"]["scheme"] == "bearer"
    assert {"nodeToken": []} in schema["paths"]["/api/uploads/"]["post"]["security"]
    assert {"nodeToken": []} not in schema["paths"]["/api/devices/"]["get"]["security"]


# -- a person's token rotates with the password ---------------------------------------------------------


def _token_works(key: str) -> bool:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get("/api/projects/").status_code == 200


def test_set_password_and_save_kills_the_users_api_token(manager):
    key = Token.objects.create(user=manager).key
    assert _token_works(key)
    manager.set_password("a new secret 1234")
    manager.save()
    assert not Token.objects.filter(user=manager).exists()
    response = APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/projects/")
    assert response.status_code == 401 and response.json() == {"detail": "Invalid token."}


def test_the_admin_password_change_page_kills_the_token(client_for, manager):
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    key = Token.objects.create(user=manager).key
    response = client_for(admin).post(
        reverse("admin:auth_user_password_change", args=[manager.pk]),
        {"password1": "Another-secret-9876", "password2": "Another-secret-9876", "usable_password": "true"},
    )
    assert response.status_code == 302, response.content[:2000]
    assert not _token_works(key)


def test_saving_a_user_without_a_new_password_keeps_the_token(manager):
    key = Token.objects.create(user=manager).key
    manager.first_name = "Ada"
    manager.save()
    manager.last_login = timezone.now()
    with CaptureQueriesContext(connection) as captured:
        manager.save(update_fields=["last_login"])  # every sign-in: no extra query
    assert len(captured.captured_queries) == 1
    assert _token_works(key)


def test_a_new_token_after_the_password_change_works(manager):
    manager.set_password("first-password-1")
    manager.save()
    old = Token.objects.create(user=manager).key
    manager.set_password("second-password-2")
    manager.save()
    response = APIClient().post("/api/token/", {"username": manager.username, "password": "second-password-2"})
    assert response.status_code == 200 and response.json()["token"] != old and _token_works(response.json()["token"])


def test_a_hash_upgrade_at_sign_in_is_no_password_change(manager, settings):
    """Django re-hashes an outdated hash when its owner signs in; the password is the same, the token stays."""
    from django.contrib.auth.hashers import make_password

    manager.password = make_password("same-password-1", hasher="pbkdf2_sha256")
    manager.save()
    key = Token.objects.create(user=manager).key
    assert settings.PASSWORD_HASHERS[0].endswith("MD5PasswordHasher")  # the preferred hasher differs
    assert manager.check_password("same-password-1")
    manager.refresh_from_db()
    assert manager.password.startswith("md5$") and _token_works(key)
