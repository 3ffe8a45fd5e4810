"""The OpenAPI schema and the documentation page (docs/design/api.md §16.4)."""

import yaml
from django.contrib.staticfiles import finders
from django.core.management import call_command

from tests.api.conftest import ApiClient


def test_the_schema_is_valid_openapi_without_a_warning(tmp_path, db):
    # drf-spectacular warns of every view it cannot describe: each must be described.
    path = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(path))
    schema = yaml.safe_load(path.read_text())
    assert schema["components"]["securitySchemes"]["personalToken"]["scheme"] == "bearer"
    assert "/api/v1/studies/{slug}/progress/" in schema["paths"]
    # The catch-all for unknown paths is no endpoint.
    assert not any("rest" in path for path in schema["paths"])


def test_the_schema_is_public_as_documentation_is(db):
    response = ApiClient(None).get("/api/v1/schema/")
    assert response.status_code == 200
    assert b"personalToken" in response.content


def test_the_documentation_is_for_signed_in_staff(client, client_for, personas):
    assert client.get("/api/v1/docs/")["Location"].startswith("/accounts/login/")
    assert client_for("outsider").get("/api/v1/docs/").status_code == 404
    page = client_for("experimenter_a").get("/api/v1/docs/")
    assert page.status_code == 200
    assert b"swagger-ui" in page.content
    # Its script comes from the platform, as a file, under the site's CSP (no inline script).
    assert b"<script>" not in page.content.replace(b" ", b"")
    script = client_for("experimenter_a").get("/api/v1/docs/?script=")
    assert script.status_code == 200
    assert b"/api/v1/schema/" in script.content
    for name in ("swagger-ui-bundle.js", "swagger-ui.css"):
        assert finders.find(f"drf_spectacular_sidecar/swagger-ui-dist/{name}")
