"""`shardwise what-if` never ends on an empty "why:" heading: when the engine gives no reason it says why.

A change the scenario does not use (lora_rank in full training) moved nothing and printed "why:" with
nothing under it; a change with nothing fitting on either side did the same.
"""

import json

from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-8b", "--gpu", "h100", "--gpus", "8"]


def what_if(capsys, *argv):
    code, text, err = run(capsys, "what-if", *argv)
    assert code == 0, err
    code, out, err = run(capsys, "what-if", *argv, "--json")
    assert code == 0, err
    return text, json.loads(out)


def test_a_change_that_moves_nothing_says_so(capsys):
    # Full training has no adapters, so the LoRA rank enters no formula: same plan, time and memory.
    text, result = what_if(capsys, *SCENARIO, "--change", "lora_rank=64")
    assert result["reasons"] == [] and result["plan_changes"] == []
    assert all(t["delta"] == 0 for t in result["time"] + result["memory"])
    assert "why:     nothing the engine weighs moved" in text
    assert not text.rstrip().endswith("why:")


def test_nothing_fitting_on_either_side_says_so(capsys):
    # Mixed-precision AdamW holds 18 B/param (bf16 weights 2, fp32 grads 4, fp32 master + m + v 12): 70.55 B params
    # x 18 B = 1,183 GiB, over 8 x 80 = 640 GiB however it is sharded, and over 4 x 80 GiB after.
    text, result = what_if(capsys, "--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "8", "--change", "gpus=4")
    assert not result["fits_before"] and not result["fits_after"] and result["reasons"] == []
    assert "why:     nothing fits before or after the change" in text


def test_reasons_are_listed_under_the_heading_as_before(capsys):
    text, result = what_if(capsys, *SCENARIO, "--change", "global_batch=512")
    assert result["reasons"] and "\nwhy:\n  global batch 1,024 → 512 sequences" in text
