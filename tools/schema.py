"""Tool schemas for the chat-completions `tools` list, generated from the pydantic Args models —
compact enough that a small local model's context holds them (the test budget: system prompt
plus schemas ≤ 2,500 o200k tokens, tests/agent/test_prompt_budget.py).

Compact means:
- Shared definitions. The scenario and the plan appear in most tools; their fields are written
  once, in the system prompt (`shared_definitions()`), and a tool's schema names them as
  `{"type": "object", "description": "Scenario ..."}`. Inlined, they were ~70 % of the tokens.
- Optional arguments are simply not required (no strict mode: strict mode makes every field
  required and nullable, which doubles the schema and makes a model write a null per field).
  pydantic validates every call; what it rejects goes back to the model as a list of fixes.
- No titles or defaults; numeric or length bounds are written into the description.
"""

from __future__ import annotations

import copy
from typing import get_args

from pydantic import BaseModel

DROPPED = {"title", "default", "examples", "additionalProperties"}
BOUNDS = {"minimum": "≥ {}", "maximum": "≤ {}", "exclusiveMinimum": "> {}", "exclusiveMaximum": "< {}",
          "minLength": "at least {} characters", "maxLength": "at most {} characters",
          "minItems": "at least {} items", "maxItems": "at most {} items", "pattern": "matching {}",
          "multipleOf": "a multiple of {}"}


def shared_models() -> dict[str, type[BaseModel]]:
    """The argument types defined once, in the system prompt, and named by the tools."""
    from .recommend import Constraints
    from .scenario import Plan, Scenario

    return {"Scenario": Scenario, "Plan": Plan, "Constraints": Constraints}


def compact_parameters(model: type[BaseModel]) -> dict:
    raw = model.model_json_schema()
    defs = raw.pop("$defs", {})
    return _compact(_inline(raw, defs, set(shared_models())))


def tool_schema(name: str, description: str, args: type[BaseModel]) -> dict:
    return {"type": "function",
            "function": {"name": name, "description": description, "parameters": compact_parameters(args)}}


def _inline(node, defs: dict, shared: set[str]):
    """Replace each $ref by its definition, except a shared one, which becomes a named object."""
    if isinstance(node, dict):
        if "$ref" in node:
            name = node["$ref"].rsplit("/", 1)[-1]
            extra = {k: v for k, v in node.items() if k != "$ref"}
            if name in shared:
                said = extra.get("description")
                return {"type": "object", "description": f"{name}: {said}" if said else name}
            return _inline({**copy.deepcopy(defs[name]), **extra}, defs, shared)
        return {k: _inline(v, defs, shared) for k, v in node.items()}
    if isinstance(node, list):
        return [_inline(v, defs, shared) for v in node]
    return node


def _compact(node: dict) -> dict:
    if "anyOf" in node:
        node = _drop_null(node)
    node = {k: v for k, v in node.items() if k not in DROPPED}
    notes = [BOUNDS[k].format(node.pop(k)) for k in list(node) if k in BOUNDS]
    if notes:
        node["description"] = (node.get("description", "") + " (" + ", ".join(notes) + ")").strip()
    if "anyOf" in node:
        node["anyOf"] = [_compact(option) for option in node["anyOf"]]
    if "properties" in node:
        node["properties"] = {name: _compact(schema) for name, schema in node["properties"].items()}
        if not node.get("required"):
            node.pop("required", None)
    if "items" in node:
        node["items"] = _compact(node["items"])
    return node


def _drop_null(node: dict) -> dict:
    """anyOf [X, null] -> X: an optional argument is one the model may leave out."""
    non_null = [o for o in node["anyOf"] if o.get("type") != "null"]
    if len(non_null) != 1:
        return node
    rest = {k: v for k, v in node.items() if k != "anyOf"}
    said = [d for d in (non_null[0].get("description"), rest.pop("description", None)) if d]
    merged = {**non_null[0], **rest}
    if said:
        merged["description"] = ": ".join(said)
    return merged


def definition_lines(name: str, model: type[BaseModel], earlier: dict[str, type[BaseModel]] | None = None) -> list[str]:
    """'Scenario (…): model: catalog id …; gpus: total GPUs; mode (full|lora|qlora…); …'. Fields the same as an
    `earlier` definition's are named, not defined again: 'Constraints (…): tp, pp, … as in Plan; max_tp; max_pp'."""
    fields = []
    same, source = _same_fields(model, earlier or {})
    if same:
        fields.append(f"{', '.join(same)} as in {source}")
    for field_name, info in model.model_fields.items():
        if field_name in same:
            continue
        kind = _kind(info.annotation)
        head = f"{field_name} ({kind})" if kind else field_name
        fields.append(f"{head}: {info.description}" if info.description else head)
    doc = (model.__doc__ or "").strip().splitlines()[0].rstrip(".")
    return [f"{name} ({doc}): " + "; ".join(fields)]


def _same_fields(model: type[BaseModel], earlier: dict[str, type[BaseModel]]) -> tuple[list[str], str]:
    """The fields `model` shares (name and type) with the earlier definition it shares most with."""
    best: tuple[list[str], str] = ([], "")
    for other_name, other in earlier.items():
        same = [n for n, f in model.model_fields.items() if n in other.model_fields
                and f.annotation == other.model_fields[n].annotation]
        if len(same) > len(best[0]):
            best = (same, other_name)
    return best if len(best[0]) >= 2 else ([], "")


def _kind(annotation) -> str:
    """How a field's type is written in a definition: enums as a|b|c, true/false; not integers, which the
    definitions' heading says once (counts, lengths and degrees), nor strings."""
    options = [a for a in get_args(annotation) if a is not type(None)] or [annotation]
    inner = options[0]
    literal = get_args(inner)
    if literal and all(isinstance(v, str) for v in literal):
        return _options(literal)
    return {float: "number", bool: "true/false"}.get(inner, "")


def _options(values: tuple[str, ...]) -> str:
    """'a|b|c'; variants written once: 'full|lora|qlora|dpo|grpo|ppo; dpo, grpo, ppo also -lora|-qlora', not
    twelve names (dpo-lora, dpo-qlora, grpo-lora, …)."""
    bases = [v for v in values if not any(v.startswith(b + "-") for b in values if b != v)]
    variants = {b: [v[len(b):] for v in values if v.startswith(b + "-")] for b in bases}
    with_variants = [b for b in bases if variants[b]]
    suffixes = {tuple(variants[b]) for b in with_variants}
    if len(with_variants) < 2 or len(suffixes) != 1:
        return "|".join(values)
    return f"{'|'.join(bases)}; {', '.join(with_variants)} also {'|'.join(next(iter(suffixes)))}"


def shared_definitions() -> str:
    """The shared argument types, for the system prompt."""
    lines, earlier = [], {}
    for name, model in shared_models().items():
        lines += definition_lines(name, model, earlier)
        earlier[name] = model
    return "\n".join(lines)


def schema_problems(schema: dict, path: str = "$") -> list[str]:
    """What a compact schema must not contain (the budget's promises), as a list of breaches."""
    problems = []
    if not isinstance(schema, dict):
        return problems
    for key in ("$ref", "$defs", "default", "title", "allOf", "oneOf", "not", *BOUNDS):
        if key in schema:
            problems.append(f"{path}: has {key}")
    if isinstance(schema.get("type"), list) and "null" in schema["type"]:
        problems.append(f"{path}: is nullable (leave optional arguments out instead)")
    for name in schema.get("required", []):
        if name not in schema.get("properties", {}):
            problems.append(f"{path}: requires {name}, which is not a property")
    for name, sub in schema.get("properties", {}).items():
        problems += schema_problems(sub, f"{path}.{name}")
    for i, option in enumerate(schema.get("anyOf", [])):
        problems += schema_problems(option, f"{path}.anyOf[{i}]")
    if "items" in schema:
        problems += schema_problems(schema["items"], f"{path}[]")
    return problems
