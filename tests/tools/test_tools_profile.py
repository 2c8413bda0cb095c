"""A session's calibration profile reaches the engine through the dispatcher, for one tool call only,
and the tool results carry the 80 % intervals the answer quotes."""

import pytest

from shardwise.engine.assumptions.error_bands import THROUGHPUT_BAND_METHOD
from shardwise.engine.calibration.band_methods import band_runs
from shardwise.engine.calibration.profile import CalibrationProfile
from shardwise.tools.calibration import active_profile
from shardwise.tools.dispatch import dispatch

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 8192, "global_batch": 64}
PROFILE = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)


def evaluate(profile=None):
    out = dispatch("evaluate_plan", {"scenario": SCENARIO, "plan": {"tp": 2}}, profile=profile)
    assert out.ok, out.errors
    return out.result.plan


def test_profile_slows_the_prediction_and_is_named():
    plain, calibrated = evaluate(), evaluate(PROFILE)
    assert calibrated.tokens_per_s_per_gpu < plain.tokens_per_s_per_gpu
    assert plain.calibration is None and calibrated.calibration.startswith("calibrated: compute ×0.800")
    assert active_profile() is None  # reset after the call


def test_figures_carry_intervals_around_the_prediction():
    p = evaluate()
    lo, hi = p.tokens_per_s_per_gpu_likely
    assert lo < p.tokens_per_s_per_gpu < hi
    slo, shi = p.step_ms_likely
    assert slo < p.step_ms < shi
    # tokens/s per GPU x step time = tokens per step per GPU, at both ends of the band (±1 for rounding)
    assert lo * shi / 1e3 == pytest.approx(p.tokens_per_s_per_gpu * p.step_ms / 1e3, rel=2e-3)
    assert p.likely_basis and band_runs(THROUGHPUT_BAND_METHOD) in p.likely_basis  # what the shipped band counts


def test_calibrate_tool_takes_throughput_or_step_time_alike():
    # 64 sequences x 8192 tokens per step on 8 GPUs: 7,000 tokens/s/GPU <=> 524,288 / (7,000 x 8) = 9.362 s
    base = {"scenario": SCENARIO, "plan": {"tp": 2}}
    a = dispatch("calibrate_to_measurement", {**base, "measured_tokens_per_s_per_gpu": 7000, "measured_step_s": None})
    b = dispatch("calibrate_to_measurement", {**base, "measured_tokens_per_s_per_gpu": None,
                                              "measured_step_s": 64 * 8192 / (7000 * 8)})
    assert a.ok and b.ok, (a.errors, b.errors)
    assert a.result.compute_scale == b.result.compute_scale
    assert "--measured-step-s" in b.result.command and "--measured-tokens-per-s-per-gpu 7000" in a.result.command
    neither = dispatch("calibrate_to_measurement", {**base, "measured_tokens_per_s_per_gpu": None, "measured_step_s": None})
    assert not neither.ok and "exactly one" in neither.errors[0]
