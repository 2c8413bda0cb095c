"""REST answers name settings as the request body does (gpus_per_node, precision), never as CLI flags.

The engine writes settings as `{name}`; the API's 400s, warnings and export refusals carry the plain name,
the field the client sent. Expected messages are written by hand from the engine's templates (files named).
"""

from __future__ import annotations

import re

import pytest


SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}
CLI_FLAG = re.compile(r"(?<![\w-])--(gpus|gpus-per-node|params|model|mode|precision|format|prompt-len|train-tokens|"
                      r"recompute|moe-dispatcher|moe-a2a-overlap|cuda-graphs|framework|zero)\b")


@pytest.fixture(scope="module")
def client(api_client):
    return api_client


def _refusal(client, path, body) -> str:
    r = client.post(path, json=body)
    assert r.status_code == 400, r.text
    message = r.json()["message"]
    assert not CLI_FLAG.search(message), message
    return message


def test_a_cluster_refusal_names_the_fields(client):  # engine/inputs.py build_cluster
    assert _refusal(client, "/api/evaluate", {**SCENARIO, "gpus_per_node": 16}) == (
        "gpus_per_node 16 is larger than the cluster (gpus 8): give at most 8 GPUs per node, or more GPUs")


def test_a_rollout_setting_outside_rl_names_the_fields(client):  # engine/post_training/modes.py
    assert _refusal(client, "/api/evaluate", {**SCENARIO, "prompt_len": 512}) == (
        "prompt_len describe rollout generation and apply only to mode grpo or ppo (and their -lora/-qlora "
        "variants), not full")


def test_a_budget_refusal_names_the_field(client):  # web/schemas.py -> engine/inputs.py parse_count
    assert _refusal(client, "/api/evaluate", {**SCENARIO, "train_tokens": "-5"}) == (
        "train_tokens must be a positive number, got '-5'")


def test_export_refusals_name_the_fields(client):  # engine/export/megatron.py, accelerate.py
    assert _refusal(client, "/api/export", {**SCENARIO, "format": "megatron", "mode": "lora"}) == (
        "cannot export this plan to megatron: Megatron-LM's pretrain_gpt.py has no LoRA adapters; "
        "export format megatron-bridge (peft=lora) or use mode full")
    assert _refusal(client, "/api/export", {**SCENARIO, "format": "accelerate", "recompute": "selective",
                                            "tp": 2}).endswith("; use recompute full, or export format megatron")


def test_warnings_and_export_notes_name_the_fields(client):  # engine/validity/experts.py, engine/export/plan.py
    r = client.post("/api/evaluate", json={"model": "mixtral-8x7b", "gpu": "h100-sxm", "gpus": 64, "ep": 8, "tp": 2})
    assert r.status_code == 200
    [pricing] = [w["message"] for w in r.json()["warnings"] if w["rule"] == "expert_all_to_all_pricing"]
    assert "pass moe_dispatcher deepep" in pricing and "(pass moe_a2a_overlap if you run" in pricing
    assert not CLI_FLAG.search(pricing) and set(r.json()["warnings"][0]) == {"rule", "message"}
    r = client.post("/api/export", json={**SCENARIO, "format": "torchtitan", "cuda_graphs": "per-layer"})
    assert r.status_code == 200
    notes = r.json()["warnings"]
    assert any("evaluate it again with cuda_graphs none and framework fsdp" in n for n in notes)
    assert not any(CLI_FLAG.search(n) for n in notes)


def test_the_rest_contract_carries_no_spelling_machinery(client):
    """The CLI's spelling rides on private attributes: /openapi.json and the JSON answers do not show it."""
    spec = client.get("/openapi.json").text
    assert "SettingsText" not in spec and "_said" not in spec
