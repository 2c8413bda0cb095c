"""The OpenAI adapter against the real `openai` client, its HTTP traffic answered by respx."""

from __future__ import annotations

import json
import socket
import time

import httpx
import openai
import pytest
import respx

from shardwise.agent.config import AgentConfig
from shardwise.agent.model import ModelError, ModelReply, TextDelta
from shardwise.agent.openai_model import OpenAIChatModel

BASE = "https://llm.example.test/v1"
SECRET = "sk-test-0123456789abcdef"
TOOLS = [{"type": "function", "function": {"name": "lookup_model", "description": "d", "strict": True,
                                          "parameters": {"type": "object", "properties": {"name": {"type": "string"}},
                                                         "required": ["name"], "additionalProperties": False}}}]
MESSAGES = [{"role": "user", "content": "hi"}]


def make(stream=False, sleeps=None, **kw):
    config = AgentConfig(model="test-model", base_url=BASE, api_key=SECRET, stream=stream, **kw)
    return OpenAIChatModel(config, sleep=(sleeps.append if sleeps is not None else lambda s: None))


def run(model, deadline_s=30.0):
    events = list(model.stream(MESSAGES, TOOLS, deadline=time.monotonic() + deadline_s))
    assert isinstance(events[-1], ModelReply) and not any(isinstance(e, ModelReply) for e in events[:-1])
    return events


def completion(message: dict, finish="stop"):
    return {"id": "c1", "object": "chat.completion", "created": 1, "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}]}


def chunk(delta: dict, finish=None):
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def sse(*chunks) -> httpx.Response:
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


@pytest.fixture
def api():
    with respx.mock(base_url=BASE, assert_all_called=False, assert_all_mocked=True) as router:
        yield router


def test_tool_call_reply_and_the_request_it_sent(api):
    route = api.post("/chat/completions").mock(return_value=httpx.Response(200, json=completion(
        {"content": None, "tool_calls": [{"id": "call_a", "type": "function",
                                          "function": {"name": "lookup_model", "arguments": '{"name": "llama"}'}}]},
        finish="tool_calls")))
    reply = run(make())[-1]
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [("call_a", "lookup_model", '{"name": "llama"}')]
    assert reply.finish_reason == "tool_calls"
    sent = json.loads(route.calls.last.request.content)
    assert sent["model"] == "test-model" and sent["tools"] == TOOLS and sent["messages"] == MESSAGES
    assert route.calls.last.request.headers["authorization"] == f"Bearer {SECRET}"


def test_parallel_tool_calls_in_one_reply(api):
    calls = [{"id": f"call_{i}", "type": "function", "function": {"name": "lookup_model", "arguments": json.dumps({"name": n})}}
             for i, n in enumerate(["a", "b", "c"])]
    api.post("/chat/completions").mock(return_value=httpx.Response(200, json=completion(
        {"content": None, "tool_calls": calls}, finish="tool_calls")))
    reply = run(make())[-1]
    assert [json.loads(c.arguments)["name"] for c in reply.tool_calls] == ["a", "b", "c"]
    assert [c.id for c in reply.tool_calls] == ["call_0", "call_1", "call_2"]


def test_streamed_text_arrives_as_deltas(api):
    api.post("/chat/completions").mock(return_value=sse(
        chunk({"role": "assistant", "content": ""}), chunk({"content": "TP=4 "}), chunk({"content": "wins [R1]."}),
        chunk({}, finish="stop")))
    events = run(make(stream=True))
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["TP=4 ", "wins [R1]."]
    assert events[-1].text == "TP=4 wins [R1]." and events[-1].tool_calls == []


def test_streamed_parallel_tool_calls_are_assembled_from_fragments(api):
    api.post("/chat/completions").mock(return_value=sse(
        chunk({"role": "assistant", "tool_calls": [
            {"index": 0, "id": "call_x", "type": "function", "function": {"name": "lookup_model", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"na'}}]}),
        chunk({"tool_calls": [{"index": 1, "id": "call_y", "type": "function",
                               "function": {"name": "list_hardware", "arguments": "{}"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'me": "qwen"}'}}]}),
        chunk({}, finish="tool_calls")))
    reply = run(make(stream=True))[-1]
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("call_x", "lookup_model", '{"name": "qwen"}'), ("call_y", "list_hardware", "{}")]
    assert reply.finish_reason == "tool_calls"


def test_retries_429_then_500_then_succeeds_honouring_retry_after(api):
    route = api.post("/chat/completions").mock(side_effect=[
        httpx.Response(429, headers={"retry-after-ms": "250"}, json={"error": {"message": "slow down"}}),
        httpx.Response(500, json={"error": {"message": "boom"}}),
        httpx.Response(200, json=completion({"content": "ok"})),
    ])
    sleeps: list[float] = []
    reply = run(make(sleeps=sleeps, max_retries=2))[-1]
    assert reply.text == "ok" and route.call_count == 3
    assert sleeps == [0.25, 1.0]  # Retry-After honoured; then the doubling schedule 0.5·2^1


def test_retries_are_bounded_and_the_error_is_clear_without_the_key(api):
    route = api.post("/chat/completions").mock(return_value=httpx.Response(503, json={"error": {"message": "overloaded"}}))
    with pytest.raises(ModelError) as info:
        run(make(max_retries=2))
    assert route.call_count == 3
    assert info.value.kind == "unavailable"
    assert "503" in str(info.value) and "overloaded" in str(info.value) and SECRET not in str(info.value)


def test_streamed_retry_429(api):
    api.post("/chat/completions").mock(side_effect=[
        httpx.Response(429, json={"error": {"message": "rate"}}),
        sse(chunk({"content": "fine"}), chunk({}, finish="stop"))])
    assert run(make(stream=True))[-1].text == "fine"


def test_timeout_is_retried_then_reported(api):
    route = api.post("/chat/completions").mock(side_effect=httpx.ReadTimeout("slow"))
    with pytest.raises(ModelError) as info:
        run(make(max_retries=1, request_timeout_s=5))
    assert route.call_count == 2 and info.value.kind == "timeout"
    assert "did not answer within 5 s" in str(info.value)


def test_client_timeout_is_passed_to_httpx_and_capped_by_the_deadline(api):
    route = api.post("/chat/completions").mock(return_value=httpx.Response(200, json=completion({"content": "ok"})))
    run(make(request_timeout_s=45, connect_timeout_s=3), deadline_s=20)
    timeout = route.calls.last.request.extensions["timeout"]
    assert 19 < timeout["read"] <= 20 and timeout["connect"] == 3


def test_deadline_already_passed_makes_no_request(api):
    route = api.post("/chat/completions").mock(return_value=httpx.Response(200, json=completion({"content": "ok"})))
    with pytest.raises(ModelError) as info:
        list(make().stream(MESSAGES, TOOLS, deadline=time.monotonic() - 1))
    assert info.value.kind == "deadline" and route.call_count == 0


def test_retry_wait_that_would_overrun_the_deadline_gives_up(api):
    api.post("/chat/completions").mock(return_value=httpx.Response(429, headers={"retry-after": "5"}, json={}))
    with pytest.raises(ModelError) as info:
        run(make(max_retries=3), deadline_s=2)
    assert info.value.kind == "deadline"


def test_bad_key_is_not_retried_and_not_echoed(api):
    route = api.post("/chat/completions").mock(return_value=httpx.Response(
        401, json={"error": {"message": f"Incorrect API key provided: {SECRET[:8]}..."}}))
    with pytest.raises(ModelError) as info:
        run(make(max_retries=3))
    assert route.call_count == 1 and info.value.kind == "auth"
    assert SECRET not in str(info.value) and "OPENAI_API_KEY" in str(info.value)


def test_no_retry_once_text_was_shown(api):
    class Broken(httpx.SyncByteStream):
        def __iter__(self):
            yield f"data: {json.dumps(chunk({'content': 'partial '}))}\n\n".encode()
            raise httpx.ReadError("connection dropped")

    route = api.post("/chat/completions").mock(return_value=httpx.Response(
        200, headers={"content-type": "text/event-stream"}, stream=Broken()))
    model = make(stream=True, max_retries=3)
    seen = []
    with pytest.raises(ModelError):
        for event in model.stream(MESSAGES, TOOLS, deadline=time.monotonic() + 30):
            seen.append(event)
    assert [e.text for e in seen] == ["partial "] and route.call_count == 1


def test_unmocked_request_cannot_leave_the_machine():
    """respx with assert_all_mocked: a request to any address without a route fails."""
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        router.post(f"{BASE}/chat/completions").mock(return_value=httpx.Response(200, json=completion({"content": "x"})))
        model = OpenAIChatModel(AgentConfig(model="m", base_url="https://elsewhere.example.test/v1", stream=False),
                                sleep=lambda s: None)
        with pytest.raises(ModelError):
            list(model.stream(MESSAGES, [], deadline=time.monotonic() + 5))
        assert router.calls.call_count == 0


def test_socket_guard_blocks_real_connections(no_network):
    """tests/agent/conftest.py's autouse guard: a request that escaped respx would fail here."""
    with pytest.raises(RuntimeError, match="test tried to"):
        socket.create_connection(("203.0.113.7", 443), timeout=1)
    with pytest.raises(RuntimeError, match="test tried to"):
        httpx.get("https://api.openai.com/v1/models", timeout=1)
    model = OpenAIChatModel(AgentConfig(model="m", base_url="http://203.0.113.9/v1", stream=False, max_retries=0))
    with pytest.raises(ModelError, match="cannot reach the LLM endpoint"):
        list(model.stream(MESSAGES, [], deadline=time.monotonic() + 5))
    assert "203.0.113.9" in no_network  # the attempt was made, and stopped at the socket


def test_openai_package_sends_through_httpx_which_respx_sees():
    """The pin openai<3: 3.x moved to httpx2, which respx does not intercept."""
    assert int(openai.__version__.split(".")[0]) < 3
    assert isinstance(openai.OpenAI(api_key="x", base_url=BASE)._client, httpx.Client)


def test_full_turn_through_the_openai_client_with_malformed_then_parallel_calls(tmp_path):
    """ChatService over the real openai client: a streamed malformed call is answered with the
    validation errors; the model then makes two parallel calls; the third reply streams text."""
    from shardwise.agent.events import DeltaEvent, DoneEvent, ToolEvent
    from shardwise.agent.service import ChatService

    config = AgentConfig(model="test-model", base_url=BASE, api_key=SECRET, stream=True,
                         session_db=tmp_path / "s.db")
    scenario = {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8}
    replies = [
        sse(chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                                   "function": {"name": "estimate_memory", "arguments": '{"scenario": {"gpus": -8}'}}]}),
            chunk({}, finish="tool_calls")),
        sse(chunk({"tool_calls": [
            {"index": 0, "id": "c2", "type": "function",
             "function": {"name": "estimate_memory", "arguments": json.dumps({"scenario": scenario, "plan": {"tp": 8}})}},
            {"index": 1, "id": "c3", "type": "function",
             "function": {"name": "lookup_model", "arguments": '{"name": "llama-3.1-8b"}'}}]}),
            chunk({}, finish="tool_calls")),
        sse(chunk({"content": "TP=8 needs "}), chunk({"content": "little memory [R2]."}), chunk({}, finish="stop")),
    ]
    with respx.mock(base_url=BASE, assert_all_mocked=True) as router:
        route = router.post("/chat/completions").mock(side_effect=replies)
        events = list(ChatService(config).stream("memory of llama 8b on 8 h100 with tp 8?", None))
    bodies = [json.loads(call.request.content) for call in route.calls]
    assert len(bodies) == 3 and all(b["stream"] and b["tools"] for b in bodies)
    fix = json.loads(bodies[1]["messages"][-1]["content"])
    assert bodies[1]["messages"][-1]["tool_call_id"] == "c1"
    assert any("scenario.gpus" in line or "not valid JSON" in line for line in fix["fix"])
    answered = [m for m in bodies[2]["messages"] if m["role"] == "tool"][-2:]
    assert [m["tool_call_id"] for m in answered] == ["c2", "c3"]
    tools = [e for e in events if isinstance(e, ToolEvent)]
    assert [(t.id, t.ok) for t in tools] == [("R1", False), ("R2", True), ("R3", True)]
    done = next(e for e in events if isinstance(e, DoneEvent))
    assert done.answer == "TP=8 needs little memory [R2]." and done.mode == "llm"
    assert "".join(e.text for e in events if isinstance(e, DeltaEvent)) == done.answer
    assert SECRET not in json.dumps([e.__dict__ for e in events], default=str)
