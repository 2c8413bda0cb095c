""""Scale the batch with the gpus" as a conversation's first message ran a what-if that changed nothing
("What if ?", every figure +0.0 %) on the page's form scenario. Now, with no GPU change to scale the batch by,
the offline planner says so and asks for the scenario (or the GPU count) instead of calling a tool. Expected
values are the user-visible contract: no tool call, the words of the answer."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.events import DoneEvent
from shardwise.agent.service import ChatService
from shardwise.web.chat import seed_scenario


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.db"))


def ask(service, message, session=None) -> DoneEvent:
    return next(e for e in service.stream(message, session) if isinstance(e, DoneEvent))


@pytest.mark.parametrize("message", ["scale the batch with the gpus", "keep the per-gpu batch"])
def test_as_the_first_message_it_says_there_is_no_scenario_and_asks_for_one(service, message):
    done = ask(service, message)
    assert done.tool_calls == []
    assert "There is no scenario yet" in done.answer and "Tell me the setup" in done.answer


def test_on_the_pages_form_scenario_it_asks_for_the_gpu_count_instead_of_an_empty_what_if(service):
    session = seed_scenario(service, None, {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": 64})
    done = ask(service, "scale the batch with the gpus", session)
    assert done.tool_calls == [] and "What if ?" not in done.answer
    assert "nothing has changed the GPU count yet" in done.answer and "64 x h100-sxm" in done.answer
    assert "How many GPUs should it go to?" in done.answer


def test_after_a_gpu_change_it_still_scales_the_batch(service):
    # the what-if that kept the batch (1,024 sequences, the full-training default) on 64 -> 128 GPUs, then the
    # batch per GPU kept: 1,024 x 128 / 64 = 2,048 sequences
    session = seed_scenario(service, None, {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": 64})
    first = ask(service, "what if we had 128 GPUs?", session)
    then = ask(service, "scale the batch with the gpus then", first.session_id)
    assert [c["name"] for c in then.tool_calls] == ["what_if"]
    assert then.tool_calls[0]["arguments"]["change"]["global_batch"] == 2048
