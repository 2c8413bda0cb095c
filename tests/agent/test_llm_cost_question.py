"""A cost question through the LLM path: the system prompt tells a small model which recommend_plans arguments
carry a token budget and a price, and a call that passes them brings the engine's days, GPU-hours and cost to
the model, which quotes them. The model is scripted (respx answers the real `openai` client, as Ollama would);
the expected figures are engine/cost.py's formulas written out here on the engine's own best-plan throughput:
time = tokens / (tokens/s); GPU-hours = time x GPUs / 3600; cost = GPU-hours x price."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from shardwise.agent.config import AgentConfig
from shardwise.agent.events import DeltaEvent, DoneEvent
from shardwise.agent.openai_model import OpenAIChatModel
from shardwise.agent.service import ChatService
from shardwise.agent.sessions import SessionStore
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.search import recommend
from shardwise.engine.training import TrainingSetup

from support.openai_replies import completion

BASE = "http://127.0.0.1:11434/v1"
SCENARIO = {"model": "mistral-7b", "gpu": "h100-sxm", "gpus": 32, "seq_len": 4096, "global_batch": 512}
TOKENS, PRICE = 1e12, 2.5  # "1T tokens at $2.5/GPU-h"


def quoting_the_result(request: httpx.Request) -> httpx.Response:
    """The model's second turn: it quotes the cost the tool result it was sent holds, as the prompt asks."""
    tool = next(m for m in reversed(json.loads(request.content)["messages"]) if m["role"] == "tool")
    cost = json.loads(tool["content"])["cost"]
    return completion(f"{cost['days']} days, {cost['gpu_hours']:,.0f} GPU-hours, ${cost['total_usd']:,.0f} [R1].")


@pytest.fixture
def service(tmp_path):
    config = AgentConfig(model="qwen2.5:7b", base_url=BASE, api_key="ollama", stream=False, fallback="none",
                         session_db=tmp_path / "sessions.sqlite3")
    return ChatService(config, model=OpenAIChatModel(config), store=SessionStore(tmp_path / "sessions.sqlite3"))


def test_the_system_prompt_names_the_cost_arguments():
    prompt = ChatService().system_prompt()
    assert "train_tokens" in prompt and "price_per_gpu_hour" in prompt and "recommend_plans" in prompt


def test_a_cost_question_carries_budget_and_price_to_the_answer(service):
    arguments = {"scenario": SCENARIO, "top_k": 1, "train_tokens": "1T", "price_per_gpu_hour": PRICE}
    with respx.mock(base_url=BASE, assert_all_called=True, assert_all_mocked=True) as api:
        route = api.post("/chat/completions").mock(side_effect=[
            completion(calls=[("recommend_plans", json.dumps(arguments))]), quoting_the_result])
        events = list(service.stream("mistral 7b on 32 H100, 4k, gbs 512: how long and how much for 1T tokens "
                                     "at $2.5/GPU-h?"))
    done = next(e for e in events if isinstance(e, DoneEvent))
    answer = "".join(e.text for e in events if isinstance(e, DeltaEvent))
    first_request = json.loads(route.calls[0].request.content)["messages"]
    assert "train_tokens" in first_request[0]["content"]  # the model was told, before it chose its call
    [call] = done.tool_calls
    assert call["ok"] and call["arguments"]["train_tokens"] == "1T" and call["arguments"]["price_per_gpu_hour"] == PRICE
    # the engine's best plan on the same scenario, then engine/cost.py's formulas by hand
    rec = recommend(get_model("mistral-7b"), build_cluster("h100-sxm", 32),
                    TrainingSetup(seq_len=4096, global_batch=512), top_k=1)
    seconds = TOKENS / rec.plans[0].throughput.tokens_per_s
    gpu_hours = seconds * 32 / 3600
    cost = call["result"]["cost"]
    assert cost["days"] == pytest.approx(seconds / 86400, abs=0.01)
    assert cost["gpu_hours"] == pytest.approx(gpu_hours, abs=1)
    assert cost["total_usd"] == pytest.approx(gpu_hours * PRICE, abs=3)
    assert f"{gpu_hours:,.0f} GPU-hours" in answer and f"${gpu_hours * PRICE:,.0f}" in answer
