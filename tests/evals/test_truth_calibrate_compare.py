"""`truth: calibrate_compare`: a measured run and "A or B?" in one message (evals/truth_calibrate_compare.py)."""

import pydantic
import pytest

from shardwise.evals.case import Case, Scenario
from shardwise.evals.truth import MEMORY_WORDS, compute

# One node of 8 H100, as tests/evals/test_truth_profile.py: no traffic between nodes, so the one-run fit
# moves the compute scale only, and the calibrated prediction of the measured plan is the measurement.
ONE_NODE = Scenario(model="qwen2.5-14b", gpu="h100", gpus=8, seq_len=4096, global_batch=128)
MEASURED_PLAN = {"tp": 4, "zero": 1, "micro_batch": 1}
MEASURED_TOKENS = 3850.0  # the user's figure, tokens/s per GPU


def _measured(tokens=MEASURED_TOKENS):
    from shardwise.evals.case import Measured

    return Measured(tokens_per_s_per_gpu=tokens)


def test_the_comparison_is_priced_with_the_profile_the_measurement_implies():
    """Hand check: a one-node run's fit scales compute until the measured plan's prediction equals the
    measurement (docs/performance.md, "Your own cluster": "predicted 1,093 before -> 850 after (error +28.7%
    -> +0.0%)"), the scale staying inside its bounds 0.5-1.25 (here about 3,850 / 4,300 = 0.9). Plan A is the
    measured plan, so A as compared is 3,850 tok/s/GPU, and its step 128 x 4,096 / 3,850 / 8 = 17.02 s."""
    plans = [MEASURED_PLAN, {"tp": 2, "zero": 1, "micro_batch": 1}]
    truth = compute("calibrate_compare", ONE_NODE, MEASURED_PLAN, plans, _measured())
    assert truth.error is None
    a = truth.evaluations[0]
    assert a.throughput.tokens_per_s_per_gpu == pytest.approx(MEASURED_TOKENS, rel=0.005)
    assert a.time.step_s == pytest.approx(128 * 4096 / MEASURED_TOKENS / 8, rel=0.005)
    plain = compute("compare", ONE_NODE, plans=plans)  # uncalibrated, A is ~10 % faster than measured
    assert plain.evaluations[0].throughput.tokens_per_s_per_gpu > 1.05 * MEASURED_TOKENS


def test_the_calibration_half_is_what_a_calibrate_turn_requires():
    """The figures to state are exactly those of `truth: calibrate` on the same run (the prediction before
    calibrating and the scale or gap): the combined kind adds the comparison, it does not change them."""
    plans = [MEASURED_PLAN, {"tp": 2, "zero": 1, "micro_batch": 1}]
    combined = compute("calibrate_compare", ONE_NODE, MEASURED_PLAN, plans, _measured())
    alone = compute("calibrate", ONE_NODE, MEASURED_PLAN, measured=_measured())
    assert combined.stated == alone.stated and combined.stated


def test_memory_decides_when_one_side_does_not_fit_whatever_the_profile():
    """"zero1 for both: cp4 or tp4" for Llama-3.1-8B (8.03e9 parameters, 32 layers, hidden 4,096) at 32k on 16
    H100 (80 GB). A profile scales speed only (a peak is compared, not fitted), so memory decides as without it.
    By hand, ZeRO-1 with DP = 16/4 = 4 on both sides:
      CP=4 (TP=1): states 8.03e9 x (2 B bf16 weights + 4 B fp32 gradients + 12 B Adam / 4) = 72 GB, and
        activations of 32,768/4 = 8,192 tokens, selective recompute ~34 B per token, hidden unit and layer
        (Korthikanti et al. 2022, sbh·34): 32 x 8,192 x 4,096 x 34 = 36.5 GB -> ~109 GB: does not fit in 80 GB;
      TP=4 (with SP): states 72 GB / 4 = 18 GB, activations 32,768 tokens / 4 x 32 x 4,096 x 34 = 36.5 GB
        -> ~55 GB: fits.
    So B wins, on memory."""
    s = Scenario(model="llama-3.1-8b", gpu="h100", gpus=16, seq_len="32k", global_batch=64)
    plans = [{"tp": 1, "cp": 4, "zero": 1, "micro_batch": 1}, {"tp": 4, "cp": 1, "zero": 1, "micro_batch": 1}]
    measured_plan = {"tp": 4, "zero": 1, "micro_batch": 1}
    truth = compute("calibrate_compare", s, measured_plan, plans, _measured(5480.0))
    assert truth.error is None
    assert truth.winner == 1 and truth.deciding_term == "memory"
    assert truth.keywords == (tuple(MEMORY_WORDS),)


def _case(earlier=(), **turn):
    base = {"user": "we measured 3850 tok/s/gpu with tp4, would tp2 be faster?", "truth": "calibrate_compare",
            "plan": MEASURED_PLAN, "plans": [MEASURED_PLAN, {"tp": 2}],
            "measured": {"tokens_per_s_per_gpu": MEASURED_TOKENS}}
    return Case.model_validate({"id": "t", "family": "compare", "scenario": ONE_NODE.model_dump(exclude_none=True),
                                "turns": [*earlier, {**base, **turn}]})


def test_the_case_format_asks_for_the_run_and_both_plans():
    assert _case().turns[0].plans
    for missing in ("plans", "plan", "measured"):
        with pytest.raises(pydantic.ValidationError):
            _case(**{missing: None})


def test_it_starts_from_the_shipped_calibration():
    """Even after an earlier measured turn: the turn's own measurement is fitted from the shipped calibration."""
    earlier = {"user": "measured 3850 tok/s/gpu", "truth": "calibrate", "plan": MEASURED_PLAN,
               "measured": {"tokens_per_s_per_gpu": MEASURED_TOKENS}}
    with pytest.raises(pydantic.ValidationError, match="starts from the shipped calibration"):
        _case([earlier], profile="measured")
