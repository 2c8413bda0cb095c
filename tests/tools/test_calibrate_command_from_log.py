"""The command the chat prints after calibrating to a pasted log leaves out what the log gives itself (GPU count,
layout, batch), and run on that log it fits the same profile as the chat did."""

import json
import shlex
from pathlib import Path

import pytest

from shardwise.tools import dispatch
from support.cli_runner import run

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"


@pytest.mark.parametrize("log, scenario, plan, absent", [
    # megatron_lm.log prints world_size, the layout, seq_length and global_batch_size in its arguments block
    ("megatron_lm.log", {"model": "llama-3.1-8b", "gpu": "h100"}, {},
     ["--gpus", "--tp", "--pp", "--seq-len", "--global-batch", "--micro-batch"]),
    # torchtitan.log prints the mesh (8 GPUs, tp/pp/cp 1) but no batch: the user's micro-batch stays
    ("torchtitan.log", {"model": "llama-3.1-8b", "gpu": "h100", "seq_len": 8192}, {"micro_batch": 2},
     ["--gpus", "--tp", "--pp", "--cp"]),
])
def test_the_printed_command_fits_the_same_profile(capsys, log, scenario, plan, absent):
    text = (LOGS / log).read_text()
    chat = dispatch("calibrate_to_measurement", {"scenario": scenario, "plan": plan, "log": text,
                                                 "measured_tokens_per_s_per_gpu": None, "measured_step_s": None,
                                                 "measured_mfu": None}, result_id="R1")
    assert chat.ok, chat.errors
    words = shlex.split(chat.result.command)
    assert not set(absent) & set(words), chat.result.command
    words = words[2:words.index("--save")]  # drop "shardwise calibrate" and the --save target
    words[words.index("train.log")] = str(LOGS / log)
    code, out, err = run(capsys, "calibrate", *words, "--json")
    assert code == 0, err
    assert json.loads(out)["compute_scale"] == pytest.approx(chat.result.profile.compute_scale, rel=1e-9)
