"""A bounded pool for the CPU-bound work of the service: engine searches, tool calls, the offline planner.

An LLM-backed chat spends nearly all its time waiting on the network; that waiting happens on the
event loop and costs no thread. What is scarce is CPU: `workers` threads run engine work, and at
most `max_queue` jobs wait for one. `run()` is what the handlers await:

- a new request (`admit=True`) that finds the queue full, or that would not start within
  `max_wait_s`, gets `PoolBusy` — the handler answers 503 with `Retry-After`, never a hang;
- work for a chat already being answered (`admit=False`) joins the queue whatever its length and
  waits at most until that answer's deadline.

A job that gave up before it started is skipped when a thread reaches it; a job already running
finishes (engine calls are short and cannot be interrupted) and frees its thread.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, TypeVar

T = TypeVar("T")

# How the Retry-After estimate starts before any job has been timed: a recommend search on a
# catalog model takes ~50 ms once warm, the first one ~300 ms (tools/dispatch, measured on 2 cores).
INITIAL_JOB_S = 0.3
# Weight of the newest job in the running mean of job durations.
JOB_TIME_SMOOTHING = 0.2


class PoolBusy(Exception):
    """The pool cannot take this job soon enough; `retry_after_s` is the estimated wait."""

    def __init__(self, message: str, retry_after_s: int):
        super().__init__(message)
        self.retry_after_s = retry_after_s


class WorkPool:
    def __init__(self, workers: int, max_queue: int, max_wait_s: float):
        if workers < 1 or max_queue < 0 or max_wait_s <= 0:
            raise ValueError("a work pool needs workers >= 1, max_queue >= 0 and max_wait_s > 0")
        self.workers, self.max_queue, self.max_wait_s = workers, max_queue, max_wait_s
        self._executor = ThreadPoolExecutor(workers, thread_name_prefix="shardwise-work")
        self._lock = threading.Lock()
        self.queued = 0  # submitted, not started
        self.running = 0
        self.refused = 0  # PoolBusy raised, since start (for /api/health)
        self._job_s = INITIAL_JOB_S

    def retry_after_s(self) -> int:
        """Seconds until the current backlog has drained, by the running mean of job times (at least 1)."""
        backlog = self.queued + self.running
        return max(1, math.ceil(backlog * self._job_s / self.workers))

    def _busy(self, why: str) -> PoolBusy:
        with self._lock:
            self.refused += 1
        return PoolBusy(why, self.retry_after_s())

    def _full(self) -> bool:
        """Every thread busy and `max_queue` jobs waiting."""
        return self.queued + self.running >= self.workers + self.max_queue

    def check_admission(self) -> None:
        """PoolBusy if a new job would be refused now (queue full, or its wait past `max_wait_s`)."""
        if self._full():
            raise self._busy(f"{self.queued} engine jobs are already waiting (the limit is {self.max_queue})")
        if self.retry_after_s() > self.max_wait_s:
            raise self._busy(f"the engine's backlog would take about {self.retry_after_s()} s")

    async def run(self, fn: Callable[..., T], *args: Any, admit: bool = True, wait_s: float | None = None) -> T:
        """`fn(*args)` on a pool thread. `admit`: refuse at once when the queue is full. `wait_s`: the
        longest wait for a thread (default `max_wait_s`); past it, PoolBusy."""
        wait_s = self.max_wait_s if wait_s is None else wait_s
        with self._lock:
            full = admit and self._full()
            if not full:
                self.queued += 1
        if full:
            raise self._busy(f"{self.max_queue} engine jobs are already waiting (the limit)")
        loop = asyncio.get_running_loop()
        started = loop.create_future()
        state = {"phase": "queued"}  # queued -> running | abandoned

        def mark_started() -> None:
            if not started.done():
                started.set_result(None)

        def job() -> T | None:
            with self._lock:
                if state["phase"] == "abandoned":
                    return None
                state["phase"] = "running"
                self.queued -= 1
                self.running += 1
            try:
                loop.call_soon_threadsafe(mark_started)
            except RuntimeError:  # the event loop has closed (shutdown)
                pass
            began = time.monotonic()
            try:
                return fn(*args)
            finally:
                with self._lock:
                    self.running -= 1
                    self._job_s += JOB_TIME_SMOOTHING * (time.monotonic() - began - self._job_s)

        def abandon() -> bool:
            """True if the job had not started (and now never will)."""
            with self._lock:
                if state["phase"] != "queued":
                    return False
                state["phase"] = "abandoned"
                self.queued -= 1
                return True

        outcome = asyncio.wrap_future(self._executor.submit(job))
        try:
            await asyncio.wait_for(asyncio.shield(started), timeout=max(wait_s, 0.0))
        except TimeoutError:
            if abandon():
                outcome.cancel()
                raise self._busy(f"no engine thread became free within {wait_s:g} s") from None
        except BaseException:  # cancelled: the client left or the answer's deadline passed
            abandon()
            raise
        return await asyncio.shield(outcome)

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
