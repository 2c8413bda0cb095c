"""One default global batch for a LoRA/QLoRA fine-tune given none: 128 sequences on every surface.

It was 1,024 in the CLI and REST but 128 in the chat's tools. 128 is the default of tloen/alpaca-lora's
`finetune.py` (`batch_size: int = 128`) and Stanford Alpaca's fine-tune (README: "batch size 128");
engine/training.py holds it once. By hand: 128 sequences x 4,096 tokens = 524,288 tokens per step.
Full training and the post-training modes keep the 1,024 default (1,024 x 4,096 = 4,194,304 tokens).
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.tools import dispatch
from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from support.cli_runner import run

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}
EXPECTED = {"lora": 128, "qlora": 128, "full": 1024, "dpo-lora": 1024}


@pytest.mark.parametrize("mode", EXPECTED)
def test_cli_evaluate_uses_the_modes_default_batch(capsys, mode):
    code, out, err = run(capsys, "evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8",
                         "--mode", mode, "--json")
    assert code == 0, err
    setup = json.loads(out)["setup"]
    assert setup["global_batch"] == EXPECTED[mode] and setup["global_batch_tokens"] == EXPECTED[mode] * 4096


@pytest.mark.parametrize("mode", EXPECTED)
def test_rest_evaluate_uses_the_same_default(mode):
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()))
    r = client.post("/api/evaluate", json={**SCENARIO, "mode": mode})
    assert r.status_code == 200, r.text
    assert r.json()["setup"]["global_batch"] == EXPECTED[mode]


@pytest.mark.parametrize("mode", EXPECTED)
def test_the_tools_use_the_same_default(mode):
    out = dispatch("evaluate_plan", json.dumps({"scenario": {**SCENARIO, "mode": mode}, "plan": {"tp": 1}}),
                   result_id="R1")
    assert out.ok, out.errors
    assert out.result.evaluation.setup.global_batch == EXPECTED[mode]


def test_the_cli_help_states_both_defaults(capsys):
    code, out, err = run(capsys, "evaluate", "--help")
    assert "sequences per optimizer step (default 1024; lora/qlora 128; grpo/ppo 1024 prompts x the group size)" in " ".join(out.split())
