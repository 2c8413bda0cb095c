"""Server-sent events for /api/chat: the agent's blocking event iterator, streamed without blocking others.

The iterator runs in its own thread and hands events to the response through a queue. The
response watches the connection: when the client goes away (or the deadline passes) it sets a
stop flag, the thread finishes the step it is in, does not ask the agent for another event, and
closes the agent's generator so its `finally` blocks release what they hold (LLM streams,
SQLite handles). `ActiveStreams` counts running threads so tests can check nothing is left behind.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from typing import Any, Callable, Iterator

from starlette.responses import Response

log = logging.getLogger("shardwise.web")

# A comment line every few seconds keeps proxies from closing an idle stream while the agent thinks,
# and makes a vanished client visible (the write fails).
HEARTBEAT_S = 10.0

Event = tuple[str, dict[str, Any]]


def format_event(name: str, data: dict[str, Any]) -> bytes:
    """One SSE frame. JSON never contains a raw newline, so `data:` stays one line."""
    return f"event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


class ActiveStreams:
    """Chat threads currently running in this process, bounded by `limit`."""

    def __init__(self, limit: int):
        self.limit = limit
        self._count = 0
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)

    def try_acquire(self) -> bool:
        with self._lock:
            if self._count >= self.limit:
                return False
            self._count += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._count -= 1
            self._idle.notify_all()

    @property
    def count(self) -> int:
        return self._count

    def wait_idle(self, timeout: float) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._count == 0, timeout=timeout)


class EventStreamResponse(Response):
    """An ASGI response streaming `events()` as SSE. `events` is called in the worker thread; the
    caller has already taken a slot in `active`, which is released when the thread ends."""

    media_type = "text/event-stream"
    charset = "utf-8"

    def __init__(self, events: Callable[[], Iterator[Event]], active: ActiveStreams, deadline_s: float,
                 on_error: Callable[[BaseException], dict[str, Any]]):
        self.events, self.active, self.deadline_s, self.on_error = events, active, deadline_s, on_error
        self.status_code, self.background = 200, None
        self.init_headers({"cache-control": "no-cache", "x-accel-buffering": "no"})

    async def __call__(self, scope, receive, send) -> None:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        stop = threading.Event()
        thread = threading.Thread(target=self._produce, args=(loop, queue, stop), name="shardwise-chat", daemon=True)
        await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        thread.start()
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        deadline = time.monotonic() + self.deadline_s
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    await send(_body(format_event("error", {
                        "message": f"the answer took longer than {self.deadline_s:g} s and was stopped",
                        "kind": "deadline"})))
                    break
                getter = asyncio.ensure_future(queue.get())
                done, _ = await asyncio.wait({getter, watcher}, timeout=min(HEARTBEAT_S, remaining),
                                             return_when=asyncio.FIRST_COMPLETED)
                if watcher in done:
                    getter.cancel()
                    return  # client gone: nothing more to send
                if getter not in done:
                    getter.cancel()
                    await send(_body(b": keep-alive\n\n"))
                    continue
                kind, payload = getter.result()
                if kind == "end":
                    break
                if kind == "crash":
                    await send(_body(format_event("error", self.on_error(payload))))
                    break
                await send(_body(format_event(*payload)))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the connection broke while we wrote to it
            pass
        finally:
            stop.set()
            watcher.cancel()

    def _produce(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue, stop: threading.Event) -> None:
        def put(item) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop has closed (server shutting down)
                pass

        iterator = None
        try:
            iterator = self.events()
            while not stop.is_set():
                try:
                    event = next(iterator)
                except StopIteration:
                    break
                put(("event", event))
        except BaseException as exc:  # noqa: BLE001 - reported to the client as an error event
            if not stop.is_set():
                log.exception("chat stream failed")
            put(("crash", exc))
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                try:
                    close()
                except Exception:  # noqa: BLE001
                    log.exception("closing the chat stream failed")
            self.active.release()
            put(("end", None))


def _body(chunk: bytes) -> dict:
    return {"type": "http.response.body", "body": chunk, "more_body": True}


async def _wait_for_disconnect(receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
