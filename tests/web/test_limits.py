"""Per-client rate limit and request-size limit."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.limits import TokenBucket
from shardwise.web.settings import Settings


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_bucket_allows_a_burst_then_the_steady_rate():
    clock = Clock()
    bucket = TokenBucket(per_minute=60, burst=3, clock=clock)  # 1 request per second on average
    assert [bucket.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take("a") == pytest.approx(1.0)  # empty: the next token arrives in 1 s
    clock.now += 0.5
    assert bucket.take("a") == pytest.approx(0.5)
    clock.now += 0.5
    assert bucket.take("a") == 0.0
    assert bucket.take("b") == 0.0  # another client has its own bucket


def test_bucket_forgets_idle_clients(monkeypatch):
    import shardwise.web.limits as limits

    monkeypatch.setattr(limits, "CLIENT_TABLE_SWEEP_AT", 5)
    clock = Clock()
    bucket = TokenBucket(per_minute=60, burst=1, clock=clock)
    for i in range(5):
        bucket.take(f"c{i}")
    clock.now += limits.CLIENT_IDLE_FORGET_S + 1
    bucket.take("new")
    assert len(bucket) == 1


def test_api_answers_429_with_retry_after_but_the_page_still_loads(scripted_chat):
    app = create_app(Settings(rate_limit_per_minute=60, rate_limit_burst=2), chat_service=scripted_chat)
    client = TestClient(app)
    codes = [client.get("/api/health").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    r = client.get("/api/health")
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
    assert "too many requests" in r.json()["message"]
    assert client.get("/").status_code == 200  # the page and static files are not throttled


def test_body_over_the_limit_is_refused_before_parsing(scripted_chat):
    app = create_app(Settings(max_body_bytes=1024), chat_service=scripted_chat)
    client = TestClient(app)
    r = client.post("/api/evaluate", content=b"{" + b" " * 5000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "limit is 1 KiB" in r.json()["message"]


def test_body_without_length_is_counted_while_it_streams(scripted_chat):
    app = create_app(Settings(max_body_bytes=1024), chat_service=scripted_chat)
    client = TestClient(app)

    def chunks():
        for _ in range(10):
            yield b" " * 500

    r = client.post("/api/chat", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413
    assert "limit" in r.json()["message"]
    assert client.get("/api/health").status_code == 200
