"""`profile: measured` on a turn: its truth is computed with the profile the earlier measured turn implies."""

import pytest

from shardwise.engine.errors import ShardwiseInputError
from shardwise.evals.case import Case, Scenario
from shardwise.evals.loader import load_cases
from shardwise.evals.truth import compute
from shardwise.evals.truth_profile import profile_for

# One node of 8 H100 (no traffic between nodes, so the one-run fit moves the compute scale only).
SCENARIO = {"model": "qwen2.5-14b", "gpu": "h100", "gpus": 8, "seq_len": 4096, "global_batch": 128}
PLAN = {"tp": 4, "zero": 1, "micro_batch": 1}
MEASURED_TOKENS = 3850.0  # the user's figure, tokens/s per GPU


def _case(second_turn: dict, first_turn: dict | None = None) -> Case:
    first = first_turn or {"user": "measured 3850 tok/s/gpu, calibrate", "truth": "calibrate", "plan": PLAN,
                           "measured": {"tokens_per_s_per_gpu": MEASURED_TOKENS}}
    return Case.model_validate({"id": "t", "family": "multi_turn", "scenario": SCENARIO,
                                "turns": [first, {"user": "with our profile?", **second_turn}]})


def test_the_calibrated_prediction_of_the_measured_plan_is_the_measurement():
    """Hand check: a profile fitted to one run inside one node scales compute until the prediction for
    that run equals what was measured (docs/performance.md, "Your own cluster": "predicted 1,093 before
    -> 850 after (error +28.7% -> +0.0%)"), as long as the scale stays inside its bounds (0.5-1.25;
    here about 3,850 / 4,300 = 0.9). So the range truth of the same plan with the profile evaluates to
    3,850 tok/s/GPU, and its step time to 128 x 4,096 tokens / 3,850 / 8 GPUs = 17.02 s."""
    case = _case({"truth": "range", "plan": PLAN, "profile": "measured"})
    profile = profile_for(case, 1)
    truth = compute("range", case.scenarios()[1], PLAN, profile=profile)
    assert truth.error is None
    assert truth.evaluation.throughput.tokens_per_s_per_gpu == pytest.approx(MEASURED_TOKENS, rel=0.005)
    assert truth.evaluation.time.step_s == pytest.approx(128 * 4096 / MEASURED_TOKENS / 8, rel=0.005)
    low, high = truth.evaluation.throughput.tokens_per_s_per_gpu_range
    assert low < MEASURED_TOKENS < high
    # and it is not the uncalibrated figure (which is ~10 % higher for this run)
    plain = compute("range", case.scenarios()[1], PLAN)
    assert plain.evaluation.throughput.tokens_per_s_per_gpu > 1.05 * MEASURED_TOKENS


def test_no_profile_field_means_no_profile():
    case = _case({"truth": "range", "plan": PLAN})
    assert profile_for(case, 1) is None


def test_a_profile_from_another_gpu_leaves_the_pick_unchanged():
    """docs/performance.md: the compute scale is for the measured GPU, precision and framework only ("an
    H100 profile says nothing about an H200's kernels"), so on H200 the calibrated pick is the plain one."""
    case = _case({"change": {"gpu": "h200"}, "profile": "measured", "expect": {"plan": "auto"}})
    h200 = case.scenarios()[1]
    with_profile = compute("recommend", h200, profile=profile_for(case, 1))
    without = compute("recommend", h200)
    assert with_profile.plan == without.plan
    assert with_profile.evaluation.throughput.tokens_per_s_per_gpu == pytest.approx(
        without.evaluation.throughput.tokens_per_s_per_gpu)


def test_a_profile_turn_needs_an_earlier_measured_turn():
    with pytest.raises(ValueError, match="profile: measured"):
        _case({"profile": "measured"}, first_turn={"user": "plan?"})


def test_a_calibrate_turn_does_not_take_a_profile():
    with pytest.raises(ValueError, match="shipped calibration"):
        _case({"truth": "calibrate", "plan": PLAN, "measured": {"step_s": 20.0}, "profile": "measured"})


def test_a_measurement_the_fit_refuses_is_an_error_not_a_crash():
    """MFU above 100 % is refused by the fit (docs/performance.md): 1,000,000 tok/s/GPU for a 14B."""
    from shardwise.evals.runner import _truth
    from shardwise.evals.graders import TurnContext

    case = _case({"truth": "recommend", "profile": "measured"},
                 first_turn={"user": "1M tok/s/gpu", "truth": "calibrate", "plan": PLAN,
                             "measured": {"tokens_per_s_per_gpu": 1_000_000}})
    with pytest.raises(ShardwiseInputError):
        profile_for(case, 1)
    ctx = TurnContext(case=case, index=1, scenario=case.scenarios()[1], reply=None)
    assert "profile" in _truth(ctx).error


def test_the_case_files_use_it():  # that each such truth computes: tests/evals/test_cases.py
    assert any(t.profile for c in load_cases() for t in c.turns), "no case uses profile: measured"
