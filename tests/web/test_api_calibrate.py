"""POST /api/calibrate: `shardwise calibrate --json` over HTTP (the app's documented contract: "REST bodies
use the CLI's flag names in snake_case; responses are the objects `shardwise … --json` prints").

Expected values: the CLI's own answer for the same run (a separate code path: argparse, --from-log's file
reading, its own contradiction checks), hand arithmetic where a figure is converted, and the error contract
in web/errors.py (400 uninterpretable, 413 too large, 415 not JSON, 422 a field out of bounds)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from support.cli_runner import run

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"
# The CLI calibration tests' run: Llama-3.1-70B on 64 H100s, 8k x 512, TP4 PP4, 850 tokens/s/GPU measured.
RUN = {"model": "llama-3.1-70b", "gpu": "h100", "gpus": 64, "seq_len": 8192, "global_batch": 512, "tp": 4, "pp": 4}
FLAGS = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64", "--seq-len", "8192", "--global-batch", "512",
         "--tp", "4", "--pp", "4"]


@pytest.fixture(scope="module")
def client():
    return TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000), chat_service=object()),
                      raise_server_exceptions=False)


def cli_json(capsys, *argv) -> dict:
    code, out, err = run(capsys, "calibrate", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def test_a_measured_figure_gives_the_profile_the_cli_prints(client, capsys):
    r = client.post("/api/calibrate", json={**RUN, "measured_tokens_per_s_per_gpu": 850})
    assert r.status_code == 200, r.text
    assert r.json() == cli_json(capsys, *FLAGS, "--measured-tokens-per-s-per-gpu", "850")


def test_a_step_time_is_the_same_measurement(client):
    # 512 sequences x 8,192 tokens / 64 GPUs / 850 tokens/s/GPU = 77.10 s per step (hand arithmetic)
    step = 512 * 8192 / 64 / 850
    a = client.post("/api/calibrate", json={**RUN, "measured_tokens_per_s_per_gpu": 850}).json()
    b = client.post("/api/calibrate", json={**RUN, "measured_step_s": step}).json()
    assert b["compute_scale"] == pytest.approx(a["compute_scale"], rel=1e-9)


def test_the_profile_it_returns_reproduces_the_run_on_evaluate(client):
    # fit_profile's contract: one run, not at a bound, is reproduced (predicted_after = measured).
    profile = client.post("/api/calibrate", json={**RUN, "measured_tokens_per_s_per_gpu": 850}).json()
    assert profile["at_bound"] == []
    r = client.post("/api/evaluate", json={**RUN, "profile": profile})
    assert r.status_code == 200, r.text
    t = r.json()["throughput"]
    assert t["tokens_per_s_per_gpu"] == pytest.approx(850, rel=1e-3)
    lo, hi = t["tokens_per_s_per_gpu_range"]
    assert lo < 850 < hi


# What each log says (see the files): Megatron 64 GPUs with its arguments; torchtitan 8 GPUs, FSDP; DeepSpeed
# 16 GPUs, samples/s; HF Trainer samples/s. The 8B model for the last three (their rates are an 8B's).
LOG_RUNS = [("megatron_lm.log", {"model": "llama-3.1-70b", "gpus": 64}, []),
            ("torchtitan.log", {"model": "llama-3.1-8b", "gpus": 8}, []),
            ("deepspeed.log", {"model": "llama-3.1-8b", "gpus": 16, "seq_len": 4096}, ["--seq-len", "4096"]),
            ("hf_trainer.log", {"model": "llama-3.1-8b", "gpus": 64, "seq_len": 4096}, ["--seq-len", "4096"]),
            ("megatron_lm_torchrun.log", {"model": "llama-3.1-70b", "gpus": 64}, []),
            ("torchtitan_2d_mesh.log", {"model": "llama-3.1-8b", "gpus": 8}, [])]


@pytest.mark.parametrize("log, body, extra", LOG_RUNS, ids=[x[0] for x in LOG_RUNS])
def test_a_pasted_log_gives_the_profile_cli_from_log_gives(client, capsys, log, body, extra):
    r = client.post("/api/calibrate", json={**body, "gpu": "h100", "log": (LOGS / log).read_text()})
    assert r.status_code == 200, r.text
    want = cli_json(capsys, "--model", body["model"], "--gpu", "h100", "--gpus", str(body["gpus"]), *extra,
                    "--from-log", LOGS / log)
    assert r.json() == want


@pytest.mark.parametrize("change, needle", [
    ({"seq_len": 4096}, "log says seq_len=8192 but the request has seq_len=4096"),  # arguments: seq_length 8192
    ({"tp": 8}, "log says tp=4 but the request has tp=8"),                          # tensor_model_parallel_size 4
    ({"sequence_parallel": False}, "sequence_parallel=True"),                      # sequence_parallel True
    ({"gpus": 32}, "log says gpus=64"),                                            # world_size 64
    ({"measured_peak_gib": 10}, "peak memory 60.00 GiB"),                          # max allocated 61440 MB = 60 GiB
])
def test_a_field_contradicting_the_log_is_refused(client, change, needle):
    r = client.post("/api/calibrate", json={"model": "llama-3.1-70b", "gpu": "h100", "gpus": 64,
                                            "log": (LOGS / "megatron_lm.log").read_text(), **change})
    assert r.status_code == 400 and needle in r.json()["message"], r.text


def test_an_unreadable_log_names_what_was_looked_for(client):
    r = client.post("/api/calibrate", json={**RUN, "log": (LOGS / "unreadable.log").read_text()})
    assert r.status_code == 400
    message = r.json()["message"]
    for marker in ("elapsed time per iteration (ms):", "tps:", "RunningAvgSamplesPerSec=", "train_samples_per_second"):
        assert marker in message


@pytest.mark.parametrize("body, status, needle", [
    ({}, 400, "give exactly one of"),
    ({"measured_tokens_per_s_per_gpu": 850, "measured_step_s": 77}, 400, "got 2"),
    ({"measured_tokens_per_s_per_gpu": 0}, 422, "measured_tokens_per_s_per_gpu: Input should be greater than 0"),
    ({"measured_step_s": -1}, 422, "measured_step_s: Input should be greater than 0"),
    ({"log": ""}, 422, "log:"),
    # MFU is a fraction of the dense peak (engine/mfu_unit.py): 1.5 is 150 %, above calibration_bounds.MAX_MEASURED_MFU
    # (it used to be read as 1.5 %); 150 is refused too, with the fraction for 150 %
    ({"measured_mfu": 1.5}, 400, "measured_mfu 1.5 is above 1: the MFU is a fraction"),
    ({"measured_mfu": 150}, 400, "for 150 % give 1.5"),
    # 1e12 tokens/s/GPU x 6 x 70e9 FLOPs/token is ~4e23 FLOP/s, against the H100's 989e12 bf16 peak
    ({"measured_tokens_per_s_per_gpu": 1e12}, 400, "more than the GPU can do"),
    ({"measured_tokens_per_s_per_gpu": 850, "measured_peak_gib": 100}, 400, "more than the h100-sxm's 80 GiB"),
    ({"measured_tokens_per_s_per_gpu": 850, "profile": {"gpu": "h100-sxm", "precision": "bf16", "framework": "megatron"}},
     400, "does not take one"),
])
def test_bad_measurements_get_one_precise_error(client, body, status, needle):
    r = client.post("/api/calibrate", json={**RUN, **body})
    assert r.status_code == status and needle in r.json()["message"], r.text


@pytest.mark.parametrize("body, settings", [
    ({"measured_tokens_per_s_per_gpu": 1e12}, "the settings describing the run (gpus, seq_len, global_batch)"),
    ({"measured_tokens_per_s_per_gpu": 850, "measured_peak_gib": 100}, "is gpu set to the GPU the run used?"),
])
def test_a_refused_run_names_the_request_fields_not_cli_flags(client, body, settings):
    # The fit's refusals said "is --gpu the GPU the run used?" here too; a REST client has no flags.
    r = client.post("/api/calibrate", json={**RUN, **body})
    assert r.status_code == 400 and settings in r.json()["message"] and "--" not in r.json()["message"], r.text


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_nan_and_infinity_are_no_measurement(client, value):
    body = json.dumps({**RUN, "measured_tokens_per_s_per_gpu": value})  # Python's json writes NaN / Infinity
    r = client.post("/api/calibrate", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422 and "finite number" in r.json()["message"]


def test_a_whole_log_over_the_body_limit_is_413_saying_what_to_send(client):
    r = client.post("/api/calibrate", json={**RUN, "log": "x" * (Settings().max_body_bytes + 1)})
    assert r.status_code == 413 and "printed arguments and throughput lines" in r.json()["message"]


@pytest.mark.parametrize("headers", [{"content-type": "text/plain"}, {}])
def test_a_body_not_sent_as_json_is_415(client, headers):
    # RFC 9110 §15.5.16: 415 Unsupported Media Type is the status for a content type the endpoint refuses.
    r = client.post("/api/calibrate", content=json.dumps(RUN), headers=headers)
    assert r.status_code == 415 and "Content-Type: application/json" in r.json()["message"]


def test_recommend_with_the_profile_carries_the_ranges_the_cli_prints(client, capsys, tmp_path):
    profile = client.post("/api/calibrate", json={**RUN, "measured_tokens_per_s_per_gpu": 850}).json()
    path = tmp_path / "p.json"
    path.write_text(json.dumps(profile))
    scenario = {k: RUN[k] for k in ("model", "gpu", "gpus", "seq_len", "global_batch")}
    r = client.post("/api/recommend", json={**scenario, "top_k": 2, "profile": profile})
    assert r.status_code == 200, r.text
    code, out, err = run(capsys, "recommend", *FLAGS[:10], "--top", "2", "--profile", path, "--json")
    assert code == 0, err
    cli = json.loads(out)
    for api_plan, cli_plan in zip(r.json()["plans"], cli["plans"], strict=True):
        for part, key in (("throughput", "tokens_per_s_per_gpu_range"), ("time", "step_s_range"),
                          ("memory", "total_gib_range")):
            lo, hi = api_plan[part][key]
            assert [lo, hi] == cli_plan[part][key] and lo < hi
        assert api_plan["calibration"] == cli_plan["calibration"] and api_plan["calibration"].startswith("calibrated")


def test_a_measured_peak_carries_the_analysis_the_cli_prints(client, capsys):
    # 30 GiB measured against a TP4 PP4 ZeRO-1 plan predicted far above it: the response held only the profile.
    body = {**RUN, "measured_tokens_per_s_per_gpu": 850, "measured_peak_gib": 30}
    r = client.post("/api/calibrate", json=body)
    assert r.status_code == 200, r.text
    api = r.json()["runs"][0]
    cli = cli_json(capsys, *FLAGS, "--measured-tokens-per-s-per-gpu", "850", "--measured-peak-gib", "30")["runs"][0]
    assert api["peak_explained"] is False and api["peak_alternatives"]
    assert {k: api[k] for k in ("predicted_peak_likely_gib", "peak_explained", "peak_alternatives")} == \
        {k: cli[k] for k in ("predicted_peak_likely_gib", "peak_explained", "peak_alternatives")}
