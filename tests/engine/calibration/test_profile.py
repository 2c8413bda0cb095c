"""CalibrationProfile: the fit recovers a planted scale, respects its bounds, learns nothing about
the network from a one-node run, and applies only to the GPU/precision/framework it was measured on."""

import math

import pytest
from pydantic import ValidationError

from shardwise.engine.assumptions import calibrated
from shardwise.engine.assumptions.calibration_bounds import COMPUTE_SCALE_BOUNDS
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.calibration.fit_profile import Measurement, fit_profile, predicted_tokens_per_gpu
from shardwise.engine.calibration.profile import CalibrationProfile, profile_assumptions, scaled_assumptions
from shardwise.engine.evaluate import evaluate
from shardwise.engine.inputs import build_cluster, resolve_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

MODEL = resolve_model("llama-3.1-8b", None)
SETUP = TrainingSetup(seq_len=8192, global_batch=64)
ONE_NODE = build_cluster("h100", 8, None, None)
FOUR_NODES = build_cluster("h100", 32, None, None)


def run_at(cluster, tokens, strategy=Strategy(tp=2, pp=1)):
    return Measurement(MODEL, cluster, SETUP, strategy, tokens)


def test_scaling_multiplies_the_named_efficiencies():
    # Hopper BF16 GEMM efficiency from calibrated.py, × 0.8; kernel fixed cost ÷ 0.8.
    a = scaled_assumptions(DEFAULT_ASSUMPTIONS, ONE_NODE, 0.8, 1.0)
    assert a.gemm_efficiency["hopper"] == pytest.approx(calibrated.GEMM_EFFICIENCY["hopper"] * 0.8)
    assert a.attention_efficiency["hopper"] == pytest.approx(calibrated.ATTENTION_EFFICIENCY["hopper"] * 0.8)
    assert a.kernel_fixed_s == pytest.approx(calibrated.KERNEL_FIXED_S / 0.8)
    b = scaled_assumptions(DEFAULT_ASSUMPTIONS, FOUR_NODES, 1.0, 0.5)
    assert b.bandwidth_fraction["infiniband"] == pytest.approx(calibrated.INFINIBAND_BANDWIDTH_FRACTION * 0.5)
    assert b.bandwidth_fraction["nvlink"] == DEFAULT_ASSUMPTIONS.bandwidth_fraction["nvlink"]


def test_one_node_run_fits_compute_only_and_reproduces_the_measurement():
    base = predicted_tokens_per_gpu(run_at(ONE_NODE, 1.0))
    measured = 0.8 * base  # a cluster 20 % slower than the model
    p = fit_profile([run_at(ONE_NODE, measured)])
    assert p.network is None and p.comm_scale == 1.0
    assert p.runs[0].predicted_after == pytest.approx(measured, rel=1e-3)
    assert 0.7 < p.compute_scale < 0.85  # compute is most but not all of the step (fixed costs, optimizer)


def test_planted_scales_are_recovered_from_two_runs():
    # Two multi-node runs with different communication shares identify both scales: plant
    # (0.9, 0.6) through the assumptions, then fit from the "measured" throughputs alone.
    # CP across nodes exposes ring traffic (CP=16: ~19 % of the step at 0.6x bandwidth), TP=8 inside
    # a node with DP across nodes hides almost all of it: two different sensitivities.
    plans = [Strategy(tp=2, cp=16), Strategy(tp=8, pp=1)]
    runs = [run_at(FOUR_NODES, predicted_tokens_per_gpu(run_at(FOUR_NODES, 1.0, s), 0.9, 0.6), s) for s in plans]
    p = fit_profile(runs, with_memory=False)
    assert p.network == FOUR_NODES.network.id
    assert p.compute_scale == pytest.approx(0.9, rel=0.03)
    assert p.comm_scale == pytest.approx(0.6, rel=0.1)


def test_absurd_measurement_is_clipped_to_the_bound():
    base = predicted_tokens_per_gpu(run_at(ONE_NODE, 1.0))
    p = fit_profile([run_at(ONE_NODE, base / 10)])  # 10x slower: a warm-up step, not a cluster
    assert p.compute_scale == pytest.approx(COMPUTE_SCALE_BOUNDS[0])
    assert p.at_bound == ["compute_scale"]


def test_profile_applies_only_where_it_was_measured():
    p = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)
    h200 = build_cluster("h200", 8, None, None)
    assert profile_assumptions(p, h200, SETUP) is DEFAULT_ASSUMPTIONS
    assert profile_assumptions(p, ONE_NODE, SETUP.model_copy(update={"precision": "fp8"})) is DEFAULT_ASSUMPTIONS
    plain = evaluate(MODEL, h200, SETUP, Strategy(tp=2))
    other = evaluate(MODEL, h200, SETUP, Strategy(tp=2), profile=p)
    assert other.throughput.tokens_per_s == plain.throughput.tokens_per_s
    assert "not applied" in other.calibration
    mine = evaluate(MODEL, ONE_NODE, SETUP, Strategy(tp=2), profile=p)
    assert mine.throughput.tokens_per_s < evaluate(MODEL, ONE_NODE, SETUP, Strategy(tp=2)).throughput.tokens_per_s


@pytest.mark.parametrize("bad", [{"compute_scale": 3.0}, {"comm_scale": 0.01}, {"version": 9}, {"extra": 1}])
def test_out_of_bounds_or_unknown_profiles_are_refused(bad):
    with pytest.raises(ValidationError):
        CalibrationProfile(**{"gpu": "h100-sxm", "precision": "bf16", "framework": "megatron", **bad})


def test_profile_round_trips_through_json():
    p = fit_profile([run_at(ONE_NODE, 3000.0)], with_memory=False)
    assert CalibrationProfile.model_validate_json(p.model_dump_json()) == p
    assert math.isfinite(p.compute_scale)
