"""calibrate_to_measurement from an MFU or a pasted log (what the chat and a tool-calling model pass).
Expected tokens/s per GPU are hand arithmetic from the figures in the arguments."""

from __future__ import annotations

import pytest

from shardwise.tools import dispatch

SCENARIO = {"model": "qwen2.5-7b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 4096, "global_batch": 128}
EMPTY = {"measured_tokens_per_s_per_gpu": None, "measured_step_s": None, "measured_mfu": None, "log": None}


def call(**kw):
    return dispatch("calibrate_to_measurement", {"scenario": kw.pop("scenario", SCENARIO),
                                                 "plan": kw.pop("plan", {"tp": 1, "zero": 1}), **EMPTY, **kw},
                    result_id="R1")


def test_a_megatron_log_gives_the_step_time_and_the_plan():
    log = ("  tensor_model_parallel_size ...................... 2\n"
           " iteration       40/    100 | elapsed time per iteration (ms): 8000.0 | global batch size:   128 |\n")
    out = call(log=log)
    assert out.ok, out.errors
    r = out.result
    # 128 x 4,096 = 524,288 tokens per step; / 8.0 s / 8 GPUs = 8,192 tokens/s per GPU
    assert r.measured_tokens_per_s_per_gpu == pytest.approx(8192.0)
    assert r.measured_from == "log" and r.measured_step_s == 8.0 and r.plan_label.startswith("TP=2")
    assert "--from-log" in r.command


def test_an_hf_trainer_log_uses_the_sequence_length():
    out = call(log="{'train_runtime': 100.0, 'train_samples_per_second': 10.0, 'epoch': 1.0}")
    # 10 samples/s x 4,096 tokens / 8 GPUs = 5,120 tokens/s per GPU
    assert out.ok and out.result.measured_tokens_per_s_per_gpu == pytest.approx(5120.0)


def test_mfu_is_a_fraction_and_a_value_above_1_is_refused_with_the_fraction_to_give():
    # The unit contract (engine/mfu_unit.py): a fraction of the dense peak. 0.4 is 40 %; 40 used to be read as
    # 40 % and 1.5 as 1.5 % — now both are refused (as fractions they exceed the peak), naming 0.4 and 0.015.
    b = call(measured_mfu=0.4)
    assert b.ok and b.result.measured_mfu_percent == 40.0 and "--measured-mfu 0.4" in b.result.command
    for value, meant in ((40, "for 40 % give 0.4"), (1.5, "for 1.5 % give 0.015")):
        a = call(measured_mfu=value)
        assert not a.ok and len(a.errors) == 1 and meant in a.errors[0] and "a fraction" in a.errors[0]


def test_bad_logs_and_double_measurements_are_one_clear_error():
    unreadable = call(log="loss went down nicely")
    assert not unreadable.ok and "could not read a throughput" in unreadable.errors[0]
    wrong_gpus = call(log="  world_size ................... 16\nepoch=0/micro_step=1/global_step=1, RunningAvgSamplesPerSec=5.0,")
    assert not wrong_gpus.ok and "16 GPUs, not 8" in wrong_gpus.errors[0]
    no_seq = call(scenario={**SCENARIO, "seq_len": None}, log="{'train_samples_per_second': 3.0}")
    assert not no_seq.ok and "sequence length" in no_seq.errors[0]
    both = call(measured_mfu=40, measured_step_s=5.0)
    assert not both.ok and "exactly one" in both.errors[0]


def test_an_impossible_figure_names_the_tool_arguments_not_cli_flags():
    # 1e12 tokens/s per GPU of a 7B model is ~4e22 FLOP/s against the H100's 989e12 dense bf16 peak.
    out = call(measured_tokens_per_s_per_gpu=1e12)
    assert not out.ok
    assert "(gpus, seq_len, global_batch)" in out.errors[0] and "--" not in out.errors[0], out.errors
