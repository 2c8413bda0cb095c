"""POST /api/calibrate with logs as clients send them: text that kept its file's byte-order mark.
Expected values are read off the excerpts by hand (formats: NVIDIA/Megatron-LM d98e8a64,
megatron/training/arguments.py _print_args and training.py training_log)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings

# A paste trimmed of its leading spaces: the first line is an argument line. seq_length 2048 (not the 4,096
# default, so reading it shows); one iteration of 4000.0 ms at global batch 64.
TRIMMED = ("seq_length ...................................... 2048\n"
           " iteration       20/     100 | elapsed time per iteration (ms): 4000.0 | global batch size:    64 |\n")


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def test_a_log_string_that_kept_its_bom_reads_its_first_line(client):
    r = client.post("/api/calibrate", json={"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "log": "\ufeff" + TRIMMED})
    assert r.status_code == 200, r.text
    run = r.json()["runs"][0]
    # 64 x 2,048 = 131,072 tokens per step / 4.0 s / 8 GPUs = 4,096 tokens/s per GPU
    assert (run["seq_len"], run["global_batch"]) == (2048, 64)
    assert run["measured_tokens_per_s_per_gpu"] == pytest.approx(4096)
