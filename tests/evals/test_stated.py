"""Figures an answer must state (evals/stated.py) and the truths that ask for them
(evals/truth_uncertainty.py): the ends of an 80 % interval, the prediction before calibrating."""

import pytest
from pydantic import ValidationError

from shardwise.evals.case import Case, Measured, Scenario
from shardwise.evals.stated import missing
from shardwise.evals.truth_uncertainty import calibrate_truth, measured_tokens_per_s_per_gpu, range_truth

# A hand-made requirement: throughput 80 % interval 1,110.4–1,281.6 tok/s/GPU, or step time 9.81–11.33 s.
THROUGHPUT = ((("throughput", 1110.4),), (("throughput", 1281.6),))
STEP = ((("time", 9.81),), (("time", 11.33),))
EITHER = (THROUGHPUT, STEP)


@pytest.mark.parametrize("answer", [
    "1,196 tok/s/GPU, likely 1,110–1,280",          # 1,110 is 1,110.4 rounded; 1,280 within 2 % of 1,281.6
    "80 % interval: 1.11k to 1.28k tokens/s per GPU",
    "step 10.5 s, likely between 9.8 and 11.3 s",   # the step-time option instead
    "likely 9,810–11,330 ms per step",               # ms: 9,810 ms = 9.81 s
])
def test_an_answer_stating_both_ends_passes(answer):
    assert missing(answer, EITHER) == []


@pytest.mark.parametrize("answer, gap", [
    ("likely 1,000–1,300 tok/s", "1,110"),          # 1,000 is 10 % below 1,110.4: not the engine's end
    ("at least 1,110 tok/s/GPU", "1,282"),          # one end only: the high end is not stated
    ("about ±7 % typically", "1,110"),              # a generic error bar is not this plan's interval
])
def test_an_answer_missing_an_end_fails_and_says_which(answer, gap):
    reasons = missing(answer, EITHER)
    assert reasons and gap in reasons[0]


def test_step_range_wants_the_step_time():
    assert missing("likely 1,110–1,280 tok/s/GPU", (STEP,)) != []
    assert missing("9.8 to 11.3 s", (STEP,)) == []


def test_calibration_requirement_groups():
    # before: 1,093 tok/s/GPU (or the 59.9 s step it implies); change: ×0.774, or +28.6 % / -22.3 %
    need = (((("throughput", 1093.26), ("time", 59.945)),
             (("scale", 0.7741), ("percent", 28.62), ("percent", -22.25))),)
    assert missing("we predicted 1,093 tok/s/GPU for that run; compute scale ×0.77", need) == []
    assert missing("our model said a 59.9 s step, you are 22 % slower", need) == []
    assert missing("compute scale ×0.77", need) != []          # what it predicted before is not said
    assert missing("we predicted 1,093 tok/s/GPU", need) != []  # nor what changes


SCENARIO = Scenario(model="llama-3-70b", gpu="h100", gpus=64, seq_len="8k", global_batch=512)
PLAN = {"tp": 4, "pp": 4, "zero": 1, "micro_batch": 1, "recompute": "full"}


def test_a_measured_step_time_in_tokens_per_gpu():
    # 512 sequences × 8,192 tokens = 4,194,304 tokens per step; / 80 s / 64 GPUs = 819.2 tok/s/GPU
    assert measured_tokens_per_s_per_gpu(SCENARIO, PLAN, Measured(step_s=80)) == pytest.approx(819.2)


def test_a_measured_mfu_scales_the_prediction():
    # MFU ∝ tokens/s for one model and plan: the engine's own MFU gives its own throughput, half of it half
    r = range_truth("range", SCENARIO, PLAN).evaluation.throughput
    assert measured_tokens_per_s_per_gpu(SCENARIO, PLAN, Measured(mfu=r.mfu)) == pytest.approx(r.tokens_per_s_per_gpu)
    assert measured_tokens_per_s_per_gpu(SCENARIO, PLAN, Measured(mfu=r.mfu / 2)) == pytest.approx(
        r.tokens_per_s_per_gpu / 2)


def test_calibrating_to_the_engine_own_prediction_changes_nothing():
    # measured = predicted: zero residual at scale 1, so the fit stays at 1 and the gap is 0 %
    tput = range_truth("range", SCENARIO, PLAN).evaluation.throughput.tokens_per_s_per_gpu
    (said_before, changed), = calibrate_truth(SCENARIO, PLAN, Measured(tokens_per_s_per_gpu=tput)).stated
    assert said_before[0] == ("throughput", pytest.approx(tput))
    # the time alternative is 4,194,304 tokens / prediction / 64 GPUs
    assert said_before[1] == ("time", pytest.approx(512 * 8192 / tput / 64))
    assert changed[0] == ("scale", pytest.approx(1.0, abs=1e-3))
    assert changed[1] == ("percent", pytest.approx(0.0, abs=0.1))


def test_range_truth_states_the_evaluation_own_interval():
    t = range_truth("range", SCENARIO, PLAN)
    throughput, step = t.stated
    assert [g[0][1] for g in throughput] == t.evaluation.throughput.tokens_per_s_per_gpu_range
    assert [g[0][1] for g in step] == t.evaluation.time.step_s_range
    assert range_truth("step_range", SCENARIO, PLAN).stated == (step,)


def test_a_plan_that_does_not_fit_has_no_interval():
    t = range_truth("range", Scenario(model="llama-3-70b", gpu="h100", gpus=8), {"tp": 1, "zero": 0, "micro_batch": 1})
    assert t.error and not t.stated


def test_case_format_needs_the_measurement_and_one_figure():
    base = {"id": "x", "family": "evaluate", "scenario": SCENARIO.model_dump(exclude_none=True), "plan": PLAN,
            "user": "we measured 800 tok/s/gpu", "truth": "calibrate"}
    with pytest.raises(ValidationError, match="measured"):
        Case.model_validate(base)
    with pytest.raises(ValidationError, match="exactly one"):
        Measured(step_s=80, mfu=0.4)
    case = Case.model_validate({**base, "measured": {"tokens_per_s_per_gpu": 800}})
    assert case.turns[0].measured.tokens_per_s_per_gpu == 800


def test_range_truth_carries_the_plan_it_evaluated():
    # {from: recommended} resolves to the engine's pick: the plan grader can grade "best plan + error bar"
    from shardwise.evals.truth import compute
    t = compute("range", SCENARIO, {"from": "recommended"})
    assert t.plan == compute("recommend", SCENARIO).plan


def test_a_percentage_is_a_gap_only_when_said_as_one():
    # the gap 10.49 % (hand-made); an unrelated memory share of 10.4 % is within rounding of it
    need = (((("percent", 10.49),),),)
    assert missing("- other (CUDA context, NCCL, fragmentation): 7.2 GiB (10.4%)", need) != []
    assert missing("your run is 10.5 % slower than predicted", need) == []
    assert missing("the model predicts 5,067 for that run (+10.5%)", need) == []
