"""`shardwise calibrate` says when the plan describing a run is predicted not to fit, also without a measured
peak: the run ran, so the description is probably wrong, and the profile is fitted to it.

Before, only a measured peak (--measured-peak-gib or a log's) triggered the check; `calibrate --model
llama-3.1-70b --gpus 8 --measured-tokens-per-s-per-gpu 900` (TP1 ZeRO-1 by default) fitted a profile silently.
"""

from support.cli_runner import run

UNFIT = "the plan as given does not fit in the h100-sxm's 80 GiB"


def test_a_plan_that_cannot_fit_is_said(capsys):
    # Llama-3.1-70B, TP=PP=1: every GPU holds all 70.55 B BF16 weights = 70.55e9 x 2 B = 131.4 GiB > 80 GiB.
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "8",
                         "--measured-tokens-per-s-per-gpu", "900")
    assert code == 0, err
    assert UNFIT in out and "yet the run ran" in out
    assert out.index(UNFIT) < out.index("profile    compute")  # said before the profile it qualifies


def test_a_plan_that_fits_says_nothing(capsys):
    # Llama-3.2-1B (1.24 B params) on 8 GPUs: 1.24e9 x 18 B (bf16 weights, fp32 grads, fp32 Adam) = 20.8 GiB
    # before any sharding, far under 80 GiB at seq 4,096.
    code, out, err = run(capsys, "calibrate", "--model", "llama-3.2-1b", "--gpu", "h100", "--gpus", "8",
                         "--measured-tokens-per-s-per-gpu", "40000")
    assert code == 0, err
    assert "does not fit" not in out
