"""`/docs` and `/redoc`: Swagger UI and ReDoc, with the API's reference written into the page by the server.

FastAPI's `/docs` loads Swagger UI's script and CSS from cdn.jsdelivr.net, so offline — where shardwise is
meant to work, README "Install and test" — it was a blank page. Here the same page carries, inside the element
Swagger UI renders into, a plain reference built from the OpenAPI schema: each endpoint, its summary, and its
body's fields with type, default and description. Online, Swagger UI replaces it; offline, it is what shows.
`/redoc` (ReDoc, also from the CDN) carries the same reference inside its <redoc> element, which ReDoc renders
into (replacing it) online: readable offline, ReDoc when the network is there — rather than a redirect to /docs,
which would take ReDoc away from the users who have a network.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse

SWAGGER_MOUNT = re.compile(r'<div id="swagger-ui">\s*</div>')
REDOC_MOUNT = re.compile(r'(<redoc spec-url="[^"]*">)\s*(</redoc>)')


def _resolve(schema: dict, ref_or_schema: dict) -> dict:
    ref = ref_or_schema.get("$ref")
    return schema["components"]["schemas"][ref.rsplit("/", 1)[-1]] if ref else ref_or_schema


def _type(prop: dict) -> str:
    if "$ref" in prop:
        return prop["$ref"].rsplit("/", 1)[-1]
    if "enum" in prop:
        return " | ".join(map(str, prop["enum"]))
    if "anyOf" in prop:
        return " | ".join(_type(p) for p in prop["anyOf"])
    if prop.get("type") == "array":
        return f"list of {_type(prop.get('items', {}))}"
    return str(prop.get("type", "any"))


def _fields(schema: dict, body: dict) -> str:
    props = body.get("properties", {})
    if not props:
        return ""
    required = set(body.get("required", []))
    rows = []
    for name, prop in props.items():
        default = "required" if name in required else (
            f"default {json.dumps(prop['default'])}" if "default" in prop else "optional")  # JSON: false, "full"
        rows.append(f"<tr><td><code>{html.escape(name)}</code></td><td>{html.escape(_type(prop))}</td>"
                    f"<td>{html.escape(default)}</td><td>{html.escape(prop.get('description', ''))}</td></tr>")
    return ("<table><thead><tr><th>field</th><th>type</th><th></th><th>what</th></tr></thead><tbody>"
            + "".join(rows) + "</tbody></table>")


def reference_html(schema: dict[str, Any], viewer: str = "The interactive Swagger UI") -> str:
    """The endpoints and their request bodies, as HTML that needs no script."""
    parts = [f"<h1>{html.escape(schema['info']['title'])} API</h1>",
             f"<p>{html.escape(schema['info'].get('description', ''))}</p>",
             f'<p>{viewer} could not load (it comes from cdn.jsdelivr.net); this is the same '
             'reference, read from <a href="/openapi.json">/openapi.json</a>.</p>']
    for path, methods in schema.get("paths", {}).items():
        for method, op in methods.items():
            parts.append(f"<h2><code>{method.upper()} {html.escape(path)}</code></h2>")
            said = op.get("summary") or ""
            if op.get("description"):
                said = f"{said}. {op['description']}" if said else op["description"]
            parts.append(f"<p>{html.escape(said)}</p>")
            content = op.get("requestBody", {}).get("content", {}).get("application/json")
            if content:
                parts.append(_fields(schema, _resolve(schema, content["schema"])))
    return "\n".join(parts)


def docs_page(app: FastAPI) -> HTMLResponse:
    page = get_swagger_ui_html(openapi_url=app.openapi_url, title=f"{app.title} - API")
    text = page.body.decode()
    filled = SWAGGER_MOUNT.sub(lambda _: f'<div id="swagger-ui">{reference_html(app.openapi())}</div>', text, count=1)
    return HTMLResponse(filled)


def redoc_page(app: FastAPI) -> HTMLResponse:
    page = get_redoc_html(openapi_url=app.openapi_url, title=f"{app.title} - API")
    text = page.body.decode()
    # ReDoc's page sets body margin 0 for its own layout; the plain reference gets a margin of its own.
    reference = f'<div style="margin: 1em 2em">{reference_html(app.openapi(), "ReDoc")}</div>'
    filled = REDOC_MOUNT.sub(lambda m: m.group(1) + reference + m.group(2), text, count=1)
    return HTMLResponse(filled)
