"""The offline planner offers to calibrate when the user says what their run measured; the numbers
it states come from the engine called directly here, and the profile passed to `ask --profile`
reaches every tool call. A question about a predicted number is not a measurement."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.measured import measured_throughput
from shardwise.agent.service import ChatService
from shardwise.engine.calibration.fit_profile import Measurement, fit_profile
from shardwise.engine.calibration.profile import CalibrationProfile
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

OPENING = "Llama-3.1-70B on 64 H100s, 8k context, 4M-token batches - what should I use?"


@pytest.mark.parametrize("text, value", [
    ("we measured 850 tok/s/GPU with TP4 PP4", 850.0),
    ("we're getting 1.1k tokens per second per GPU", 1100.0),
    ("our run does 1,234 tokens/s per GPU at tp=8", 1234.0),
    ("is 850 tok/s/GPU good for this?", None),  # no measurement cue: a question about a number
    ("we measured the loss at 2.1", None),  # no per-GPU throughput
])
def test_measured_throughput_needs_a_cue_and_a_per_gpu_unit(text, value):
    assert measured_throughput(text) == value


def ask_all(service, *messages):
    session, done = None, None
    for message in messages:
        events = list(service.stream(message, session))
        done = events[-1]
        session = done.session_id
    return done


def test_measured_run_is_answered_with_the_profile_it_implies(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = ask_all(service, OPENING, "we measured 850 tok/s/GPU with TP4 PP4")
    call = done.tool_calls[-1]
    assert call["name"] == "calibrate_to_measurement" and call["arguments"]["measured_tokens_per_s_per_gpu"] == 850
    # The engine, directly: the same run fitted by fit_profile.
    run = Measurement(get_model("llama-3.1-70b"), build_cluster("h100-sxm", 64), TrainingSetup(seq_len=8192, global_batch=512),
                      Strategy(tp=4, pp=4), 850.0)
    p = fit_profile([run], with_memory=False)
    assert f"{p.runs[0].predicted_before:,.0f}" in done.answer
    assert f"×{round(p.compute_scale, 3)}" in done.answer
    assert "shardwise calibrate" in done.answer and "--measured-tokens-per-s-per-gpu 850" in done.answer


def test_service_profile_reaches_the_tools(tmp_path):
    profile = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)
    plain = ask_all(ChatService(AgentConfig(session_db=tmp_path / "a.db")), OPENING)
    calibrated = ask_all(ChatService(AgentConfig(session_db=tmp_path / "b.db"), profile=profile), OPENING)
    assert plain.plan["calibration"] is None
    assert calibrated.plan["calibration"].startswith("calibrated: compute ×0.800")
    assert "Calibrated: compute ×0.800" in calibrated.answer
