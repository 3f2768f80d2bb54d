"""The OpenAPI schema covers every endpoint without a warning, and the docs page renders from our own
static files (no CDN: the docs must work on an air-gapped delivery site)."""

import pytest
import yaml
from django.core.management import call_command
from django.urls import reverse

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    "/api/projects/",
    "/api/memberships/",
    "/api/sites/",
    "/api/racks/",
    "/api/hardware-models/",
    "/api/devices/",
    "/api/nics/",
    "/api/ports/",
    "/api/optics/",
]


def test_schema_generates_without_errors_or_warnings(tmp_path):
    target = tmp_path / "schema.yml"
    # --fail-on-warn turns any drf-spectacular warning (untyped field, enum clash, ...) into an error.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))
    schema = yaml.safe_load(target.read_text())
    for endpoint in ENDPOINTS:
        assert endpoint in schema["paths"], endpoint
        assert f"{endpoint}{{{'code' if 'projects' in endpoint else 'id'}}}/" in schema["paths"]
    assert "/api/token/" in schema["paths"]
    assert "/api/jobs/{job_type}/{id}/" in schema["paths"]  # the one status endpoint of every job row


def test_schema_documents_the_one_error_shape(manager, api_for):
    """Every write documents its 400 as the ValidationError component, every operation its 403 and 404 as
    Error; and a real 400 has that shape (the fields at fault by name, lists of messages)."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    racks = schema["paths"]["/api/racks/"]["post"]["responses"]
    assert racks["400"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/ValidationError"}
    job = schema["paths"]["/api/jobs/{job_type}/{id}/"]["get"]["responses"]
    assert job["404"]["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}
    assert set(schema["components"]["schemas"]["ValidationError"]["properties"]) == {"non_field_errors"}
    # A delete refused because the row is still in use answers 409 (schemathesis found it undocumented).
    deletes = [op for path in schema["paths"].values() for method, op in path.items() if method == "delete"]
    assert deletes and all(op["responses"]["409"]["content"]["application/json"]["schema"]
                           == {"$ref": "#/components/schemas/Error"} for op in deletes)

    answer = api_for(manager).post("/api/memberships/", {"project": "NO-SUCH", "role": "x"}, format="json")
    assert answer.status_code == 400
    assert {"project", "user", "role"} <= set(answer.json())
    assert all(isinstance(v, list) and all(isinstance(m, str) for m in v) for v in answer.json().values())


def test_schema_describes_the_fields_people_use():
    from drf_spectacular.generators import SchemaGenerator

    schemas = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    assert {"power_used_w", "power_budget_w", "headroom", "power_flagged"} <= set(
        schemas["Rack"]["properties"]
    )
    assert {"parent", "lane", "plane", "nic", "device"} <= set(schemas["Port"]["properties"])
    assert "port_count" in schemas["Device"]["properties"]
    assert "port_templates" in schemas["HardwareModelDetail"]["properties"]
    assert set(schemas["PortKindEnum"]["enum"]) >= {"infiniband", "ethernet"}


@pytest.fixture
def client(client, customer):
    """Any signed-in user may read the schema and its docs page."""
    client.force_login(customer)
    return client


def test_schema_and_docs_need_a_login(project):
    from django.test import Client

    anonymous = Client()
    assert anonymous.get(reverse("api-schema")).status_code in (401, 403)
    assert anonymous.get(reverse("api-docs")).status_code in (401, 403)


def test_an_outsider_reads_the_schema_but_not_the_projects_rows(client_for, outsider, project):
    from tests.factories import RackFactory

    RackFactory(project=project, name="R-SECRET")
    outsider_client = client_for(outsider)
    assert outsider_client.get(reverse("api-schema")).status_code == 200
    racks = outsider_client.get("/api/racks/").json()
    assert racks["count"] == 0 and b"R-SECRET" not in outsider_client.get(reverse("api-schema")).content


def test_schema_endpoint_serves_the_schema(client):
    response = client.get(reverse("api-schema"))
    assert response.status_code == 200
    assert b"/api/racks/" in response.content


def test_docs_page_loads_swagger_from_our_static_files(client):
    response = client.get(reverse("api-docs"))
    assert response.status_code == 200
    body = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in body
    assert "cdn.jsdelivr" not in body and "unpkg.com" not in body
    assert reverse("api-schema") in body


def test_the_swagger_bundle_the_docs_page_names_is_installed():
    from django.contrib.staticfiles import finders

    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
