"""torchtitan's start-up line gives the batch the run used, so it is read rather than derived (local batch x
data-parallel degree, tools/log_run.derived_global_batch): with gradient accumulation the derivation is wrong.
Formats: pytorch/torchtitan torchtitan/trainer.py at 717e9358f ("local batch size L, global batch size G,
gradient accumulation steps A, sequence length S") and since 73aed7f6c ("N tokens per DP rank, T tokens per train
step, gradient accumulation steps A, maximum context length S"); the fixtures name them. Expected values are read
off the fixtures by hand."""

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from shardwise.engine.training_logs import read_log
from shardwise.tools import dispatch
from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from support.cli_runner import run

LOGS = Path(__file__).parents[2] / "fixtures" / "logs"


def test_the_sequence_form_gives_global_batch_sequence_length_and_local_batch():
    # "local batch size 2, global batch size 64, gradient accumulation steps 2, sequence length 8192" on a
    # dp_shard=16 mesh: 2 x 16 = 32 sequences per micro-step, x 2 accumulation steps = 64 (the line's own sum).
    r = read_log((LOGS / "torchtitan_init_batch.log").read_text())
    assert (r.seq_len, r.global_batch, r.plan["micro_batch"], r.num_gpus) == (8192, 64, 2, 16)
    assert r.tokens_per_s_per_gpu == pytest.approx(5955)  # median of 5,940 / 5,962 / 5,955 (step 1 dropped)


def test_the_token_form_gives_them_in_sequences():
    # "16384 tokens per DP rank, 262144 tokens per train step, ..., maximum context length 8192":
    # 262,144 / 8,192 = 32 sequences per step; 16,384 / 8,192 = 2 per DP rank (pp = 1, so that is the micro-batch).
    # Check: DP = dp_shard 4 (tp 2 on 8 GPUs), 2 x 4 x 4 accumulation steps = 32.
    r = read_log((LOGS / "torchtitan_init_tokens.log").read_text())
    assert (r.seq_len, r.global_batch, r.plan["micro_batch"], r.plan["tp"], r.num_gpus) == (8192, 32, 2, 2, 8)


def test_a_printed_global_batch_is_not_derived_on_any_surface(capsys):
    # Deriving would give 2 x 16 = 32 (ignoring the 2 accumulation steps); the log prints 64.
    log = LOGS / "torchtitan_init_batch.log"
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "16", "--from-log", log, "--json")
    assert code == 0, err
    cli = json.loads(out)
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()), raise_server_exceptions=False)
    rest = client.post("/api/calibrate", json={"model": "llama-3.1-8b", "gpu": "h100", "gpus": 16, "log": log.read_text()}).json()
    chat = dispatch("calibrate_to_measurement", {
        "scenario": {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 16}, "plan": {},
        "measured_tokens_per_s_per_gpu": None, "measured_step_s": None, "measured_mfu": None,
        "log": log.read_text()}, result_id="R1")
    assert chat.ok, chat.errors
    run0 = cli["runs"][0]
    assert run0["global_batch"] == rest["runs"][0]["global_batch"] == chat.result.scenario.global_batch == 64
    assert run0["seq_len"] == 8192 and run0["gpus"] == 16
    assert rest == cli


def test_the_cli_takes_the_gpu_count_from_the_log_as_the_chat_and_rest_do(capsys):
    # The mesh line "pp=1, dp_replicate=1, dp_shard=16, cp=1, tp=1" is 16 GPUs; --gpus is not needed.
    log = LOGS / "torchtitan_init_batch.log"
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100", "--from-log", log, "--json")
    assert code == 0, err
    assert json.loads(out)["runs"][0]["gpus"] == 16
    # A log that does not print it (Hugging Face Trainer metrics) still needs --gpus: one line, exit 2.
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-8b", "--gpu", "h100",
                         "--from-log", LOGS / "hf_trainer.log")
    assert code == 2 and "does not say how many GPUs ran: pass --gpus" in err and "Traceback" not in err
