"""The page's "Not shown" line says why plans were left out in words, with the engine's counts: it printed the
rule ids with spaces ("57,600 tp cp pp divides gpus, 1,665 zero without dp")."""

from __future__ import annotations

import re

from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.engine.validity import short_reason
from shardwise.web.settings import Settings


def test_the_not_shown_line_names_reasons_in_words_with_the_engines_counts():
    client = TestClient(create_app(Settings(), chat_service=object()))
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16", "seq_len": "4k", "batch": "256",
            "batch_unit": "sequences", "mode": "full", "precision": "bf16", "framework": "megatron"}
    page = client.post("/", data=form)
    assert page.status_code == 200
    api = client.post("/api/recommend", json={"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16,
                                              "seq_len": 4096, "global_batch": 256}).json()
    line = re.search(r"Not shown: (.*?)\.</p>", page.text).group(1)
    assert api["excluded"]  # 16 GPUs: TP·CP·PP that do not divide 16 are left out, at least
    for rule, n in api["excluded"].items():
        assert f"{n:,}: {short_reason(rule).replace(chr(39), '&#39;')}" in line
    assert "divides gpus" not in line and "_" not in line


def test_an_fp8_scenarios_mfu_says_its_peak():
    # MFU is taken against the precision's dense peak (docs/performance.md "FLOPs, MFU and HFU"); the CLI says
    # "of the FP8 peak" after an FP8 MFU (tests/cli/test_mfu_basis.py) and so does the page, BF16 saying nothing.
    client = TestClient(create_app(Settings(), chat_service=object()))
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "16", "seq_len": "4k", "batch": "256",
            "batch_unit": "sequences", "mode": "full", "framework": "megatron"}
    fp8 = client.post("/", data={**form, "precision": "fp8"}).text
    bf16 = client.post("/", data={**form, "precision": "bf16"}).text
    assert "% of the FP8 peak</small>" in fp8 and "FP8 peak" not in bf16


def test_what_would_fit_calls_its_plans_the_leanest():
    # Llama-3.1-405B on 8 H100s fits nowhere; the smallest GPU count that fits came with the probe's
    # least-memory plan (TP=128 on 128 GPUs) written as "with TP 128 …", read as the advice.
    client = TestClient(create_app(Settings(), chat_service=object()))
    form = {"model": "llama-3.1-405b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "8k", "batch": "1024",
            "batch_unit": "sequences", "mode": "full", "precision": "bf16", "framework": "megatron"}
    text = client.post("/", data=form).text
    assert "What would fit" in text and "the least memory, not the fastest" in text
    assert "leanest plan TP" in text and "with TP" not in text
    assert ">QLoRA training<" in text and ">a larger GPU<" in text and "larger gpu" not in text


def test_the_post_training_note_counts_in_words():
    # PPO samples once per prompt (verl rollout.n: 1) on rollout engines of 2 GPUs (rollout TP 2): it read
    # "1 sample(s) per prompt, rollout on engines of 2 GPU(s)".
    client = TestClient(create_app(Settings(), chat_service=object()))
    form = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "1k", "batch": "256",
            "batch_unit": "sequences", "mode": "ppo", "precision": "bf16", "framework": "fsdp"}
    text = client.post("/", data=form).text
    assert "1 sample per prompt, rollout on engines of 2 GPUs" in text and "(s)" not in text
