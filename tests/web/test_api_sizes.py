"""Sizes read alike on every surface: REST takes the CLI's `--seq-len 8k` and `--global-batch-tokens 512k`.

The contract (README, docs/rest.md): k = 1024 and M = 2^20 for token counts, as context lengths and recipes
quote them; the expected values below are that arithmetic, and the CLI's own reading of the same flags.
"""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from shardwise.cli.main import main as cli
from shardwise.web.app import create_app
from shardwise.web.settings import Settings

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16}


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def _setup(client, **body):
    r = client.post("/api/evaluate", json={**SCENARIO, **body})
    assert r.status_code == 200, r.text
    return r.json()["setup"]


def test_seq_len_8k_is_8192_tokens_as_the_cli_reads_it(client, capsys):
    assert _setup(client, seq_len="8k", global_batch=64)["seq_len"] == 8 * 1024
    assert _setup(client, seq_len="0.5K", global_batch=64)["seq_len"] == 512
    assert cli(["evaluate", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16", "--seq-len", "8k",
                "--global-batch", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["setup"]["seq_len"] == 8192


def test_512k_batch_tokens_is_512_times_1024_as_the_cli_reads_it(client):
    # 512·2^10 = 524,288 tokens per step / 8,192 per sequence = 64 sequences (was 512,000 / 8,192 -> 62 on REST).
    setup = _setup(client, seq_len="8k", global_batch_tokens="512k")
    assert (setup["global_batch"], setup["global_batch_tokens"]) == (64, 524_288)


def test_rollout_lengths_read_k_too(client):
    setup = _setup(client, mode="grpo", prompt_len="1k", response_len="2k", group_size=8, global_batch=64)
    assert setup["seq_len"] == 1024 + 2048  # grpo: a sequence is prompt + response


@pytest.mark.parametrize("field, value", [("seq_len", "lots"), ("seq_len", "8.3k"), ("seq_len", "0k"),
                                          ("seq_len", "infk"), ("prompt_len", "-1k"), ("response_len", "")])
def test_a_bad_length_is_one_422_naming_the_field_and_an_example(client, field, value):
    r = client.post("/api/evaluate", json={**SCENARIO, "mode": "grpo" if field != "seq_len" else "full", field: value})
    assert r.status_code == 422
    body = r.json()
    assert [e["field"] for e in body["errors"]] == [field]
    assert field in body["message"] and "such as 8192 or 8k" in body["message"]


def test_a_length_beyond_the_setup_bound_is_refused_in_k_too(client):
    # 16,385k = 16,778,240 tokens > TrainingSetup's 16,777,216 (2^24): the same bound as the JSON number has.
    r = client.post("/api/evaluate", json={**SCENARIO, "seq_len": "16385k"})
    assert r.status_code == 422 and "16777216" in r.json()["message"]
    assert client.post("/api/evaluate", json={**SCENARIO, "seq_len": 16_777_217}).status_code == 422
