"""LLM-backed chat through the web service: the real agent and `openai`'s async client, the
endpoint answered by respx. Many answers at once, the provider's concurrency cap, and what the
user gets when the endpoint is down or rate-limited."""

from __future__ import annotations

import asyncio
import json
import threading

import httpx
import pytest
import respx

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService
from shardwise.web.app import create_app
from shardwise.web.settings import Settings

BASE = "http://llm.test/v1"
LOOKUP = {"name": "llama-3.1-8b"}


def completion(message: dict, finish: str = "stop") -> dict:
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]}


def reply_to(request: httpx.Request) -> dict:
    """A tool call first, then a text citing the tool result (a stateless endpoint, like the benchmark's)."""
    messages = json.loads(request.content)["messages"]
    tools = [m for m in messages if m["role"] == "tool"]
    if not tools:
        return completion({"content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "lookup_model", "arguments": json.dumps(LOOKUP)}}]}, "tool_calls")
    return completion({"content": f"Llama 3.1 8B is in the catalog [{json.loads(tools[-1]['content'])['id']}]."})


def events(text: str) -> list[tuple[str, dict]]:
    out = []
    for frame in text.strip().split("\n\n"):
        lines = frame.splitlines()
        name = next((x[6:].strip() for x in lines if x.startswith("event:")), None)
        if name:
            out.append((name, json.loads("".join(x[5:].strip() for x in lines if x.startswith("data:")))))
    return out


def llm_app(tmp_path, **config):
    settings = Settings(session_db=tmp_path / "s.db", rate_limit_per_minute=10_000, rate_limit_burst=10_000)
    service = ChatService(AgentConfig(model="m", base_url=BASE, api_key="sk-test", stream=False,
                                      session_db=tmp_path / "s.db", **config))
    return create_app(settings, chat_service=service), service


async def chat_all(app, messages: list[str]) -> list[list[tuple[str, dict]]]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://shardwise.test", timeout=60) as client:
        responses = await asyncio.gather(*(client.post("/api/chat", json={"message": m}) for m in messages))
    assert all(r.status_code == 200 for r in responses), [r.status_code for r in responses]
    return [events(r.text) for r in responses]


def test_many_answers_wait_on_the_llm_at_once_within_its_concurrency_cap(tmp_path, monkeypatch):
    """30 chats at once (the old server took 8 and refused the rest); the endpoint never sees more
    than SHARDWISE_LLM_MAX_CONCURRENCY requests in flight, and sees that many: the rest waited."""
    limit, chats = 4, 30
    in_flight, peak = [0], [0]
    tool_threads: set[str] = set()

    async def slow_llm(request: httpx.Request) -> httpx.Response:
        in_flight[0] += 1
        peak[0] = max(peak[0], in_flight[0])
        await asyncio.sleep(0.05)
        in_flight[0] -= 1
        return httpx.Response(200, json=reply_to(request))

    import shardwise.agent.service as service_module
    real_dispatch = service_module._dispatch

    def recording_dispatch(*args):
        tool_threads.add(threading.current_thread().name)
        return real_dispatch(*args)

    monkeypatch.setattr(service_module, "_dispatch", recording_dispatch)
    app, _ = llm_app(tmp_path, llm_max_concurrency=limit)
    with respx.mock(base_url=BASE, assert_all_mocked=True) as llm:
        llm.post("/chat/completions").mock(side_effect=slow_llm)
        answers = asyncio.run(chat_all(app, [f"Is Llama 3.1 8B in the catalog? ({i})" for i in range(chats)]))
        assert llm.calls.call_count == 2 * chats
    assert all(a[-1][0] == "done" for a in answers), [a[-1] for a in answers if a[-1][0] != "done"]
    assert all([n for n, _ in a] == ["session", "tool", "delta", "done"] for a in answers)
    assert {a[-1][1]["answer"] for a in answers} == {"Llama 3.1 8B is in the catalog [R1]."}
    assert peak[0] == limit
    assert tool_threads and all(name.startswith("shardwise-work") for name in tool_threads)  # engine work: the pool
    assert app.state.active_chats.count == 0


def test_a_rate_limited_llm_ends_with_an_error_that_carries_the_offline_answer(tmp_path):
    app, service = llm_app(tmp_path, max_retries=2)
    question = "Llama-3.1-8B on 8 H100s, 4k context, 256 sequences per step"
    with respx.mock(base_url=BASE, assert_all_mocked=True) as llm:
        route = llm.post("/chat/completions").mock(return_value=httpx.Response(
            429, headers={"retry-after": "0"}, json={"error": {"message": "Rate limit reached for requests"}}))
        [answer] = asyncio.run(chat_all(app, [question]))
        assert route.call_count == 3  # the first try and two retries
    names = [n for n, _ in answer]
    assert names == ["session", "error"]
    error = answer[-1][1]
    assert error["kind"] == "unavailable" and "HTTP 429" in error["message"] and "Rate limit reached" in error["message"]
    assert "offline planner answered" in error["message"]
    offline = error["offline"]
    assert offline["mode"] == "offline" and offline["plan"]["cluster"]["num_gpus"] == 8
    assert offline["html"].startswith("<") and offline["scenario"]["gpus"] == 8 and offline["configs"]
    session = service.store.load(answer[0][1]["session_id"])
    assert session.turns()[0][0] == {"role": "user", "content": question}  # the question is kept


def test_an_unreachable_llm_is_said_plainly(tmp_path):
    app, _ = llm_app(tmp_path, max_retries=1, fallback="none")
    with respx.mock(base_url=BASE, assert_all_mocked=True) as llm:
        llm.post("/chat/completions").mock(side_effect=httpx.ConnectError("connection refused"))
        [answer] = asyncio.run(chat_all(app, ["llama 8b on 8 h100?"]))
    name, error = answer[-1]
    assert name == "error" and error["kind"] == "unavailable" and error["offline"] is None
    assert "cannot reach the LLM endpoint (http://llm.test/v1) after 2 attempts" in error["message"]
    assert "sk-test" not in json.dumps(answer)


def test_leaving_mid_answer_closes_the_agents_async_stream(serve):
    class SlowAsync:
        mode = "llm"

        def __init__(self):
            self.closed, self.produced = threading.Event(), 0

        async def astream(self, message, session_id, *, offload, deadline_s=None):
            try:
                yield ("session", {"session_id": "s-a", "mode": "llm"})
                for i in range(400):
                    await asyncio.sleep(0.05)
                    self.produced += 1
                    yield ("delta", {"text": f"{i} "})
                yield ("done", {})
            finally:
                self.closed.set()

    chat = SlowAsync()
    app = create_app(Settings(), chat_service=chat)
    with serve(app) as base, httpx.Client(base_url=base, timeout=10) as client:
        with client.stream("POST", "/api/chat", json={"message": "hi"}) as r:
            for line in r.iter_lines():
                if line.startswith("event: delta"):
                    break
        assert chat.closed.wait(5), "the agent's async generator was not closed after the client left"
        assert chat.produced < 400
        assert app.state.active_chats.wait_idle(5)


def test_an_llm_that_times_out_is_retried_then_the_offline_answer_comes_with_the_error(tmp_path):
    app, _ = llm_app(tmp_path, max_retries=1, request_timeout_s=5)
    with respx.mock(base_url=BASE, assert_all_mocked=True) as llm:
        route = llm.post("/chat/completions").mock(side_effect=httpx.ReadTimeout("no answer"))
        [answer] = asyncio.run(chat_all(app, ["Llama-3.1-8B on 8 H100s, 4k context, 256 sequences per step"]))
        assert route.call_count == 2
    name, error = answer[-1]
    assert name == "error" and error["kind"] == "timeout"
    assert error["message"].startswith("the LLM endpoint (http://llm.test/v1) did not answer within 5 s after 2 attempts")
    assert error["offline"]["plan"]["cluster"]["num_gpus"] == 8
