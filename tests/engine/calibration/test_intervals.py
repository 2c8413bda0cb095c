"""80 % intervals: the band comes from the generated table of the scenario's regime; step time is
the same band inverted; a profile swaps in the calibrated band only for dense models; inputs
outside the validated range get it widened."""

import math

import pytest

from shardwise.engine.assumptions import error_bands as eb
from shardwise.engine.calibration.band_methods import band_runs
from shardwise.engine.calibration.intervals import OUTSIDE_RANGE_WIDENING, memory_band, throughput_band
from shardwise.engine.calibration.profile import CalibrationProfile
from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster, resolve_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

H100 = build_cluster("h100", 8, None, None)
DENSE = resolve_model("llama-3.1-8b", None)
SETUP = TrainingSetup(seq_len=8192, global_batch=64)


def test_megatron_dense_on_hopper_uses_its_own_regime_band():
    # 'megatron|hopper|dense' has >= MIN_RUNS runs (19 out-of-fold residuals), so the most specific level applies.
    lo, hi, n = eb.THROUGHPUT_BANDS["megatron|hopper|dense"]
    band = throughput_band(DENSE, H100, SETUP)
    assert (band.low, band.high) == (lo, hi) and f"{n} {band_runs(eb.THROUGHPUT_BAND_METHOD)} (megatron|hopper|dense)" in band.basis


def test_a_regime_without_its_own_entry_falls_back_to_the_next_level():
    # The generated table has no 'megatron|ampere|moe' entry (no MoE runs on Ampere reach MIN_RUNS), so an MoE model
    # on A100 takes the next level, 'megatron|moe'.
    assert "megatron|ampere|moe" not in eb.THROUGHPUT_BANDS
    lo, hi, n = eb.THROUGHPUT_BANDS["megatron|moe"]
    band = throughput_band(resolve_model("mixtral-8x7b", None), build_cluster("a100", 8, None, None), SETUP)
    assert (band.low, band.high) == (lo, hi) and f"{n} {band_runs(eb.THROUGHPUT_BAND_METHOD)} (megatron|moe)" in band.basis


def test_evaluation_ranges_are_the_band_around_the_prediction():
    e = evaluate(DENSE, H100, SETUP, Strategy(tp=2))
    lo, hi, _ = eb.THROUGHPUT_BANDS["megatron|hopper|dense"]
    tps, step = e.throughput.tokens_per_s_per_gpu, e.time.step_s
    assert e.throughput.tokens_per_s_per_gpu_range == pytest.approx([tps * math.exp(lo), tps * math.exp(hi)])
    # measured step = predicted step x predicted/measured throughput
    assert e.time.step_s_range == pytest.approx([step * math.exp(-hi), step * math.exp(-lo)])
    mlo, mhi, _ = eb.MEMORY_BANDS["pytorch"]  # Megatron borrows the torchtitan memory band
    assert e.memory.total_gib_range == pytest.approx([e.memory.total_gib * math.exp(mlo), e.memory.total_gib * math.exp(mhi)])


def test_profile_narrows_only_where_the_transfer_check_has_runs_of_that_stack():
    fsdp = SETUP.model_copy(update={"framework": "fsdp"})
    fsdp_profile = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="fsdp", compute_scale=0.9)
    band = throughput_band(DENSE, H100, fsdp, fsdp_profile)
    assert (band.low, band.high) == eb.CALIBRATED_BANDS["calibrated|pytorch|dense"][:2]
    # Megatron (a few Bridge runs in the transfer check) and MoE keep their regime band.
    megatron_profile = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.9)
    for model in (DENSE, resolve_model("mixtral-8x7b", None)):
        with_profile, without = throughput_band(model, H100, SETUP, megatron_profile), throughput_band(model, H100, SETUP)
        assert (with_profile.low, with_profile.high) == (without.low, without.high)
        assert "does not narrow" in with_profile.basis


def test_lora_is_outside_the_validated_range_and_widened():
    lora = SETUP.model_copy(update={"mode": "lora"})
    lo, hi, _ = eb.THROUGHPUT_BANDS["megatron|hopper|dense"]
    band = throughput_band(DENSE, H100, lora)
    assert (band.low, band.high) == pytest.approx((lo * OUTSIDE_RANGE_WIDENING, hi * OUTSIDE_RANGE_WIDENING))
    assert "outside the validated range" in band.basis


def test_post_training_is_outside_the_validated_range_and_widened():
    # No measured DPO/GRPO/PPO run calibrates the extra passes (post_training_uncalibrated warning).
    from shardwise.engine.post_training.spec import PostTraining

    grpo = SETUP.model_copy(update={"post_training": PostTraining(algorithm="grpo")})
    lo, hi, _ = eb.THROUGHPUT_BANDS["megatron|hopper|dense"]
    band = throughput_band(DENSE, H100, grpo)
    assert (band.low, band.high) == pytest.approx((lo * OUTSIDE_RANGE_WIDENING, hi * OUTSIDE_RANGE_WIDENING))
    assert "outside the validated range" in band.basis


def test_stored_coverage_is_counted_on_held_out_runs():
    # Each coverage entry is (held-out runs, inside): inside can never exceed the runs. Each has a
    # 95 % CI (a share between 0 and 1), and the tables carry one for the pooled figure.
    from shardwise.engine.calibration.band_statistics import TOTAL

    for table, ci in ((eb.THROUGHPUT_COVERAGE, eb.THROUGHPUT_COVERAGE_CI),
                      (eb.HOLDOUT_FOLD_COVERAGE, eb.HOLDOUT_FOLD_COVERAGE_CI),
                      (eb.CALIBRATED_COVERAGE, eb.CALIBRATED_COVERAGE_CI),
                      (eb.MEMORY_COVERAGE, eb.MEMORY_COVERAGE_CI),
                      (eb.OLDER_RELEASE_COVERAGE, eb.OLDER_RELEASE_COVERAGE_CI),
                      (eb.OLDER_RELEASE_CALIBRATED_COVERAGE, eb.OLDER_RELEASE_CALIBRATED_COVERAGE_CI)):
        for runs, inside in table.values():
            assert 0 <= inside <= runs
        assert set(ci) == set(table) | {TOTAL}
        assert all(0.0 <= lo <= hi <= 1.0 for lo, hi in ci.values())
    assert memory_band(SETUP).basis.startswith("80 % band")
