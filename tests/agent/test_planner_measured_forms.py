"""Forms of a measured run the chat read wrongly (issue 14, fresh set 10's classes, in other words):
tqdm's "s/it" as a step time, an MFU with where it was read between the word and the figure, and a
pasted log whose own figure is zero (no usable measurement, said so, not 'outside what shardwise does')."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.measured import measured_mfu_percent, measured_run, measured_step_time
from shardwise.agent.service import ChatService


@pytest.mark.parametrize("text, seconds", [
    ("the tqdm bar settles at 31.5s/it, calibrate to that", 31.5),  # tqdm writes s/it below 1 it/s
    ("progress bar shows ~8.25 s/it steady state", 8.25),
    ("is 20 s/it good for this?", None),  # no cue that it was measured: a question about a number
])
def test_seconds_per_iteration_is_a_measured_step_time(text, seconds):
    assert measured_step_time(text) == seconds


@pytest.mark.parametrize("text, percent", [
    ("MFU on the dashboard reads 41.5 %, recalibrate", 41.5),
    ("our MFU from tensorboard: 0.38", 38.0),  # a fraction at most 1
    ("mfu in w&b is 36%", 36.0),
    ("MFU for tp8 is 40%, is that good?", None),  # a plan between the word and the figure, no cue: not a measurement
])
def test_an_mfu_with_where_it_was_read_before_the_figure(text, percent):
    assert measured_mfu_percent(text) == percent


ZERO_LINE = (" [2026-10-02 11:20:05] iteration      200/   5000 | consumed samples:        51200 | "
             "elapsed time per iteration (ms): 0.0 | learning rate: 2.000000E-05 | global batch size:   256 |")


def test_a_log_whose_step_time_is_zero_is_answered_as_unusable(tmp_path):
    assert measured_run(ZERO_LINE).kind == "log_unusable" and measured_run(ZERO_LINE).zero
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = list(service.stream("llama 3.1 8b, 8x h100, tp2 zero1 mb1, 8k, gbs 256. calibrate on this:\n" + ZERO_LINE, None))[-1]
    assert "not a usable measurement" in done.answer and "outside what shardwise does" not in done.answer
    assert not done.tool_calls  # nothing to fit: no calibration is run on it


def test_a_torchtitan_line_with_zero_tps_is_unusable_too():
    line = "[titan] 2026-10-02 11:20:05,221 - root - INFO - step: 20  loss:  8.0117  memory: 58.44GiB(61.51%)  tps: 0  mfu: 0.00%"
    run = measured_run(line)
    assert run is not None and run.kind == "log_unusable" and run.zero


def test_an_impossible_measurement_is_called_impossible(tmp_path):
    # 6 FLOP/param/token x 8.03e9 params x 60,000 tokens/s = 2.9 PFLOP/s per GPU, ~2.9x an H100's 989 dense BF16
    # TFLOP/s: the fit refuses it (engine/calibration/fit_profile.py), and the answer says it is impossible
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = list(service.stream("llama 3.1 8b on 8 h100, 4k, gbs 256, tp1 zero1 mb1. we measured 60,000 tok/s per gpu, "
                               "calibrate", None))[-1]
    assert "impossible" in done.answer
    done = list(service.stream("llama 3.1 8b on 8 h100, tp1 zero1 mb1: the dashboard shows MFU 180%, calibrate", None))[-1]
    assert "impossible" in done.answer and not done.tool_calls
