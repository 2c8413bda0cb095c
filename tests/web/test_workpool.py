"""The engine's worker pool: a short queue, a bounded wait, 503 + Retry-After instead of a hang."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.settings import Settings
from shardwise.web.workpool import PoolBusy, WorkPool


def blocker():
    """A job that holds its thread until `release` is set, and says when it started."""
    started, release = threading.Event(), threading.Event()

    def job():
        started.set()
        assert release.wait(10)
        return "blocked job done"
    return job, started, release


def test_a_full_queue_refuses_new_requests_at_once_but_queues_work_already_admitted():
    pool = WorkPool(workers=1, max_queue=1, max_wait_s=5)
    job, started, release = blocker()

    async def scenario():
        first = asyncio.ensure_future(pool.run(job))
        await asyncio.to_thread(started.wait, 5)
        queued = asyncio.ensure_future(pool.run(lambda: "queued"))
        await asyncio.sleep(0.05)
        assert (pool.running, pool.queued) == (1, 1)
        t0 = time.monotonic()
        with pytest.raises(PoolBusy) as refused:
            await pool.run(lambda: "refused")
        assert time.monotonic() - t0 < 0.5  # at once, not after a wait
        assert refused.value.retry_after_s >= 1
        in_chat = asyncio.ensure_future(pool.run(lambda: "in-chat", admit=False))  # an answer under way: queues
        release.set()
        return await first, await queued, await in_chat

    assert asyncio.run(scenario()) == ("blocked job done", "queued", "in-chat")
    assert (pool.running, pool.queued, pool.refused) == (0, 0, 1)


def test_work_for_an_answer_that_gets_no_thread_before_its_deadline_is_refused_and_never_runs():
    pool = WorkPool(workers=1, max_queue=4, max_wait_s=5)
    job, started, release = blocker()
    ran = threading.Event()

    async def scenario():
        first = asyncio.ensure_future(pool.run(job))
        await asyncio.to_thread(started.wait, 5)
        t0 = time.monotonic()
        with pytest.raises(PoolBusy, match="within 0.2 s"):
            await pool.run(ran.set, admit=False, wait_s=0.2)  # the answer's deadline is 0.2 s away
        waited = time.monotonic() - t0
        release.set()
        await first
        await asyncio.sleep(0.1)  # the abandoned job reaches the thread now, and is skipped
        return waited

    waited = asyncio.run(scenario())
    assert 0.2 <= waited < 1.0
    assert not ran.is_set() and pool.queued == 0 and pool.running == 0


def test_a_new_request_whose_estimated_wait_is_past_the_bound_is_refused_at_once():
    """Before any job is timed the pool assumes 0.3 s a job (INITIAL_JOB_S). One thread, busy; four jobs
    queued: a fifth place is 5 × 0.3 = 1.5 s from a thread, within a 1.6 s bound, so a reservation
    is granted and counts like a queued job. The next new job would wait 6 × 0.3 = 1.8 s: refused,
    with Retry-After the backlog's drain time, ceil(6 × 0.3 / 1) = 2 s."""
    from shardwise.web.workpool import INITIAL_JOB_S

    assert INITIAL_JOB_S == 0.3
    pool = WorkPool(workers=1, max_queue=100, max_wait_s=1.6)
    job, started, release = blocker()

    async def scenario():
        first = asyncio.ensure_future(pool.run(job))
        await asyncio.to_thread(started.wait, 5)
        queued = [asyncio.ensure_future(pool.run(lambda: None, admit=False)) for _ in range(4)]
        await asyncio.sleep(0.05)
        pool.reserve()  # an offline chat admitted a moment ago: its place counts
        with pytest.raises(PoolBusy, match="about 2 s") as refused:
            await pool.run(lambda: "late")
        with pytest.raises(PoolBusy):
            pool.reserve()
        assert refused.value.retry_after_s == 2
        pool.unreserve()
        release.set()
        await asyncio.gather(first, *queued)
        return await pool.run(lambda: "served once the backlog drained")

    assert asyncio.run(scenario()) == "served once the backlog drained"
    assert (pool.queued, pool.reserved, pool.running, pool.refused) == (0, 0, 0, 2)


def test_a_cancelled_waiter_leaves_no_queued_job_behind():
    pool = WorkPool(workers=1, max_queue=4, max_wait_s=5)
    job, started, release = blocker()
    ran = threading.Event()

    async def scenario():
        first = asyncio.ensure_future(pool.run(job))
        await asyncio.to_thread(started.wait, 5)
        waiter = asyncio.ensure_future(pool.run(ran.set))
        await asyncio.sleep(0.05)
        waiter.cancel()  # the client went away
        with pytest.raises(asyncio.CancelledError):
            await waiter
        release.set()
        await first
        await asyncio.sleep(0.1)

    asyncio.run(scenario())
    assert not ran.is_set() and (pool.queued, pool.running) == (0, 0)


def test_the_rest_api_answers_503_with_retry_after_when_the_pool_is_full():
    app = create_app(Settings(work_threads=1, work_queue=0))
    job, started, release = blocker()
    body = {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8, "top_k": 1}
    with TestClient(app) as client:
        pool = app.state.work_pool
        holder = threading.Thread(target=lambda: client.portal.call(pool.run, job))
        holder.start()
        try:
            assert started.wait(10)
            r = client.post("/api/recommend", json=body)
            assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1
            assert "busy" in r.json()["message"] and r.json()["errors"] == []
            page = client.get("/")  # the page itself needs no engine work: it still answers
            assert page.status_code == 200
            assert client.get("/api/health").json()["engine_pool"]["refused"] == 1
        finally:
            release.set()
            holder.join(10)
        assert client.post("/api/recommend", json=body).status_code == 200  # and serves again once free


def test_an_offline_chat_holds_its_place_from_admission_and_gives_it_back(tmp_path):
    """One thread (busy) and one place: the first offline-planner chat is admitted and waits; the
    second is refused with 503 + Retry-After; once the thread is free the first ends with `done`,
    nothing stays reserved, and the next chat is answered."""
    from shardwise.agent.config import AgentConfig
    from shardwise.agent.service import ChatService

    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))  # no LLM: the offline planner
    app = create_app(Settings(work_threads=1, work_queue=1, session_db=tmp_path / "s.db"), chat_service=service)
    job, started, release = blocker()
    question = {"message": "Llama-3.1-8B on 8 H100s, 4k context, 256 sequences per step"}
    with TestClient(app) as client:
        pool = app.state.work_pool
        holder = threading.Thread(target=lambda: client.portal.call(pool.run, job))
        holder.start()
        first: dict = {}
        asker = threading.Thread(target=lambda: first.update(r=client.post("/api/chat", json=question)))
        try:
            assert started.wait(10)
            asker.start()
            for _ in range(200):  # until the first chat holds its place
                if pool.reserved + pool.queued == 1:
                    break
                time.sleep(0.02)
            second = client.post("/api/chat", json=question)
            assert second.status_code == 503 and int(second.headers["retry-after"]) >= 1
            assert "engine jobs are already waiting" in second.json()["message"]
        finally:
            release.set()
            holder.join(10)
            asker.join(60)
        assert first["r"].status_code == 200 and "event: done" in first["r"].text
        assert (pool.reserved, pool.queued, pool.running) == (0, 0, 0)
        third = client.post("/api/chat", json=question)
        assert "event: done" in third.text and app.state.active_chats.count == 0
