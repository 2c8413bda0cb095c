"""POST /api/chat: the event stream, errors as events, and what happens when the client goes away."""

from __future__ import annotations

import json
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings


def events(text: str) -> list[tuple[str, dict]]:
    """Parse an SSE body into (event, data) pairs (comments and keep-alives skipped)."""
    out = []
    for frame in text.strip().split("\n\n"):
        name, data = None, ""
        for line in frame.splitlines():
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        if name:
            out.append((name, json.loads(data)))
    return out


def test_stream_carries_the_agents_events_in_order(scripted_chat):
    client = TestClient(create_app(Settings(), chat_service=scripted_chat))
    r = client.post("/api/chat", json={"message": "70B on 64 H100s", "session_id": None})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    got = events(r.text)
    assert [name for name, _ in got] == ["session", "tool", "delta", "delta", "configs", "done"]
    assert got[1][1] == {"name": "recommend_plans", "arguments": {"gpus": 8}, "summary": "best of 12 plans"}
    assert got[4][1]["configs"]["deepspeed"] == '{"train_batch_size": 8}'
    assert scripted_chat.calls == [("70B on 64 H100s", None)]


def test_done_carries_the_answer_as_sanitised_html():
    from shardwise.web.chat import wire_events

    class Chat:
        def stream(self, message, session_id):
            yield ("delta", {"text": "**bold** <script>alert(1)</script>"})
            yield ("done", {})

    done = list(wire_events(Chat(), "hi", None))[-1]
    assert done[0] == "done"
    assert done[1]["html"] == "<p><strong>bold</strong> &lt;script&gt;alert(1)&lt;/script&gt;</p>\n"


def test_a_failing_agent_ends_with_an_error_event_that_reveals_nothing():
    class Broken:
        def stream(self, message, session_id):
            yield ("session", {"session_id": "s-x"})
            raise RuntimeError("database at /secret/path, key sk-live-123 exploded")

    client = TestClient(create_app(Settings(), chat_service=Broken()))
    got = events(client.post("/api/chat", json={"message": "hi"}).text)
    assert got[0][0] == "session" and got[-1][0] == "error"
    assert got[-1][1]["kind"] == "internal"
    assert "sk-live" not in json.dumps(got) and "/secret" not in json.dumps(got)
    assert client.app.state.active_chats.count == 0


@pytest.mark.parametrize("body,status,words", [
    ({"message": "x" * 9000}, 413, "limit"),
    ({"message": "   "}, 422, "empty"),
    ({"message": ""}, 422, "message"),
    ({"message": "hi", "session_id": "../etc/passwd"}, 422, "session_id"),
    ({"message": "hi", "sessionid": "a"}, 422, "sessionid: unknown field"),
    ({"text": "hi"}, 422, "message: required"),
])
def test_bad_chat_requests_get_a_precise_error(scripted_chat, body, status, words):
    client = TestClient(create_app(Settings(max_message_chars=8000), chat_service=scripted_chat))
    r = client.post("/api/chat", json=body)
    assert r.status_code == status
    assert words in r.json()["message"]
    assert scripted_chat.calls == []


def test_busy_server_answers_503_instead_of_queueing(scripted_chat):
    app = create_app(Settings(), chat_service=scripted_chat)
    app.state.active_chats.limit = 1
    assert app.state.active_chats.try_acquire()
    r = TestClient(app).post("/api/chat", json={"message": "hi"})
    assert r.status_code == 503 and "retry" in r.json()["message"]
    app.state.active_chats.release()


def test_deadline_stops_a_long_answer(slow_chat):
    client = TestClient(create_app(Settings(chat_deadline_s=0.3), chat_service=slow_chat))
    got = events(client.post("/api/chat", json={"message": "hi"}).text)
    assert got[-1][0] == "error" and got[-1][1]["kind"] == "deadline"
    assert slow_chat.closed.wait(5)
    assert client.app.state.active_chats.wait_idle(5)


def test_closing_the_connection_mid_answer_stops_the_agent_and_frees_its_slot(serve, slow_chat):
    app = create_app(Settings(), chat_service=slow_chat)
    with serve(app) as base:
        with httpx.Client(base_url=base, timeout=10) as client:
            with client.stream("POST", "/api/chat", json={"message": "hi"}) as r:
                assert r.status_code == 200
                for line in r.iter_lines():
                    if line.startswith("event: delta"):
                        break  # one piece of the answer, then hang up
            assert slow_chat.closed.wait(5), "the agent's generator was not closed after the client left"
            produced = slow_chat.produced
            time.sleep(0.3)
            assert slow_chat.produced <= produced + 1, "the agent kept working for a client that left"
            assert app.state.active_chats.wait_idle(5)
            health = client.get("/api/health").json()
            assert health["active_chats"] == 0
            assert produced < slow_chat.steps
