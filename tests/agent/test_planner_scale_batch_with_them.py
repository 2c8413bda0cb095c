""""what if 128 GPUs, scaling the batch with them": the batch per GPU is kept (the pronoun is the GPUs), and a
batch given in the same message wins over scaling (offline planner, end to end through ChatService).
Expected values are the user-visible contract: the what-if's change. By hand: 256 sequences on 64 GPUs are
4 per GPU; on 128 GPUs that is 4 x 128 = 512 sequences."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.events import DoneEvent
from shardwise.agent.service import ChatService
from shardwise.web.chat import seed_scenario

FORM = {"model": "llama-3.1-70b", "gpu": "h100-sxm", "gpus": 64, "global_batch": 256}


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.db"))


def change_of(service, message) -> dict:
    session = seed_scenario(service, None, FORM)
    done = next(e for e in service.stream(message, session) if isinstance(e, DoneEvent))
    [call] = done.tool_calls
    assert call["name"] == "what_if"
    return {k: v for k, v in call["arguments"]["change"].items() if v is not None}


@pytest.mark.parametrize("message", ["what if 128 GPUs, scaling the batch with them",
                                     "what about 128 gpus and scale the batch along with them?"])
def test_scaling_the_batch_with_them_keeps_the_batch_per_gpu(service, message):
    assert change_of(service, message) == {"gpus": 128, "global_batch": 512}


@pytest.mark.parametrize("message", ["what if 128 GPUs, scaling the batch with them, global batch 1024",
                                     "what if 128 GPUs and scale the batch with the gpus, gbs 1024"])
def test_a_batch_given_in_the_same_message_wins(service, message):
    assert change_of(service, message) == {"gpus": 128, "global_batch": 1024}
