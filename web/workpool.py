"""A bounded pool for the CPU-bound work of the service: engine searches, tool calls, the offline planner.

An LLM-backed chat spends nearly all its time waiting on the network; that waiting happens on the
event loop and costs no thread. What is scarce is CPU: `workers` threads run engine work, and the
jobs waiting for them are bounded in time and in number. `run()` is what the handlers await:

- a new request (`admit=True`) is refused with `PoolBusy` — the handler answers 503 with
  `Retry-After`, never a hang — when its job would wait longer than `max_wait_s` by the running
  estimate (jobs ahead × mean job time ÷ threads), when `max_queue` jobs already wait, or when it
  does not get a thread within `max_wait_s` after all;
- an answer admitted ahead of its engine work (an offline-planner chat) holds a place in the queue
  from admission (`reserve()`), so a burst of such chats cannot all pass the check before any of
  them is queued;
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
        self.reserved = 0  # places held for admitted answers whose engine work has not been submitted yet
        self.running = 0
        self.refused = 0  # PoolBusy raised, since start (for /api/health)
        self._job_s = INITIAL_JOB_S

    def _wait_estimate_s(self, backlog: int) -> float:
        """How long a new job waits for a thread behind `backlog` jobs (running, queued or reserved)."""
        ahead = backlog - self.workers + 1
        return max(0, ahead) * self._job_s / self.workers

    def retry_after_s(self) -> int:
        """Seconds until the current backlog has drained, by the running mean of job times (at least 1)."""
        backlog = self.queued + self.reserved + self.running
        return max(1, math.ceil(backlog * self._job_s / self.workers))

    def _refusal(self) -> str | None:
        """Why a new job would be refused now, or None (the caller holds the lock)."""
        backlog = self.queued + self.reserved + self.running
        if backlog >= self.workers + self.max_queue:
            return f"{backlog - self.running} engine jobs are already waiting (the limit is {self.max_queue})"
        wait = self._wait_estimate_s(backlog)
        if wait > self.max_wait_s:
            return f"the engine's backlog would take about {wait:.0f} s (the limit is {self.max_wait_s:g} s)"
        return None

    def _busy(self, why: str) -> PoolBusy:
        with self._lock:
            self.refused += 1
        return PoolBusy(why, self.retry_after_s())

    def reserve(self) -> None:
        """Hold a place in the queue for a job that will come (PoolBusy if a new job would be refused now).
        The place is given back by `run(..., reserved=True)` or `unreserve()`."""
        with self._lock:
            why = self._refusal()
            if why is None:
                self.reserved += 1
        if why is not None:
            raise self._busy(why)

    def unreserve(self) -> None:
        with self._lock:
            self.reserved = max(0, self.reserved - 1)

    async def run(self, fn: Callable[..., T], *args: Any, admit: bool = True, wait_s: float | None = None,
                  reserved: bool = False) -> T:
        """`fn(*args)` on a pool thread. `admit`: refuse at once when a new job would be refused.
        `wait_s`: the longest wait for a thread (default `max_wait_s`); past it, PoolBusy.
        `reserved`: this job takes the place `reserve()` held (no second admission check)."""
        wait_s = self.max_wait_s if wait_s is None else wait_s
        with self._lock:
            why = self._refusal() if admit and not reserved else None
            if why is None:
                if reserved:
                    self.reserved = max(0, self.reserved - 1)
                self.queued += 1
        if why is not None:
            raise self._busy(why)
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
