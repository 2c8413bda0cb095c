"""`truth: impossible`: a measurement no run can produce, refused with the figure that shows it
(evals/truth_impossible.py). Expected values are hand calculations written out here."""

import pydantic
import pytest

from shardwise.evals.case import Case, Measured, Scenario
from shardwise.evals.stated import missing
from shardwise.evals.truth import compute

# Llama-3.1-70B (70.55e9 parameters, 80 layers, hidden 8,192) on 64 H100 (989 dense bf16 TFLOP/s), 8k.
S70 = Scenario(model="llama-3.1-70b", gpu="h100", gpus=64, seq_len="8k", global_batch=512)
PLAN70 = {"tp": 8, "pp": 2, "zero": 1, "mb": 1}
# Llama-2-13B on 8 A100 40GB (40 GiB in the catalog, nvidia-smi's 40960MiB).
S13 = Scenario(model="llama-2-13b", gpu="a100-40gb", gpus=8, seq_len="4k", global_batch=128, framework="deepspeed")
PLAN13 = {"tp": 1, "zero": 3, "mb": 1, "recompute": "full"}


def test_a_speed_above_the_peak_must_be_refused_with_the_mfu_it_implies():
    """9,800 tokens/s per GPU on a 70B. Model FLOPs per token (Narayanan et al. 2021, "Efficient Large-Scale
    Language Model Training on GPU Clusters", eq. 3, without recompute): at least 6N = 6 x 70.55e9 = 4.233e11,
    at most 6N + 12·L·h·s = 4.233e11 + 12 x 80 x 8,192 x 8,192 = 4.877e11 (attention unmasked). So the MFU is
    between 9,800 x 4.233e11 / 989e12 = 4.19 and 9,800 x 4.877e11 / 989e12 = 4.83: over 100 %, impossible."""
    truth = compute("impossible", S70, PLAN70, measured=Measured(tokens_per_s_per_gpu=9800))
    assert truth.error is None
    (option,) = truth.stated
    (group,) = option
    mfu = dict(group)["mfu"]
    assert 4.19 <= mfu <= 4.83
    assert dict(group)["flops"] == pytest.approx(mfu * 989, rel=0.01)  # implied TFLOP/s = MFU x the dense peak
    assert truth.keywords  # and a word of refusal


def test_the_answer_states_the_implied_mfu_as_a_percentage_or_a_multiple_or_the_tflops():
    truth = compute("impossible", S70, PLAN70, measured=Measured(tokens_per_s_per_gpu=9800))
    mfu = dict(truth.stated[0][0])["mfu"]
    pct = f"{100 * mfu:.0f}"
    assert missing(f"That would be {pct}% MFU, more than the H100 can do.", truth.stated) == []
    assert missing(f"That is {mfu:.1f}x the GPU's dense peak: impossible.", truth.stated) == []
    assert missing(f"That is {mfu * 989:,.0f} TFLOP/s per GPU of model FLOPs.", truth.stated) == []
    assert missing("That can't be right, check the figure.", truth.stated)  # no figure: fails
    assert missing(f"MFU {mfu:.2f}%", truth.stated)  # the fraction written as a percentage is not it


def test_a_peak_above_the_gpu_memory_must_be_refused_with_the_capacity_or_the_peak_in_gib():
    """43210MiB = 43,210 / 1,024 = 42.197 GiB, above the A100 40GB's 40 GiB."""
    truth = compute("impossible", S13, measured=Measured(peak_gib=43210 / 1024))
    assert truth.error is None
    assert missing("That is above the A100's 40 GiB, so the GPU must be another.", truth.stated) == []
    assert missing("43210MiB is 42.2 GiB: more than the card has.", truth.stated) == []
    assert missing("That cannot be right.", truth.stated)


def test_a_possible_measurement_is_an_error_so_a_case_cannot_claim_impossible_by_mistake():
    """1,000 tokens/s per GPU on the 70B is at most 1,000 x 4.877e11 / 989e12 = 49 % MFU: possible.
    A 39 GiB peak on a 40 GiB GPU: possible."""
    assert compute("impossible", S70, PLAN70, measured=Measured(tokens_per_s_per_gpu=1000)).error
    assert compute("impossible", S13, measured=Measured(peak_gib=39.0)).error


def test_the_case_format_needs_a_measurement_and_a_plan_for_a_speed():
    base = {"id": "x", "family": "evaluate", "truth": "impossible", "user": "u",
            "scenario": {"model": "llama-3.1-70b", "gpu": "h100", "gpus": 64}}
    with pytest.raises(pydantic.ValidationError):
        Case.model_validate(base)
    with pytest.raises(pydantic.ValidationError):
        Case.model_validate({**base, "measured": {"tokens_per_s_per_gpu": 9800}})
    assert Case.model_validate({**base, "measured": {"peak_gib": 90}}).turns[0].measured.peak_gib == 90
    assert Case.model_validate({**base, "measured": {"mfu": 0.5}, "plan": {"tp": 8}}).turns[0].plan
