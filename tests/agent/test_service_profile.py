"""A message's calibration profile reaches every tool call on each of the service's paths: the
synchronous `stream` (CLI) and the event loop's `astream` (web), with the LLM calling the tools,
with the offline planner, and in the offline answer an error carries when the LLM fails."""

from __future__ import annotations

import asyncio

import pytest

from shardwise.agent.events import DoneEvent, ErrorEvent
from shardwise.agent.model import ModelError
from shardwise.engine.calibration.profile import CalibrationProfile

PROFILE = CalibrationProfile(gpu="h100-sxm", precision="bf16", framework="megatron", compute_scale=0.8)
NOTE = "calibrated: compute ×0.800"
SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 4096, "global_batch": 256}
EVALUATE = ("evaluate_plan", {"scenario": SCENARIO, "plan": {"tp": 2}})
QUESTION = "Llama-3.1-8B on 8 H100s, 4k context, 256 sequences per step"


def sync_events(service, message, **kw):
    return list(service.stream(message, None, **kw))


def async_events(service, message, **kw):
    async def drain():
        return [e async for e in service.astream(message, None, **kw)]
    return asyncio.run(drain())


PATHS = [pytest.param(sync_events, id="stream"), pytest.param(async_events, id="astream")]


def final(events):
    last = events[-1]
    if isinstance(last, ErrorEvent):
        return last.offline
    assert isinstance(last, DoneEvent), last
    return {"plan": last.plan, "tool_calls": last.tool_calls}


@pytest.mark.parametrize("events", PATHS)
def test_llm_tool_calls_predict_with_the_messages_profile(make_service, fake_model, events):
    calibrated = final(events(make_service(fake_model([{"calls": [EVALUATE]}, {"text": "done"}])), "hi",
                              profile=PROFILE))
    plain = final(events(make_service(fake_model([{"calls": [EVALUATE]}, {"text": "done"}])), "hi"))
    assert calibrated["plan"]["calibration"].startswith(NOTE)
    assert plain["plan"]["calibration"] is None


@pytest.mark.parametrize("events", PATHS)
def test_offline_planner_and_llm_fallback_use_the_profile(make_service, fake_model, events):
    offline = final(events(make_service(), QUESTION, profile=PROFILE))
    assert offline["plan"]["calibration"].startswith(NOTE)
    down = ModelError("cannot reach the LLM endpoint", kind="unavailable")
    fallback = final(events(make_service(fake_model([down, down])), QUESTION, profile=PROFILE))
    assert fallback["plan"]["calibration"].startswith(NOTE)


def test_the_services_own_profile_is_the_default(make_service, fake_model):
    service = make_service(fake_model([{"calls": [EVALUATE]}, {"text": "done"}]))
    service.profile = PROFILE  # as `ask/chat --profile` sets it
    assert final(async_events(service, "hi"))["plan"]["calibration"].startswith(NOTE)
