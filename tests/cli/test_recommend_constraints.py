"""Contradictory or empty search constraints: an error for flags that contradict each other,
and a reason (not an empty "Examples:" list) when the constraints leave nothing to search."""

import json

import pytest

from shardwise.engine.constraints import parse_constraints
from shardwise.engine.errors import ShardwiseInputError
from support.cli_runner import run

SCENARIO = ["--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "64"]



@pytest.mark.parametrize("raw", [{"tp": "4,8", "max_tp": 2}, {"mb": 3, "max_micro_batch": 2},
                                 {"pp": 2, "min_pp": 4}, {"zero": "0,1", "min_zero_stage": 2}])
def test_pins_outside_their_own_bounds_are_input_errors(raw):
    with pytest.raises(ShardwiseInputError, match="contradict"):
        parse_constraints(raw)


def test_pin_inside_bounds_is_kept():
    c = parse_constraints({"tp": "2,4,8", "max_tp": 4})
    assert c.filter("tp", c.pins["tp"]) == (2, 4)


def test_contradictory_flags_exit_2_with_one_line(capsys):
    code, out, err = run(capsys, "recommend", *SCENARIO, "--tp", "4,8", "--max-tp", 2)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "tp=[4, 8]" in err and "max_tp=2" in err


@pytest.mark.parametrize("flag, value, knob", [("--min-tp", 100, "tp"), ("--min-pp", 128, "pp"),
                                               ("--min-micro-batch", 2000, "micro_batch")])
def test_constraints_that_leave_nothing_say_which_knob(capsys, flag, value, knob):
    # Llama-3.1-70B: 64 heads, 80 layers; 64 GPUs; global batch 1024: no TP/PP above 64 exists,
    # and the micro-batch search stops at 16 sequences of 4,096 tokens (65,536 tokens).
    code, out, err = run(capsys, "recommend", *SCENARIO, flag, value, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["searched"] == 0 and d["plans"] == []
    blocking = d["nothing_fits"]["blocking"]
    assert [b["rule"] for b in blocking] == ["constraints_exclude_every_value"]
    assert f"{flag[2:].replace('-', '_')}={value}" in blocking[0]["message"] and knob in blocking[0]["message"]
    code, out, _ = run(capsys, "recommend", *SCENARIO, flag, value)
    assert "NOTHING TO SEARCH" in out and "Examples:\n" not in out + "\n"
