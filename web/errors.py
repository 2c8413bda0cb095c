"""Every error leaves as JSON `{"message": "...", "errors": [{"field", "message"}]}` — never a traceback.

400 malformed JSON or input the engine cannot interpret, 413 too large, 415 a body not sent as JSON, 422 a field out of bounds
or unknown, 429 too many requests, 503 the engine's worker pool is full (Retry-After), 500 a bug (logged here, generic message out there: internals
and keys stay on the server).
"""

from __future__ import annotations

import logging
import re

from fastapi import FastAPI, HTTPException, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import ValidationError

from ..engine.errors import ShardwiseInputError
from .request_names import DERIVED, meant
from .workpool import PoolBusy

log = logging.getLogger("shardwise.web")


# FastAPI's words when the body is not decodable at all (bytes that are not UTF-8, or JSON nested deeper than
# the parser's recursion limit); a JSON syntax error gets the json_invalid message below instead.
STARLETTE_PARSE_ERROR = "There was an error parsing the body"
NOT_READABLE_JSON = ("the request body cannot be read as JSON: send one JSON object as UTF-8 text (bytes that are not "
                     "UTF-8, or arrays/objects nested hundreds of levels deep, cannot be parsed)")


# pydantic tags a union's model branch with the model's class name (('body', 'a', 'PlanFields', 'tp')); our
# fields are snake_case, so a CamelCase part is such a tag.
UNION_MODEL_TAG = re.compile(r"^[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+$")


# Settings the responses name differently from the requests (README "Output contract": cluster.num_gpus,
# strategy.zero_stage, strategy.hsdp_replicas): a body copied from a response was refused as "unknown field" alone.
RESPONSE_SPELLINGS = {"num_gpus": "gpus", "zero_stage": "zero", "hsdp_replicas": "hsdp"}


# What a constraints value may be (web/schemas.SearchFields), for a value of another type such as {"max": {"pp": 4}}.
CONSTRAINT_VALUE = ("a constraint's value is a number, a string, true/false or a list of them, under the knob's "
                    "name: {\"tp\": 8}, {\"max_pp\": 4}, {\"zero\": [1, 3]}, {\"recompute\": \"full\"}")


def field_name(loc: tuple) -> str:
    """('body', 'gpus') -> 'gpus'; pydantic's union branches like 'int', 'str' or 'PlanFields' are dropped."""
    parts = [str(p) for p in loc if p not in ("body", "query", "path")]
    parts = [p for p in parts if not p.startswith(("function-", "json-or-python")) and p not in {"int", "str", "float", "dict[str,any]"}
             and not UNION_MODEL_TAG.match(p)]
    return ".".join(parts) or "body"


def _other_branch_went_deeper(name: str, error: dict, names: list[str]) -> bool:
    """'a: Input should be a valid string' beside 'a.tp: …': the value was the union's other type (an object),
    so the wrong-type complaint of the string branch is noise."""
    return str(error.get("type", "")).endswith("_type") and any(n.startswith(name + ".") for n in names)


def describe_validation(errors: list[dict], path: str = "") -> tuple[int, str, list[dict[str, str]]]:
    """Pydantic's error list -> (status, one-line message, per-field entries). `path`: the endpoint, whose
    fields an unknown name is matched against (web/request_names.py)."""
    if any(e.get("type") == "json_invalid" for e in errors):
        e = next(e for e in errors if e.get("type") == "json_invalid")
        reason = (e.get("ctx") or {}).get("error", "invalid JSON")
        where = e.get("loc", ())
        pos = f" at character {where[1]}" if len(where) > 1 and isinstance(where[1], int) else ""
        return 400, f"malformed JSON{pos}: {reason}", [{"field": "body", "message": str(reason)}]
    entries, said, seen = [], [], set()
    names = [field_name(tuple(e.get("loc", ()))) for e in errors]
    for e, name in zip(errors, names):
        if _other_branch_went_deeper(name, e, names):
            continue
        if name == "body" and e.get("type") == "missing":
            msg = "the request body is empty: send a JSON object (see /docs)"
        elif name == "body" and e.get("type") in {"model_attributes_type", "dict_type", "model_type"}:
            msg = "the request body must be a JSON object {…}, not " + type(e.get("input")).__name__.replace("NoneType", "null")
        elif e.get("type") == "extra_forbidden" and name.rsplit(".", 1)[-1] in RESPONSE_SPELLINGS:
            msg = (f"unknown field: a request names it {RESPONSE_SPELLINGS[name.rsplit('.', 1)[-1]]!r} "
                   f"(the response's {name.rsplit('.', 1)[-1]!r} is the same setting; see /docs)")
        elif e.get("type") == "extra_forbidden" and name.rsplit(".", 1)[-1] in DERIVED:
            msg = f"unknown field: not set but derived ({DERIVED[name.rsplit('.', 1)[-1]]}); drop it"
        elif e.get("type") == "extra_forbidden" and "." not in name and meant(name, path):
            msg = f"unknown field; did you mean {meant(name, path)}? (see /docs for the allowed names)"
        elif e.get("type") == "extra_forbidden":
            msg = "unknown field (see /docs for the allowed names)"
        elif name.startswith("constraints.") and str(e.get("type", "")).endswith("_type"):
            # one line for the union's four branches (int, str, bool, list), not four pydantic complaints
            name = name.split(".")[0] + "." + name.split(".")[1]
            msg = CONSTRAINT_VALUE
        elif e.get("type") == "missing":
            msg = "required"
        else:
            msg = str(e.get("msg", "invalid")).removeprefix("Value error, ")  # pydantic's prefix on our own messages
        if (name, msg) in seen:
            continue
        seen.add((name, msg))
        entries.append({"field": name, "message": msg})
        # A check across several inputs (an engine spec's model validator) has no field to name: its own
        # sentence names them, so "body: " in front of it would only puzzle (the CLI says it bare too).
        across_inputs = name == "body" and e.get("type") == "value_error"
        said.append(msg if across_inputs else f"{name}: {msg}")
    return 422, "; ".join(said) or "invalid request", entries


def not_json_body(request: Request, errors: list[dict]) -> str | None:
    """The content type, when the body was not read as JSON because the request said it was something else
    (FastAPI then hands the raw bytes to the model, and the error would say 'not bytes')."""
    kind = request.headers.get("content-type", "")
    if "json" in kind.lower():
        return None
    body_as_bytes = any(field_name(tuple(e.get("loc", ()))) == "body" and isinstance(e.get("input"), bytes)
                        for e in errors)
    return (kind.split(";")[0].strip() or "none") if body_as_bytes else None


async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
    kind = not_json_body(request, list(exc.errors()))
    if kind is not None:  # RFC 9110 §15.5.16: 415 for a content type the endpoint does not accept
        message = f"the request body must be JSON sent with Content-Type: application/json (got {kind})"
        return JSONResponse({"message": message, "errors": [{"field": "body", "message": message}]}, status_code=415)
    status, message, entries = describe_validation(list(exc.errors()), request.url.path)
    return JSONResponse({"message": message, "errors": entries}, status_code=status)


async def _pydantic(request: Request, exc: ValidationError) -> JSONResponse:
    # Raised by the engine's specs while building them from a request (e.g. a config.json's shape).
    status, message, entries = describe_validation(list(exc.errors()))
    return JSONResponse({"message": message, "errors": entries}, status_code=400 if status == 422 else status)


async def _input(request: Request, exc: ShardwiseInputError) -> JSONResponse:
    return JSONResponse({"message": str(exc), "errors": []}, status_code=400)


async def _http(request: Request, exc: HTTPException) -> JSONResponse:
    message = exc.detail if isinstance(exc.detail, str) else "request failed"
    if exc.status_code == 404 and message == "Not Found":
        message = f"no such endpoint: {request.method} {request.url.path} (see /docs)"
    if exc.status_code == 400 and message == STARLETTE_PARSE_ERROR:
        message = NOT_READABLE_JSON
    if exc.status_code == 405:
        message = f"{request.method} is not allowed on {request.url.path} (see /docs)"
    return JSONResponse({"message": message, "errors": []}, status_code=exc.status_code, headers=getattr(exc, "headers", None))


async def _busy(request: Request, exc: PoolBusy) -> JSONResponse:
    return JSONResponse({"message": f"the server is busy ({exc}); retry in {exc.retry_after_s} s", "errors": []},
                        status_code=503, headers={"retry-after": str(exc.retry_after_s)})


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return JSONResponse({"message": "internal error while handling this request; it has been logged", "errors": []},
                        status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    from starlette.exceptions import HTTPException as StarletteHTTPException

    app.add_exception_handler(RequestValidationError, _validation)
    app.add_exception_handler(ValidationError, _pydantic)
    app.add_exception_handler(ShardwiseInputError, _input)
    app.add_exception_handler(PoolBusy, _busy)
    app.add_exception_handler(StarletteHTTPException, _http)
    app.add_exception_handler(Exception, _unexpected)
