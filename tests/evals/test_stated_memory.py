"""The peak-memory figures an answer must state (truth `memory_range`, and a measured peak in a
`calibrate` turn): evals/truth_uncertainty.py, checked by evals/stated.py."""

import pytest
from pydantic import ValidationError

from shardwise.evals.case import Case, Measured, Scenario
from shardwise.evals.stated import missing
from shardwise.evals.truth import compute

# A hand-made requirement: predicted peak 46.56 GiB, 80 % interval 38.06-54.30 GiB.
BAND = ((("memory", 38.06),), (("memory", 54.30),))
WITH_PEAK = ((("memory", 46.56),),) + BAND


@pytest.mark.parametrize("answer", [
    "peak ~46.6 GiB per GPU, likely 38.1–54.3 GiB",
    "80 % band on memory: 38 to 54 GiB",          # whole GiB: 38 is 38.06 rounded, 54 is 54.30 rounded
    "between 38.1 and 54.3 GB per GPU",            # GB written for GiB, as people do
])
def test_both_ends_of_the_memory_band_pass(answer):
    assert missing(answer, (BAND,)) == []


@pytest.mark.parametrize("answer, gap", [
    ("about 46.6 GiB per GPU", "38.06"),           # the point figure is not the band
    ("at most 54.3 GiB", "38.06"),                 # one end only
    ("±23 % on memory", "38.06"),                  # a generic error bar
    # the right digits with a throughput unit: the bare first end may be memory, "54.3 tok/s" is not
    ("likely 38.1–54.3 tok/s", "54.3"),
])
def test_a_missing_end_fails_and_says_which(answer, gap):
    reasons = missing(answer, (BAND,))
    assert reasons and gap in reasons[0]


def test_a_measured_peak_also_needs_the_prediction_it_is_set_against():
    assert missing("you measured 50 GiB; we predict 46.6 GiB (band 38.1–54.3 GiB), so it is inside",
                   (WITH_PEAK,)) == []
    assert missing("band 38.1–54.3 GiB, so 50 GiB is inside", (WITH_PEAK,)) != []


SCENARIO = Scenario(model="llama-3-70b", gpu="h100", gpus=64, seq_len="8k", global_batch=512)
PLAN = {"tp": 4, "pp": 4, "zero": 1, "micro_batch": 1, "recompute": "full"}


def test_memory_range_truth_is_the_evaluation_own_band():
    t = compute("memory_range", SCENARIO, PLAN)
    (low, high), = t.stated
    assert [low[0], high[0]] == [("memory", v) for v in t.evaluation.memory.total_gib_range]
    # the band is around the point prediction (low < total < high), as an 80 % interval must be
    assert low[0][1] < t.evaluation.memory.total_gib < high[0][1]


def test_a_measured_peak_adds_the_predicted_peak_to_memory_range_and_to_calibrate():
    t = compute("memory_range", SCENARIO, PLAN, measured=Measured(peak_gib=50))
    (predicted, *_), = t.stated
    assert predicted == (("memory", pytest.approx(t.evaluation.memory.total_gib)),)
    cal = compute("calibrate", SCENARIO, PLAN, measured=Measured(tokens_per_s_per_gpu=800, peak_gib=50))
    (groups,) = cal.stated
    assert len(groups) == 3 and groups[2] == predicted  # before, change, and the predicted peak


def test_measured_figures_a_case_may_give():
    assert Measured(peak_gib=61).peak_gib == 61 and not Measured(peak_gib=61).has_speed
    assert Measured(step_s=80, peak_gib=61).has_speed
    with pytest.raises(ValidationError, match="exactly one"):
        Measured(step_s=80, mfu=0.4, peak_gib=61)
    with pytest.raises(ValidationError, match="exactly one"):
        Measured()
    base = {"id": "x", "family": "evaluate", "scenario": SCENARIO.model_dump(exclude_none=True), "plan": PLAN,
            "user": "peak was 61 GiB", "truth": "calibrate", "measured": {"peak_gib": 61}}
    with pytest.raises(ValidationError, match="speed figure"):  # a peak alone fits nothing
        Case.model_validate(base)
    assert Case.model_validate({**base, "truth": "memory_range"}).turns[0].measured.peak_gib == 61
