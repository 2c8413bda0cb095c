"""POST /api/calibrate with logs as clients send them (text that kept its file's byte-order mark, a UTF-16 file
sent undecoded), and torchtitan's
unprinted global batch derived alike by the REST API, `calibrate --from-log` and the chat's tool. Expected values
are read off the excerpts by hand (formats: NVIDIA/Megatron-LM d98e8a64, megatron/training/arguments.py
_print_args and training.py training_log; torchtitan 0.2.2 as engine/training_logs/torchtitan.py names)."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from shardwise.tools import dispatch
from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from support.cli_runner import run

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"

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


def test_a_utf16_log_the_client_sent_undecoded_reads_as_the_log(client):
    # A PowerShell `>` log (UTF-16LE with a BOM) read by the client as UTF-8 with errors replaced: U+FFFD U+FFFD,
    # then a NUL after every character. The same figures as the plain text above.
    sent = (codecs.BOM_UTF16_LE + TRIMMED.encode("utf-16-le")).decode("utf-8", errors="replace")
    r = client.post("/api/calibrate", json={"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "log": sent})
    assert r.status_code == 200, r.text
    run_ = r.json()["runs"][0]
    assert (run_["seq_len"], run_["global_batch"]) == (2048, 64)
    assert run_["measured_tokens_per_s_per_gpu"] == pytest.approx(4096)


def test_torchtitan_global_batch_is_derived_alike_by_cli_rest_and_chat(client, capsys):
    # torchtitan.log: 'Building device mesh with parallelism: pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, …' and no
    # global batch printed. With a local batch of 2 (torchtitan's training.local_batch_size, shardwise's micro-batch)
    # and global_batch_size -1 (its default): 2 x data-parallel degree 8 (dp_replicate 1 x dp_shard 8) = 16.
    log = LOGS / "torchtitan.log"
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--micro-batch", "2", "--from-log", log, "--json")
    assert code == 0, err
    cli = json.loads(out)
    rest = client.post("/api/calibrate", json={"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "micro_batch": 2,
                                               "log": log.read_text()}).json()
    chat = dispatch("calibrate_to_measurement", {
        "scenario": {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8}, "plan": {"micro_batch": 2},
        "measured_tokens_per_s_per_gpu": None, "measured_step_s": None, "measured_mfu": None,
        "log": log.read_text()}, result_id="R1")
    assert chat.ok, chat.errors
    assert cli["runs"][0]["global_batch"] == rest["runs"][0]["global_batch"] == chat.result.scenario.global_batch == 16
    assert rest == cli  # the REST contract: the object `calibrate --json` prints
    # The chat's tool fits without the memory comparison (with_memory=False); the fit itself is the same.
    assert chat.result.profile.compute_scale == pytest.approx(cli["compute_scale"], rel=1e-9)
    assert chat.result.profile.runs[0].predicted_before == pytest.approx(cli["runs"][0]["predicted_before"], rel=1e-9)
    assert "global batch 16 = local batch 2 x data-parallel degree 8" in chat.result.log_read
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8",
                         "--micro-batch", "2", "--from-log", log)
    assert code == 0 and "derived    global batch 16 = local batch 2 x data-parallel degree 8" in out, err


def test_without_the_local_batch_no_global_batch_is_derived_anywhere(client, capsys):
    # The derivation needs the local batch; without it each surface keeps the 1,024 default (and the CLI says how
    # to derive it).
    log = LOGS / "torchtitan.log"
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8", "--from-log", log)
    assert code == 0, err
    assert "global_batch=1024" in out and "pass --micro-batch (its local_batch_size) to derive it" in out
    rest = client.post("/api/calibrate", json={"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8,
                                               "log": log.read_text()}).json()
    assert rest["runs"][0]["global_batch"] == 1024
