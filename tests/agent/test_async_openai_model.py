"""The async OpenAI adapter (`openai.AsyncOpenAI`) against respx: the same replies, retries and
errors as the blocking one, and the cap on requests open at once."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest
import respx

from shardwise.agent.async_openai_model import AsyncOpenAIChatModel
from shardwise.agent.config import AgentConfig
from shardwise.agent.model import ModelError, ModelReply, TextDelta

BASE = "https://llm.example.test/v1"
MESSAGES = [{"role": "user", "content": "hi"}]


def chunk(delta: dict, finish=None) -> dict:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sse(*chunks) -> httpx.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def make(sleeps: list | None = None, **kw) -> AsyncOpenAIChatModel:
    async def sleep(seconds: float) -> None:
        if sleeps is not None:
            sleeps.append(seconds)

    return AsyncOpenAIChatModel(AgentConfig(model="m", base_url=BASE, api_key="sk-test-0123456789", **kw), sleep=sleep)


async def collect(model, deadline_s: float = 30.0) -> list:
    return [e async for e in model.astream(MESSAGES, [], deadline=time.monotonic() + deadline_s)]


@pytest.fixture
def api():
    with respx.mock(base_url=BASE, assert_all_called=False, assert_all_mocked=True) as router:
        yield router


def test_streamed_text_and_tool_call_fragments_are_assembled(api):
    api.post("/chat/completions").mock(return_value=sse(
        chunk({"role": "assistant", "content": "Let me check. "}),
        chunk({"tool_calls": [{"index": 0, "id": "call_a", "type": "function",
                               "function": {"name": "lookup_model", "arguments": '{"na'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'me": "llama"}'}}]}),
        chunk({}, finish="tool_calls")))
    events = asyncio.run(collect(make()))
    assert events[0] == TextDelta("Let me check. ")
    reply = events[-1]
    assert isinstance(reply, ModelReply) and reply.finish_reason == "tool_calls"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in reply.tool_calls] == [
        ("call_a", "lookup_model", {"name": "llama"})]


def test_a_429_is_retried_after_the_endpoints_retry_after(api):
    sleeps: list[float] = []
    route = api.post("/chat/completions").mock(side_effect=[
        httpx.Response(429, headers={"retry-after": "2"}, json={"error": {"message": "slow down"}}),
        sse(chunk({"content": "fine"}), chunk({}, finish="stop"))])
    events = asyncio.run(collect(make(sleeps)))
    assert events[-1].text == "fine" and route.call_count == 2 and sleeps == [2.0]


def test_rate_limited_until_retries_run_out_is_a_clear_error(api):
    api.post("/chat/completions").mock(return_value=httpx.Response(
        429, json={"error": {"message": "Rate limit reached for requests"}}))
    with pytest.raises(ModelError) as failed:
        asyncio.run(collect(make(max_retries=1)))
    assert failed.value.kind == "unavailable"
    assert str(failed.value) == (f"the LLM endpoint ({BASE}) answered HTTP 429 after 2 attempts: "
                                 "Rate limit reached for requests")


def test_no_retry_once_text_was_shown(api):
    async def partial():
        yield f"data: {json.dumps(chunk({'content': 'partial '}))}\n\n".encode()
        raise httpx.ReadError("connection reset")

    route = api.post("/chat/completions").mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=partial()))

    async def run():
        shown = []
        with pytest.raises(ModelError) as failed:
            async for event in make().astream(MESSAGES, [], deadline=time.monotonic() + 30):
                shown.append(event)
        return shown, failed.value

    shown, error = asyncio.run(run())
    assert shown == [TextDelta("partial ")] and route.call_count == 1 and error.kind == "unavailable"


def test_requests_beyond_the_cap_wait_and_one_that_cannot_start_by_its_deadline_gives_up(api):
    """Cap 1: while one request is open, a second waits; with a deadline shorter than the first
    request it never reaches the endpoint and fails as `deadline`."""
    async def scenario():
        gate, entered = asyncio.Event(), []

        async def slow(request):
            entered.append(request)
            await gate.wait()
            return httpx.Response(200, json={"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                                             "choices": [{"index": 0, "finish_reason": "stop",
                                                          "message": {"role": "assistant", "content": "first"}}]})

        api.post("/chat/completions").mock(side_effect=slow)
        model = make(stream=False, llm_max_concurrency=1)
        first = asyncio.ensure_future(collect(model))
        for _ in range(200):  # until the first request is at the endpoint
            if entered:
                break
            await asyncio.sleep(0.01)
        assert model.slots.in_use == 1 and len(entered) == 1
        with pytest.raises(ModelError) as waited:
            await collect(model, deadline_s=0.2)
        assert len(entered) == 1  # the second never reached the endpoint
        gate.set()
        events = await first
        return waited.value, events, model

    error, events, model = asyncio.run(scenario())
    assert error.kind == "deadline" and "all 1 LLM request slots" in str(error)
    assert events[-1].text == "first" and (model.slots.in_use, model.slots.waiting) == (0, 0)
