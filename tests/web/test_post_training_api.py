"""Post-training modes through the REST API and the page's form: the CLI's names in, the CLI's
`--json` out (issue 15)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.cli.main import main as cli
from shardwise.web.app import create_app
from shardwise.web.pages import form_to_request
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "global_batch": 256}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def test_grpo_evaluate_answers_what_the_cli_prints(client, capsys):
    body = {**SCENARIO, "mode": "grpo", "response_len": 1024, "tp": 1, "zero": 3, "micro_batch": 2}
    r = client.post("/api/evaluate", json=body)
    assert r.status_code == 200, r.text
    assert cli(["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--global-batch", "256",
                "--mode", "grpo", "--response-len", "1024", "--zero", "3", "--micro-batch", "2", "--json"]) == 0
    assert r.json() == json.loads(capsys.readouterr().out)
    assert r.json()["time"]["rollout_s"] > 0


def test_bad_post_training_input_is_a_400_naming_the_problem(client):
    r = client.post("/api/evaluate", json={**SCENARIO, "mode": "dpo", "response_len": 1024})
    assert r.status_code in (400, 422) and "grpo or ppo" in r.text


def test_page_form_sends_the_response_length_for_rollout_modes():
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "8192", "batch": "256",
            "batch_unit": "sequences", "mode": "grpo-lora", "response_len": "1k"}
    setup = form_to_request(form).setup()
    assert setup.post_training.response_len == 1024 and setup.seq_len == 512 + 1024 and setup.mode == "lora"
    plain = form_to_request({**form, "mode": "full"}).setup()
    assert plain.post_training is None and plain.seq_len == 8192


def test_page_says_what_the_post_training_step_was_modelled_with(client):
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "", "batch": "640",
            "batch_unit": "sequences", "mode": "grpo", "response_len": "1024", "precision": "bf16",
            "framework": "fsdp"}
    r = client.post("/", data=form)
    assert r.status_code == 200, r.text[:500]
    assert "Post-training:" in r.text and "GRPO co-located" in r.text and "Memory peaks during" in r.text
    assert "verl&#39;s defaults used" in r.text or "verl's defaults used" in r.text
