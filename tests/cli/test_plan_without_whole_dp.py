"""A plan whose degrees do not divide the GPUs is refused, not priced with a rounded-down DP.

TP=3 on 16 GPUs used to print "DP=5" (16 // 3) with memory and time for a plan no framework can launch.
By hand: 16 / (TP·CP·PP) = 16 / 3 = 5.33 is not whole; the TP values that divide 16 with CP = PP = 1 are
the divisors of 16: 1, 2, 4, 8, 16. With PP=2, 16 / (3·2) = 2.67; TP must divide 16 / 2 = 8: 1, 2, 4, 8.
"""

from __future__ import annotations

import pytest

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "16"]
WHAT = "TP·CP·PP = 3·1·1 = 3 does not divide 16 GPUs"
ALLOWED = "valid TP with CP=1, PP=1: 1, 2, 4, 8, 16"


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_evaluate_refuses_tp3_on_16_gpus_with_what_is_wrong_and_allowed(capsys, extra):
    code, out, err = run(capsys, "evaluate", *SCENARIO, "--tp", "3", *extra)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert WHAT in err and ALLOWED in err and "DP=5" not in err


def test_explain_refuses_a_plan_b_that_does_not_divide(capsys):
    code, out, err = run(capsys, "explain", *SCENARIO, "--a", "tp=2", "--b", "tp=3,pp=2")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.count("--b") == 1 and "TP·CP·PP = 3·1·2 = 6 does not divide 16 GPUs" in err
    assert "valid TP with CP=1, PP=2: 1, 2, 4, 8" in err


def test_export_refuses_it_too(capsys):
    # export already refused every invalid plan; it stays a one-line refusal naming the rule
    code, out, err = run(capsys, "export", *SCENARIO, "--tp", "3", "--format", "megatron")
    assert code == 2 and out == "" and WHAT in err and "1, 2, 4, 8, 16" in err


def test_moe_expert_degrees_that_do_not_divide_are_refused(capsys):
    # Mixtral-8x7B, EP=3 on 16 GPUs: 16 / (EP·ETP·PP) = 16 / 3 is not whole (no expert DP); the EP values
    # that divide both 8 experts and 16 GPUs: 1, 2, 4, 8
    code, out, err = run(capsys, "evaluate", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--gpus", "16",
                         "--tp", "2", "--ep", "3")
    assert code == 2 and "expert_mesh_divides_gpus" in err and "valid EP with ETP=1, PP=1: 1, 2, 4, 8" in err


def test_a_plan_that_divides_but_breaks_another_rule_is_still_evaluated(capsys):
    # micro-batch 3 with DP = 16 / 2 = 8: 256 sequences are not divisible by 8·3 = 24, an invalid plan the
    # engine can still price (the answer says why): not refused
    code, out, err = run(capsys, "evaluate", *SCENARIO, "--tp", "2", "--micro-batch", "3", "--global-batch", "256")
    assert code == 0 and "INVALID plan" in out and "DP=8" in out
