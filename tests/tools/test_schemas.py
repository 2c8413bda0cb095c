"""Tool schemas: generated from the Args models in compact form (tools/schema.py), kept as golden files.

A change to a tool's arguments changes what every LLM sees; the golden files make that a
reviewed diff. Regenerate with SHARDWISE_UPDATE_GOLDEN=1 pytest tests/tools/test_schemas.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shardwise.tools import registry, tool_schemas
from shardwise.tools.scenario import Plan, Scenario
from shardwise.tools.schema import compact_parameters, schema_problems, shared_definitions

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
def test_schema_is_compact_and_names_every_argument(schema):
    fn = schema["function"]
    assert schema["type"] == "function" and "strict" not in fn
    assert len(fn["name"]) <= 64 and fn["name"].replace("_", "").isalnum()
    params = fn["parameters"]
    assert params["type"] == "object" and schema_problems(params) == []
    args = registry()[fn["name"]].args
    assert set(params["properties"]) == set(args.model_fields)
    assert set(params.get("required", [])) == {n for n, f in args.model_fields.items() if f.is_required()}


def test_the_problem_finder_catches_what_compact_schemas_leave_out():
    bad = {"type": "object", "properties": {"a": {"type": ["integer", "null"], "minimum": 1, "default": 3},
                                            "b": {"$ref": "#/$defs/B"}},
           "required": ["a", "c"]}
    problems = schema_problems(bad)
    assert "$.a: has default" in problems and "$.a: has minimum" in problems and "$.b: has $ref" in problems
    assert "$.a: is nullable (leave optional arguments out instead)" in problems
    assert "$: requires c, which is not a property" in problems


def test_scenario_and_plan_are_named_in_schemas_and_defined_once_in_the_definitions():
    p = compact_parameters(registry()["compare_plans"].args)
    assert p["properties"]["scenario"] == {"type": "object", "description": "Scenario"}
    assert p["properties"]["plan_a"]["description"] == "Plan"
    text = shared_definitions()
    for field in (*Scenario.model_fields, *Plan.model_fields):
        assert f"; {field}" in text or f": {field}" in text, field
    # the twelve modes, their -lora/-qlora variants written once (Scenario.mode: TRAINING_MODES)
    assert "mode (full|lora|qlora|dpo|grpo|ppo; dpo, grpo, ppo also -lora|-qlora)" in text
    # integers are said once, in the prompt's heading ("numbers are integers"); other kinds per field
    assert "gpus: total GPUs" in text and "sequence_parallel (true/false)" in text
    # the constraints name the Plan's knobs instead of defining them again, and add their bounds
    assert "Constraints (Pin or bound knobs the user has decided): tp, pp, cp, ep, zero, micro_batch, recompute as in Plan; " \
           "max_tp; max_pp" in text


def test_optional_arguments_are_left_out_not_nullable():
    p = compact_parameters(registry()["recommend_plans"].args)
    assert p["required"] == ["scenario"]
    assert p["properties"]["top_k"]["type"] == "integer"
    assert p["properties"]["constraints"] == {"type": "object", "description": "Constraints"}  # defined in the prompt
    constraints = registry()["recommend_plans"].args.model_validate(
        {"scenario": {"model": "llama-3.1-8b"}, "constraints": {"recompute": "full", "max_tp": 4}}).constraints
    assert constraints.as_engine() == {"recompute": "full", "max_tp": 4}


def test_a_call_with_only_what_the_user_said_validates_against_the_args_model():
    """What a model sends from the compact schema (optional fields left out) is accepted as is; so is a
    call that sends null for every field (what a strict-mode habit produces)."""
    args = registry()["what_if"].args
    short = {"scenario": {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8}, "change": {"gpu": "h200"}}
    assert args.model_validate(short).change.gpu == "h200"
    full = {"scenario": {k: None for k in Scenario.model_fields}, "change": {k: None for k in Scenario.model_fields}}
    full["scenario"].update(model="llama-3.1-8b", gpu="h100", gpus=8)
    full["change"]["gpu"] = "h200"
    assert args.model_validate(full).change.gpu == "h200"
