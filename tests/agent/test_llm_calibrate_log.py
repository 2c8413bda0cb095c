"""The LLM path can calibrate from the chat: the tool is offered with the measured inputs a user pastes
(an MFU, a training log verbatim), and a scripted model's call with a pasted log reaches the engine's
log reader. Expected tokens/s per GPU: hand arithmetic from the log line."""

from __future__ import annotations

import json

from shardwise.agent.events import DoneEvent, ToolEvent
from shardwise.tools import tool_schemas

SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "seq_len": 4096}
LOG = " iteration      20/    500 | elapsed time per iteration (ms): 4000.0 | global batch size:    64 |"


def test_the_calibrate_tool_is_offered_with_mfu_and_log():
    schema = next(s for s in tool_schemas() if s["function"]["name"] == "calibrate_to_measurement")
    properties = schema["function"]["parameters"]["properties"]
    assert {"measured_tokens_per_s_per_gpu", "measured_step_s", "measured_mfu", "log"} <= set(properties)


def test_a_scripted_model_calibrates_on_a_pasted_log(make_service, fake_model):
    call = ("calibrate_to_measurement", {"scenario": SCENARIO, "plan": {"tp": 2}, "log": LOG})
    model = fake_model([{"calls": [call]}, {"text": "Calibrated [R1]."}])
    events = list(make_service(model).stream("llama 3.1 8b on 8 h100, tp2, seq 4096. our megatron log:\n" + LOG))
    tool = next(e for e in events if isinstance(e, ToolEvent))
    assert tool.ok, tool.errors
    # 64 x 4,096 = 262,144 tokens per step; / 4.0 s / 8 GPUs = 8,192 tokens/s per GPU
    assert tool.result["measured_tokens_per_s_per_gpu"] == 8192.0 and tool.result["measured_from"] == "log"
    assert "profile" not in json.loads(model.requests[-1]["messages"][-1]["content"])  # hidden from the model
    assert isinstance(events[-1], DoneEvent)


def test_with_our_profile_the_llm_paths_tools_use_the_profile_fitted_earlier(make_service, fake_model):
    calibrate = ("calibrate_to_measurement", {"scenario": SCENARIO, "plan": {"tp": 2}, "log": LOG})
    evaluate = ("evaluate_plan", {"scenario": SCENARIO, "plan": {"tp": 2}})
    model = fake_model([{"calls": [calibrate]}, {"text": "Calibrated [R1]."},
                        {"calls": [evaluate]}, {"text": "Evaluated [R2]."},
                        {"calls": [evaluate]}, {"text": "Evaluated [R3]."}])
    service = make_service(model)
    first = list(service.stream("llama 3.1 8b on 8 h100, tp2, seq 4096. our megatron log:\n" + LOG))
    session = first[-1].session_id
    asked = list(service.stream("with our profile, evaluate tp2", session))
    plain = list(service.stream("evaluate tp2 again", session))
    calibrated = next(e for e in asked if isinstance(e, ToolEvent)).result["plan"]["calibration"]
    assert calibrated is not None and calibrated.startswith("calibrated: compute ×")
    assert next(e for e in plain if isinstance(e, ToolEvent)).result["plan"]["calibration"] is None  # only when asked


def test_a_yes_to_the_calibration_offered_on_the_llm_path_is_answered_by_the_planner(make_service, fake_model):
    # After the model's calibration, "yes" fits the same run again without a model call and keeps the profile in
    # use: the next LLM turn's tools predict with it without being asked.
    calibrate = ("calibrate_to_measurement", {"scenario": SCENARIO, "plan": {"tp": 2}, "log": LOG})
    evaluate = ("evaluate_plan", {"scenario": SCENARIO, "plan": {"tp": 2}})
    model = fake_model([{"calls": [calibrate]}, {"text": "Calibrated [R1]. Want me to use it?"},
                        {"calls": [evaluate]}, {"text": "Evaluated [R3]."}])
    service = make_service(model)
    session = list(service.stream("llama 3.1 8b on 8 h100, tp2, seq 4096. our megatron log:\n" + LOG))[-1].session_id
    requests = len(model.requests)
    accepted = list(service.stream("yes, use it", session))
    assert len(model.requests) == requests  # no model call for the reply
    tool = next(e for e in accepted if isinstance(e, ToolEvent))
    assert tool.name == "calibrate_to_measurement" and tool.result["measured_tokens_per_s_per_gpu"] == 8192.0
    later = list(service.stream("evaluate tp2 again", session))
    assert next(e for e in later if isinstance(e, ToolEvent)).result["plan"]["calibration"].startswith("calibrated: ")
