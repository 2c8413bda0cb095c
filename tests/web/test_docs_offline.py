"""`/docs` is readable offline: FastAPI's page is Swagger UI loaded from cdn.jsdelivr.net, blank without a
network (README: "Everything works offline"). The server now writes the reference into the element Swagger UI
renders into; the expectations are read from the app's own OpenAPI schema."""

from __future__ import annotations

import html

from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings


def test_the_docs_page_carries_every_endpoint_and_its_required_fields_without_a_script():
    client = TestClient(create_app(Settings(), chat_service=object()))
    schema = client.get("/openapi.json").json()
    page = client.get("/docs")
    assert page.status_code == 200 and "swagger-ui-bundle.js" in page.text  # online, Swagger UI still takes over
    mount = page.text.split('<div id="swagger-ui">', 1)[1]
    for path, methods in schema["paths"].items():
        for method in methods:
            assert f"<code>{method.upper()} {path}</code>" in mount
    recommend = schema["paths"]["/api/recommend"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    body = schema["components"]["schemas"][recommend["$ref"].rsplit("/", 1)[-1]]
    assert set(body["required"]) == {"gpu", "gpus"}
    for field in body["required"]:
        assert f"<td><code>{field}</code></td><td>" in mount
    assert html.escape("default false") in mount or "default false" in mount  # JSON, not Python's False
    assert "/docs" not in schema["paths"]  # the page is not an API endpoint


def test_redoc_carries_the_same_reference_inside_the_element_redoc_renders_into():
    # ReDoc (cdn.jsdelivr.net too) renders into <redoc spec-url=…>, replacing what is there: offline, the reference
    # shows instead of an empty page; online, ReDoc takes over as before.
    client = TestClient(create_app(Settings(), chat_service=object()))
    schema = client.get("/openapi.json").json()
    page = client.get("/redoc")
    assert page.status_code == 200 and "redoc.standalone.js" in page.text
    mount = page.text.split('<redoc spec-url="/openapi.json">', 1)[1].split("</redoc>", 1)[0]
    for path, methods in schema["paths"].items():
        for method in methods:
            assert f"<code>{method.upper()} {path}</code>" in mount
    assert "ReDoc could not load" in mount
    assert "/redoc" not in schema["paths"]
