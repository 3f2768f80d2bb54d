"""Request bodies at the API: the declared length is checked before a byte is read, a body is read no
further than its limit whatever its Content-Length claims, every refusal is in the one error shape, and
what the API promises (a 20 MiB upload, as JSON too) it takes.

The bodies over the limit are made on the fly, never held whole, and handed to Django at the WSGI edge
(the test client's own handler) through a stream that counts what the application reads of it.
"""

from __future__ import annotations

import io
import json

import pytest
from django.test import Client
from django.test.client import ClientHandler
from rest_framework.authtoken.models import Token

from core.api.parsers import CHUNK_BYTES, RequestTooLarge, spool_bounded
from inventory.choices import DeviceRole
from inventory.services import device_create
from tests.factories import gpu_server_model
from validation.models import ToolUpload

pytestmark = pytest.mark.django_db

LIMIT = 256 * 1024  # UPLOAD_MAX_BYTES in these tests, so a body "over the limit" is quick to send
FORM_SLACK = 64 * 1024
HUGE = 64 * 1024 * 1024  # what the hostile client sends: 64 MiB, never read
BOUNDARY = "BoUnDaRy"


class CountingBody:
    """wsgi.input: `parts` (bytes, or an int for that many filler bytes) produced as they are read, with
    the number of bytes the application read."""

    def __init__(self, *parts):
        self.parts = list(parts)
        self.size = sum(p if isinstance(p, int) else len(p) for p in parts)
        self.read_bytes = 0
        self._part, self._offset = 0, 0

    def read(self, size=-1):
        wanted = self.size - self.read_bytes if size is None or size < 0 else size
        out = []
        while wanted > 0 and self._part < len(self.parts):
            part = self.parts[self._part]
            length = part if isinstance(part, int) else len(part)
            take = min(wanted, length - self._offset)
            out.append(b"x" * take if isinstance(part, int) else part[self._offset:self._offset + take])
            self._offset += take
            wanted -= take
            if self._offset == length:
                self._part, self._offset = self._part + 1, 0
        data = b"".join(out)
        self.read_bytes += len(data)
        return data

    def readline(self, size=-1):  # not used by Django's LimitedStream; here for WSGI completeness
        return self.read(size)


def json_body(filler: int) -> CountingBody:
    return CountingBody(b'{"project": "ACME-72", "host": "gpu-001", "text": "', filler, b'"}')


def multipart_body(filler: int) -> CountingBody:
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="project"\r\n\r\nACME-72\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="host"\r\n\r\ngpu-001\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="out.txt"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    return CountingBody(head, filler, f"\r\n--{BOUNDARY}--\r\n".encode())


def plain_body(filler: int) -> CountingBody:
    return CountingBody(filler)


KINDS = {
    "json": ("/api/uploads/", "application/json", json_body),
    "multipart": ("/api/uploads/", f"multipart/form-data; boundary={BOUNDARY}", multipart_body),
    "text/plain": ("/api/uploads/?project=ACME-72&host=gpu-001", "text/plain", plain_body),
}


def send(path: str, content_type: str, body: CountingBody, *, declared: int | None, headers: dict,
         enforce_csrf_checks: bool = False):
    """The request through Django's WSGI handler, as a server would hand it over."""
    path_info, _, query = path.partition("?")
    environ = {
        "REQUEST_METHOD": "POST", "PATH_INFO": path_info, "QUERY_STRING": query, "SCRIPT_NAME": "",
        "SERVER_NAME": "testserver", "SERVER_PORT": "80", "SERVER_PROTOCOL": "HTTP/1.1", "REMOTE_ADDR": "127.0.0.1",
        "CONTENT_TYPE": content_type, "wsgi.input": body, "wsgi.errors": io.StringIO(), "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": False, "wsgi.run_once": False,
        **headers,
    }
    if declared is not None:
        environ["CONTENT_LENGTH"] = str(declared)
    return ClientHandler(enforce_csrf_checks=enforce_csrf_checks)(environ)


@pytest.fixture
def small_limits(settings):
    settings.UPLOAD_MAX_BYTES = LIMIT
    settings.API_BODY_MAX_BYTES = LIMIT + FORM_SLACK
    settings.API_JSON_MAX_BYTES = LIMIT + FORM_SLACK


@pytest.fixture
def node(project):
    return device_create(project=project, hardware_model=gpu_server_model(nics=1), name="gpu-001",
                         role=DeviceRole.GPU_NODE)


@pytest.fixture
def token_header(technician):
    return {"HTTP_AUTHORIZATION": f"Token {Token.objects.create(user=technician).key}"}


def error_detail(response) -> str:
    assert response["Content-Type"].startswith("application/json"), response.content[:200]
    body = json.loads(response.content)
    assert set(body) == {"detail"}, body
    return body["detail"]


# --- over the limit, honestly declared: refused before a byte is read ------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_an_honest_body_over_the_limit_is_a_413_before_anything_is_read(small_limits, node, token_header, kind):
    path, content_type, make = KINDS[kind]
    body = make(HUGE)
    response = send(path, content_type, body, declared=body.size, headers=token_header)
    assert response.status_code == 413
    assert "larger than the limit" in error_detail(response)
    assert body.read_bytes == 0
    assert ToolUpload.objects.count() == 0


@pytest.mark.parametrize("kind", ["json", "text/plain"])
def test_a_body_just_over_its_own_limit_is_a_413_before_it_is_read(small_limits, node, token_header, kind,
                                                                    settings):
    """Under what the API's edge lets through, over what this kind of body may be: the parser refuses it
    on its declared length."""
    path, content_type, make = KINDS[kind]
    body = make(LIMIT + 1)  # a text/plain body is the file: over UPLOAD_MAX_BYTES
    if kind == "json":
        settings.API_JSON_MAX_BYTES = LIMIT  # under the edge's API_BODY_MAX_BYTES
    assert body.size <= settings.API_BODY_MAX_BYTES
    response = send(path, content_type, body, declared=body.size, headers=token_header)
    assert response.status_code == 413 and "larger than the limit" in error_detail(response)
    assert body.read_bytes == 0


def test_a_form_over_the_limit_is_refused_before_a_browser_s_csrf_check_reads_it(small_limits, node, technician):
    """Signed in with a session, DRF's CSRF check reads a form body before any parser: the edge refuses
    first."""
    client = Client()
    client.force_login(technician)
    cookies = "; ".join(f"{name}={morsel.value}" for name, morsel in client.cookies.items())
    body = multipart_body(HUGE)
    response = send("/api/uploads/", f"multipart/form-data; boundary={BOUNDARY}", body, declared=body.size,
                    headers={"HTTP_COOKIE": cookies}, enforce_csrf_checks=True)
    assert response.status_code == 413 and error_detail(response)
    assert body.read_bytes == 0


# --- a lying Content-Length: the body is read no further than declared -----------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_body_longer_than_declared_is_read_no_further_than_declared(small_limits, node, token_header, kind):
    path, content_type, make = KINDS[kind]
    body = make(HUGE)
    declared = 1000
    response = send(path, content_type, body, declared=declared, headers=token_header)
    assert body.read_bytes <= declared
    if kind == "text/plain":  # the body is what was declared: 1,000 bytes of it, kept as sent
        assert response.status_code == 201 and ToolUpload.objects.get().size_bytes == declared
    else:  # cut short: not JSON, not a whole form
        assert response.status_code == 400
        assert ToolUpload.objects.count() == 0


def test_a_body_declared_within_the_limit_but_longer_is_read_no_further_than_the_limit(small_limits, node,
                                                                                        token_header):
    body = plain_body(HUGE)
    response = send(KINDS["text/plain"][0], "text/plain", body, declared=LIMIT, headers=token_header)
    assert body.read_bytes <= LIMIT
    assert response.status_code == 201 and ToolUpload.objects.get().size_bytes == LIMIT


def test_a_body_without_a_declared_length_is_not_read(small_limits, node, token_header):
    body = plain_body(HUGE)
    response = send(KINDS["text/plain"][0], "text/plain", body, declared=None, headers=token_header)
    assert body.read_bytes == 0
    assert response.status_code == 400 and "file" in json.loads(response.content)


def test_a_raw_body_is_spooled_in_chunks_and_refused_once_past_the_limit(settings):
    """The parser's own bound, for a stream that does not stop where it should: read at most one chunk
    past the limit, never the rest."""
    body = plain_body(HUGE)
    with pytest.raises(RequestTooLarge):
        spool_bounded(body, LIMIT, "The body")
    assert LIMIT < body.read_bytes <= LIMIT + CHUNK_BYTES
    spooled = spool_bounded(plain_body(LIMIT), LIMIT, "The body")
    assert spooled.read() == b"x" * LIMIT


# --- what the API promises it takes -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_a_3_mib_upload_is_taken_in_every_form_the_api_documents(node, token_header, kind, settings):
    """Over Django's 2.5 MiB in-memory default, under the documented 20 MiB: a JSON upload of this size
    answered an HTML RequestDataTooBig page."""
    assert settings.UPLOAD_MAX_BYTES == 20 * 1024 * 1024
    path, content_type, make = KINDS[kind]
    size = 3 * 1024 * 1024
    body = make(size)
    response = send(path, content_type, body, declared=body.size, headers=token_header)
    assert response.status_code == 201, response.content[:300]
    assert body.read_bytes == body.size
    assert ToolUpload.objects.get().size_bytes == size


def test_a_multipart_file_over_the_upload_limit_is_a_400_naming_the_file(small_limits, node, token_header):
    body = multipart_body(LIMIT + 1)  # the form fits the edge's slack; the file is over the upload limit
    response = send(KINDS["multipart"][0], KINDS["multipart"][1], body, declared=body.size, headers=token_header)
    assert response.status_code == 400
    assert "the limit is" in json.loads(response.content)["file"][0]


# --- the project of an upload, as any JSON value ------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "status", "field"),
    [
        (0, 404, None), ("0", 404, None), (10**30, 404, None), (1e30, 404, None), ("NO-SUCH", 404, None),
        (["ACME-72"], 400, "project"), ({"code": "ACME-72"}, 400, "project"), (True, 400, "project"),
        (None, 400, "project"), ("", 400, "project"), ("missing", 400, "project"),
    ],
)
def test_an_upload_s_project_of_any_json_value_is_a_4xx(api_for, technician, node, code, status, field):
    payload = {"host": "gpu-001", "text": "anything"}
    if code != "missing":
        payload["project"] = code
    response = api_for(technician).post("/api/uploads/", payload, format="json")
    assert response.status_code == status, response.content[:300]
    assert (field in response.json()) if field else set(response.json()) == {"detail"}
    assert ToolUpload.objects.count() == 0


def test_an_upload_naming_its_project_by_code_is_taken(api_for, technician, node):
    response = api_for(technician).post("/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": "x"},
                                        format="json")
    assert response.status_code == 201


def test_an_outsider_and_a_customer_are_refused_whatever_project_they_send(api_for, outsider, customer, node):
    for user, expected in ((outsider, 404), (customer, 403)):
        response = api_for(user).post("/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": "x"},
                                      format="json")
        assert response.status_code == expected
        response = api_for(user).post("/api/uploads/", {"project": 0, "host": "gpu-001", "text": "x"},
                                      format="json")
        assert response.status_code == 404
