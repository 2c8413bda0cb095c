"""Tool schemas: generated from the Args models in OpenAI strict mode, kept as golden files.

A change to a tool's arguments changes what every LLM sees; the golden files make that a
reviewed diff. Regenerate with SHARDWISE_UPDATE_GOLDEN=1 pytest tests/tools/test_schemas.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shardwise.tools import registry, tool_schemas
from shardwise.tools.schema import check_strict

GOLDEN = Path(__file__).parent / "golden"
REQUIRED_TOOLS = {"recommend_plans", "evaluate_plan", "compare_plans", "what_if", "estimate_memory", "lookup_model",
                  "list_hardware", "export_config", "explain_concept"}


def test_every_required_tool_is_registered():
    assert set(registry()) >= REQUIRED_TOOLS


@pytest.mark.parametrize("schema", tool_schemas(), ids=lambda s: s["function"]["name"])
def test_schema_matches_its_golden_file(schema):
    path = GOLDEN / f"{schema['function']['name']}.json"
    text = json.dumps(schema, indent=2, ensure_ascii=False) + "\n"
    if os.environ.get("SHARDWISE_UPDATE_GOLDEN"):
        path.write_text(text)
    assert path.exists(), f"no golden file {path.name}; run with SHARDWISE_UPDATE_GOLDEN=1"
    assert text == path.read_text()


@pytest.mark.parametrize("schema", tool_schemas(), ids=lambda s: s["function"]["name"])
def test_schema_follows_strict_mode(schema):
    fn = schema["function"]
    assert schema["type"] == "function" and fn["strict"] is True
    assert len(fn["name"]) <= 64 and fn["name"].replace("_", "").isalnum()
    assert fn["parameters"]["type"] == "object"
    assert check_strict(fn["parameters"]) == []


def test_strict_checker_catches_what_strict_mode_rejects():
    bad = {"type": "object", "properties": {"a": {"type": "integer", "minimum": 1, "default": 3},
                                            "b": {"$ref": "#/$defs/B"}},
           "required": ["a"]}
    problems = check_strict(bad)
    assert "$: additionalProperties is not false" in problems
    assert "$: required is not every property" in problems
    assert "$.a: has default" in problems and "$.a: has minimum" in problems and "$.b: has $ref" in problems


def test_optional_fields_are_nullable_and_enums_include_null():
    params = registry()["recommend_plans"]
    from shardwise.tools.schema import strict_parameters

    p = strict_parameters(params.args)
    mode = p["properties"]["scenario"]["properties"]["mode"]
    assert mode["type"] == ["string", "null"] and mode["enum"] == ["full", "lora", "qlora", "dpo", "dpo-lora", "dpo-qlora", "grpo",
                                                                 "grpo-lora", "grpo-qlora", "ppo", "ppo-lora",
                                                                 "ppo-qlora", None]
    assert p["properties"]["top_k"]["type"] == ["integer", "null"]
    constraints = p["properties"]["constraints"]
    assert {"type": "null"} in constraints["anyOf"]


def test_a_strict_call_validates_against_the_args_model():
    """What a strict-mode model sends (every key, null for unused) is accepted as is."""
    args = registry()["what_if"].args
    sent = {"scenario": {k: None for k in args.model_fields["scenario"].annotation.model_fields},
            "change": {k: None for k in args.model_fields["change"].annotation.model_fields}}
    sent["scenario"].update(model="llama-3.1-8b", gpu="h100", gpus=8)
    sent["change"]["gpu"] = "h200"
    assert args.model_validate(sent).change.gpu == "h200"
