"""What small local models do to tool calls, end to end: the real `openai` client (its HTTP
answered by respx, as an Ollama or llama.cpp server would answer) through ChatService, the
agent loop and the real tools. Each case: repaired when unambiguous, else one clear message
to the model and its second try goes through."""

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

from support.openai_replies import completion

BASE = "http://127.0.0.1:11434/v1"  # where Ollama serves its OpenAI-compatible API
SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 4096, "global_batch": 256}
DONE = "Here is the plan [R1]."


@pytest.fixture
def api():
    with respx.mock(base_url=BASE, assert_all_called=True, assert_all_mocked=True) as router:
        yield router


@pytest.fixture
def service(tmp_path):
    config = AgentConfig(model="qwen2.5:7b", base_url=BASE, api_key="ollama", stream=False, fallback="none",
                         session_db=tmp_path / "sessions.sqlite3")
    return ChatService(config, model=OpenAIChatModel(config), store=SessionStore(tmp_path / "sessions.sqlite3"))


def ask(service, message, session=None):
    events = list(service.stream(message, session))
    done = next(e for e in events if isinstance(e, DoneEvent))
    return done, "".join(e.text for e in events if isinstance(e, DeltaEvent))


def sent(route, n) -> list[dict]:
    return json.loads(route.calls[n].request.content)["messages"]


TEXT_CALLS = {
    "bare JSON": json.dumps({"name": "recommend_plans", "arguments": {"scenario": SCENARIO}}),
    "a json fence": "I'll search the plans.\n```json\n" + json.dumps(
        {"name": "recommend_plans", "arguments": {"scenario": SCENARIO}}) + "\n```",
    "Hermes/Qwen tags": "<tool_call>\n" + json.dumps({"name": "recommend_plans", "arguments": {"scenario": SCENARIO}})
                        + "\n</tool_call>",
    "Llama's python tag": "<|python_tag|>" + json.dumps({"name": "recommend_plans", "parameters": {"scenario": SCENARIO}}),
}


@pytest.mark.parametrize("text", TEXT_CALLS.values(), ids=TEXT_CALLS.keys())
def test_a_tool_call_written_in_the_text_is_called(api, service, text):
    route = api.post("/chat/completions").mock(side_effect=[completion(text), completion(DONE)])
    done, shown = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("recommend_plans", True)]
    assert done.tool_calls[0]["arguments"]["scenario"]["gpus"] == 8
    # the model's second request carries its call as a real tool call and the result keyed by its id
    assistant, tool = sent(route, 1)[-2:]
    assert assistant["tool_calls"][0]["function"]["name"] == "recommend_plans"
    assert tool["role"] == "tool" and tool["tool_call_id"] == assistant["tool_calls"][0]["id"]
    assert '"name"' not in shown and "tool_call" not in shown and "python_tag" not in shown  # the JSON is not shown
    assert shown.endswith(DONE)


def test_arguments_as_a_json_string_inside_a_string(api, service):
    doubly = json.dumps(json.dumps({"scenario": SCENARIO}))
    inner_string = json.dumps({"scenario": json.dumps(SCENARIO)})
    api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("recommend_plans", doubly), ("estimate_memory", inner_string)]), completion(DONE)])
    done, _ = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("recommend_plans", True), ("estimate_memory", True)]
    assert all(c["arguments"]["scenario"]["model"] == "llama-3.1-8b" for c in done.tool_calls)


def test_numbers_as_strings(api, service):
    stringly = {"scenario": {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": "8", "seq_len": "4k",
                             "global_batch": "1,024"}, "top_k": "2"}
    api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("recommend_plans", json.dumps(stringly))]), completion(DONE)])
    done, _ = ask(service, "Llama 3.1 8B on 8 H100s, 4k context, batch 1024?")
    call = done.tool_calls[0]
    assert call["ok"], call["errors"]
    # "4k" is 4·1024 tokens (the CLI's reading of k in a length); "1,024" is 1024 sequences
    assert call["arguments"]["scenario"] == {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 8, "seq_len": 4096,
                                             "global_batch": 1024}
    assert call["arguments"]["top_k"] == 2 and len(call["result"]["alternatives"]) == 1  # top_k 2 = best + 1


def test_a_tool_name_a_little_off_is_read_as_the_tool_it_names(api, service):
    api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("functions.RecommendPlans", json.dumps({"scenario": SCENARIO}))]), completion(DONE)])
    done, _ = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("recommend_plans", True)]


def test_an_unknown_tool_gets_one_clear_message_and_the_second_try_runs(api, service):
    route = api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("get_gpu_prices", json.dumps({"gpu": "h100"}))]),
        completion(calls=[("recommend_plans", json.dumps({"scenario": SCENARIO}))]),
        completion(DONE)])
    done, _ = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("get_gpu_prices", False), ("recommend_plans", True)]
    told = json.loads(sent(route, 1)[-1]["content"])
    assert told["fix"][0].startswith("there is no tool named 'get_gpu_prices'; call one of: recommend_plans")


def test_scenario_fields_at_the_top_level_are_nested_where_they_belong(api, service):
    flat = {**SCENARIO, "top_k": 1}
    api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("recommend_plans", json.dumps(flat)),
                          ("evaluate_plan", json.dumps({**SCENARIO, "tp": 2, "zero": 1}))]), completion(DONE)])
    done, _ = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("recommend_plans", True), ("evaluate_plan", True)]
    assert done.tool_calls[0]["arguments"] == {"scenario": SCENARIO, "top_k": 1}
    assert done.tool_calls[1]["arguments"] == {"scenario": SCENARIO, "plan": {"tp": 2, "zero": 1}}


def test_a_follow_up_that_leaves_out_the_scenario_uses_the_conversations(api, service):
    api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("recommend_plans", json.dumps({"scenario": SCENARIO}))]), completion(DONE),
        completion(calls=[("what_if", json.dumps({"gpu": "h200"})), ("evaluate_plan", json.dumps({"plan": {"tp": 8}}))]),
        completion("Done [R2] [R3].")])
    first, _ = ask(service, "Llama 3.1 8B on 8 H100s?")
    done, _ = ask(service, "what if H200s? and how does TP=8 do?", first.session_id)
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("what_if", True), ("evaluate_plan", True)]
    what_if, evaluate = (c["arguments"] for c in done.tool_calls)
    assert what_if == {"change": {"gpu": "h200"}, "scenario": SCENARIO}
    assert evaluate["scenario"] == SCENARIO  # both calls were written before the what-if ran


def test_a_later_call_that_leaves_out_the_scenario_uses_the_last_results(api, service):
    api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("what_if", json.dumps({"scenario": SCENARIO, "change": {"gpu": "h200"}}))]),
        completion(calls=[("estimate_memory", "{}")]), completion("Done [R2].")])
    done, _ = ask(service, "Llama 3.1 8B on 8 H100s: what if H200s, and the memory then?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("what_if", True), ("estimate_memory", True)]
    assert done.tool_calls[1]["arguments"]["scenario"] == {**SCENARIO, "gpu": "h200"}  # the what-if's `after`


def test_a_missing_field_that_cannot_be_inferred_gets_a_clear_message(api, service):
    route = api.post("/chat/completions").mock(side_effect=[
        completion(calls=[("compare_plans", json.dumps({"scenario": SCENARIO, "plan_a": {"tp": 8}}))]),
        completion(calls=[("compare_plans", json.dumps({"scenario": SCENARIO, "plan_a": {"tp": 8},
                                                        "plan_b": {"tp": 2}}))]),
        completion("TP=2 wins [R2].")])
    done, _ = ask(service, "TP=8 vs TP=2 for Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("compare_plans", False), ("compare_plans", True)]
    assert json.loads(sent(route, 1)[-1]["content"])["fix"] == ["plan_b: is required"]


def test_an_unreadable_call_in_the_text_gets_one_retry_message(api, service):
    broken = '```json\n{"name": "recommend_plans", "arguments": {"scenario": {"model": "llama-3.1-8b", "gpus": 8}\n```'
    route = api.post("/chat/completions").mock(side_effect=[
        completion(broken), completion(calls=[("recommend_plans", json.dumps({"scenario": SCENARIO}))]),
        completion(DONE)])
    done, shown = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("recommend_plans", True)]
    retry = sent(route, 1)[-1]
    assert retry["role"] == "user" and retry["content"].startswith("[shardwise] Your reply wrote a tool call as text")
    assert "JSON breaks at character" in retry["content"]
    assert "recommend_plans" not in shown  # the broken call was held back, never shown


def test_plain_json_that_is_not_a_call_is_an_answer(api, service):
    api.post("/chat/completions").mock(side_effect=[completion('{"note": "ask me about a model and GPUs"}')])
    done, _ = ask(service, "hello")
    assert done.tool_calls == [] and "ask me about a model" in done.answer


def test_a_streamed_tool_call_in_the_text_is_called_and_never_shown(api, tmp_path):
    """The same through a streaming endpoint: the JSON arrives in fragments and is held back, not shown."""
    config = AgentConfig(model="qwen2.5:7b", base_url=BASE, api_key="ollama", stream=True, fallback="none",
                         session_db=tmp_path / "s.sqlite3")
    service = ChatService(config, model=OpenAIChatModel(config), store=SessionStore(tmp_path / "s.sqlite3"))
    text = TEXT_CALLS["Hermes/Qwen tags"]
    pieces = [text[i:i + 7] for i in range(0, len(text), 7)]

    def sse(parts):
        chunks = [{"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "qwen2.5:7b",
                   "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in parts]
        body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())

    api.post("/chat/completions").mock(side_effect=[sse(pieces), sse([DONE[:5], DONE[5:]])])
    done, shown = ask(service, "Llama 3.1 8B on 8 H100s?")
    assert [(c["name"], c["ok"]) for c in done.tool_calls] == [("recommend_plans", True)]
    assert shown == DONE and done.answer == DONE
