"""calibrate_to_measurement (the chat's tool) on pasted logs as they arrive: text that kept its file's
byte-order mark. Expected values are read off the excerpt by hand (format: NVIDIA/Megatron-LM d98e8a64,
megatron/training/arguments.py _print_args and training.py training_log)."""

from __future__ import annotations

import pytest

from shardwise.tools import dispatch

EMPTY = {"measured_tokens_per_s_per_gpu": None, "measured_step_s": None, "measured_mfu": None, "log": None}
TRIMMED = ("seq_length ...................................... 2048\n"
           " iteration       20/     100 | elapsed time per iteration (ms): 4000.0 | global batch size:    64 |\n")


def test_a_pasted_log_that_kept_its_bom_reads_its_first_line():
    out = dispatch("calibrate_to_measurement", {"scenario": {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8},
                                                "plan": {}, **EMPTY, "log": "\ufeff" + TRIMMED}, result_id="R1")
    assert out.ok, out.errors
    # seq_length 2048 read (not the 4,096 default): 64 x 2,048 tokens / 4.0 s / 8 GPUs = 4,096 tokens/s per GPU
    assert out.result.scenario.seq_len == 2048
    assert out.result.measured_tokens_per_s_per_gpu == pytest.approx(4096)
