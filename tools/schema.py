"""Tool schemas in OpenAI strict mode, generated from the pydantic Args models.

Strict mode (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas):
every object lists all its properties as required and sets additionalProperties false; an
optional field is nullable instead (type ["integer", "null"]). We emit the subset that every
OpenAI-compatible server also accepts: no $ref (nested models are inlined), no defaults or
titles, and numeric or length bounds are written into the description rather than as
keywords; pydantic enforces them when the call comes back.
"""

from __future__ import annotations

import copy

from pydantic import BaseModel

DROPPED = {"title", "default", "examples"}
BOUNDS = {"minimum": "≥ {}", "maximum": "≤ {}", "exclusiveMinimum": "> {}", "exclusiveMaximum": "< {}",
          "minLength": "at least {} characters", "maxLength": "at most {} characters",
          "minItems": "at least {} items", "maxItems": "at most {} items", "pattern": "matching {}",
          "multipleOf": "a multiple of {}"}


def strict_parameters(model: type[BaseModel]) -> dict:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    return _strict(_inline(raw, defs))


def tool_schema(name: str, description: str, args: type[BaseModel]) -> dict:
    return {"type": "function",
            "function": {"name": name, "description": description, "strict": True,
                         "parameters": strict_parameters(args)}}


def _inline(node, defs: dict):
    if isinstance(node, dict):
        if "$ref" in node:
            target = copy.deepcopy(defs[node["$ref"].rsplit("/", 1)[-1]])
            extra = {k: v for k, v in node.items() if k != "$ref"}
            return _inline({**target, **extra}, defs)
        return {k: _inline(v, defs) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


def _strict(node: dict) -> dict:
    node = {k: v for k, v in node.items() if k not in DROPPED}
    notes = [BOUNDS[k].format(node.pop(k)) for k in list(node) if k in BOUNDS]
    if notes:
        node["description"] = (node.get("description", "") + " (" + ", ".join(notes) + ")").strip()
    if "anyOf" in node:
        node = _collapse_nullable(node)
    if "anyOf" in node:
        node["anyOf"] = [_strict(option) for option in node["anyOf"]]
    if node.get("type") == "object" or "properties" in node:
        props = node.get("properties", {})
        node["properties"] = {name: _strict(schema) for name, schema in props.items()}
        node["required"] = list(props)
        node["additionalProperties"] = False
    if "items" in node:
        node["items"] = _strict(node["items"])
    return node


def _collapse_nullable(node: dict) -> dict:
    """anyOf [X, null] with a scalar X -> X with type [X.type, "null"] (and null in its enum)."""
    options = node["anyOf"]
    non_null = [o for o in options if o.get("type") != "null"]
    if len(options) != 2 or len(non_null) != 1:
        return node
    inner = non_null[0]
    if inner.get("type") in (None, "object", "array") or "anyOf" in inner:
        return node
    merged = {**inner, **{k: v for k, v in node.items() if k != "anyOf"}}
    merged["type"] = [inner["type"], "null"]
    if "enum" in merged:
        merged["enum"] = [*merged["enum"], None]
    return merged


def check_strict(schema: dict, path: str = "$") -> list[str]:
    """Every rule of strict mode this module promises, as a list of breaches (empty = fine)."""
    problems = []
    if not isinstance(schema, dict):
        return problems
    for key in ("$ref", "$defs", "default", "allOf", "oneOf", "not", *BOUNDS):
        if key in schema:
            problems.append(f"{path}: has {key}")
    if schema.get("type") == "object" or "properties" in schema:
        props = schema.get("properties", {})
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties is not false")
        if sorted(schema.get("required", [])) != sorted(props):
            problems.append(f"{path}: required is not every property")
        for name, sub in props.items():
            problems += check_strict(sub, f"{path}.{name}")
    for i, option in enumerate(schema.get("anyOf", [])):
        problems += check_strict(option, f"{path}.anyOf[{i}]")
    if "items" in schema:
        problems += check_strict(schema["items"], f"{path}[]")
    return problems
