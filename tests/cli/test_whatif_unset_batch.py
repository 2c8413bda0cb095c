"""A what-if on a batch the user never set: it is the default of the scenario as it stands, on every surface.

The contract (docs/search.md, "A batch you never set"): a batch never given is `default_global_batch(mode)`
(engine/training.py): 1,024 sequences, 128 for a plain LoRA/QLoRA fine-tune (tloen/alpaca-lora `finetune.py`
`batch_size: int = 128`), whatever the sequence length — what `recommend` uses for the new scenario. A batch
the user set is kept: in sequences across a mode change, in tokens per step across a sequence-length change.
By hand:
- full -> lora, none set: 1,024 -> 128 sequences; set to 1,024: stays 1,024;
- seq 4,096 -> 16,384, none set: stays 1,024 sequences (as `recommend --seq-len 16k`);
  set to 512: 512 x 4,096 = 2,097,152 tokens = 128 sequences of 16,384.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.tools import dispatch
from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from support.cli_runner import run

FLAGS = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--top", "1"]
SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8}
CASES = [  # (batch given, change, batch after)
    (None, {"mode": "lora"}, 128),
    (1024, {"mode": "lora"}, 1024),
    (None, {"seq_len": 16384}, 1024),
    (512, {"seq_len": 16384}, 128),
]


def _cli_after(capsys, batch, change) -> dict:
    given = ["--global-batch", str(batch)] if batch else []
    text = ",".join(f"{k}={v}" for k, v in change.items())
    code, out, err = run(capsys, "what-if", *FLAGS, *given, "--change", text, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.mark.parametrize("batch,change,after", CASES)
def test_cli(capsys, batch, change, after):
    data = _cli_after(capsys, batch, change)
    assert data["after"]["setup"]["global_batch"] == after


@pytest.mark.parametrize("batch,change,after", CASES)
def test_rest(batch, change, after):
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()))
    body = {**SCENARIO, "top_k": 1, "change": change, **({"global_batch": batch} if batch else {})}
    r = client.post("/api/what-if", json=body)
    assert r.status_code == 200, r.text
    assert r.json()["after"]["setup"]["global_batch"] == after


@pytest.mark.parametrize("batch,change,after", CASES)
def test_the_chats_tool(batch, change, after):
    scenario = {**SCENARIO, **({"global_batch": batch} if batch else {})}
    out = dispatch("what_if", json.dumps({"scenario": scenario, "change": change}), result_id="R1")
    assert out.ok, out.errors
    assert out.result.after.global_batch == after


def test_the_cli_says_the_batch_followed_the_mode(capsys):
    code, out, err = run(capsys, "what-if", *FLAGS, "--change", "mode=lora")
    assert code == 0, err
    assert "global_batch: 1024 → 128" in out
    assert "batch    none was set, so it is mode lora's default (128 sequences)" in out
    code, out, err = run(capsys, "what-if", *FLAGS, "--global-batch", "1024", "--change", "mode=lora")
    assert "global_batch" not in out.splitlines()[0] and "batch    none was set" not in out


def test_the_chats_tool_names_why_the_batch_moved():
    out = dispatch("what_if", json.dumps({"scenario": SCENARIO, "change": {"mode": "lora"}}), result_id="R1")
    assert out.ok, out.errors
    reason = next(r for r in out.result.reasons if r.rule == "global_batch")
    assert (reason.numbers["before"], reason.numbers["after"]) == (1024, 128)
    assert reason.numbers["why"] == "none was set, so it is mode lora's default"
