"""Server-sent events for /api/chat, streamed without blocking other requests.

The agent's `astream` is consumed on the event loop itself: an answer waiting on the LLM costs a
coroutine, not a thread (its engine work goes to the worker pool). A synchronous chat service
runs in its own thread and hands events over through a queue. Either way the response watches the
connection: when the client goes away (or the deadline passes) it stops asking for events and
closes the agent's generator so its `finally` blocks release what they hold (LLM streams, SQLite
handles). `ActiveStreams` counts open answers so tests can check nothing is left behind.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from typing import Any, AsyncIterator, Callable, Iterator

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
    """An ASGI response streaming `events()` as SSE; the caller has already taken a slot in `active`.

    `events()` returns an async iterator (the agent's `astream`: consumed on the event loop, the slot
    freed once it is closed) or a plain one (a synchronous chat service: run in its own thread, the
    slot freed when that thread ends)."""

    media_type = "text/event-stream"
    charset = "utf-8"

    def __init__(self, events: Callable[[], Iterator[Event] | AsyncIterator[Event]], active: ActiveStreams,
                 deadline_s: float, on_error: Callable[[BaseException], dict[str, Any]],
                 on_close: Callable[[], None] | None = None):
        self.events, self.active, self.deadline_s, self.on_error = events, active, deadline_s, on_error
        self.on_close = on_close  # runs once the response is over, however it ended
        self.status_code, self.background = 200, None
        self.init_headers({"cache-control": "no-cache", "x-accel-buffering": "no"})

    async def __call__(self, scope, receive, send) -> None:
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self.raw_headers})
        except BaseException:
            self.active.release()  # nothing was started for this slot
            if self.on_close is not None:
                self.on_close()
            raise
        self._stop = threading.Event()
        source, owns_slot = self._source()
        watcher = asyncio.ensure_future(_wait_for_disconnect(receive))
        deadline = time.monotonic() + self.deadline_s
        step: asyncio.Future | None = None
        try:
            while True:
                step = asyncio.ensure_future(source.__anext__())
                while True:  # one event: keep-alives while the agent works, until the client leaves or time is up
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        break
                    done, _ = await asyncio.wait({step, watcher}, timeout=min(HEARTBEAT_S, remaining),
                                                 return_when=asyncio.FIRST_COMPLETED)
                    if watcher in done or step in done:
                        break
                    await send(_body(b": keep-alive\n\n"))
                if watcher.done():
                    return  # client gone: nothing more to send
                if not step.done():
                    await send(_body(format_event("error", {
                        "message": f"the answer took longer than {self.deadline_s:g} s and was stopped",
                        "kind": "deadline"})))
                    break
                try:
                    name, data = step.result()
                except StopAsyncIteration:
                    break
                except Exception as exc:  # noqa: BLE001 - reported to the client as an error event
                    log.exception("chat stream failed")
                    await send(_body(format_event("error", self.on_error(exc))))
                    break
                finally:
                    step = None
                await send(_body(format_event(name, data)))
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the connection broke while we wrote to it
            pass
        finally:
            watcher.cancel()
            self._stop.set()  # a producer thread stops even if its reader never started
            await _close(step, source)
            if owns_slot:
                self.active.release()
            if self.on_close is not None:
                self.on_close()

    def _source(self) -> tuple[AsyncIterator[Event], bool]:
        """(the events as an async iterator, whether this response frees the slot at the end)."""
        try:
            events = self.events()
        except BaseException:
            self.active.release()
            raise
        if hasattr(events, "__anext__"):
            return events, True
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        threading.Thread(target=self._produce, args=(events, loop, queue, self._stop), name="shardwise-chat",
                         daemon=True).start()
        return self._from_thread(queue), False

    async def _from_thread(self, queue: asyncio.Queue) -> AsyncIterator[Event]:
        """The producer thread's events (a blocking iterator advanced there, handed over through `queue`).
        The stop flag, set when the response ends, makes the thread finish its step, ask for nothing
        more and close the iterator."""
        try:
            while True:
                kind, payload = await queue.get()
                if kind == "end":
                    return
                if kind == "crash":
                    raise payload if isinstance(payload, Exception) else RuntimeError(repr(payload))
                yield payload
        finally:
            self._stop.set()

    def _produce(self, iterator: Iterator[Event], loop: asyncio.AbstractEventLoop, queue: asyncio.Queue,
                 stop: threading.Event) -> None:
        def put(item) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # the event loop has closed (server shutting down)
                pass

        try:
            while not stop.is_set():
                try:
                    event = next(iterator)
                except StopIteration:
                    break
                put(("event", event))
        except BaseException as exc:  # noqa: BLE001 - reported to the client as an error event
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


async def _close(step: asyncio.Future | None, source: AsyncIterator) -> None:
    """Stop a pending step and close the source, so the agent's `finally` blocks run now."""
    if step is not None and not step.done():
        step.cancel()
        try:
            await step
        except BaseException:  # noqa: BLE001 - cancelled, or whatever it raised on the way out
            pass
    try:
        await source.aclose()
    except Exception:  # noqa: BLE001
        log.exception("closing the chat stream failed")


def _body(chunk: bytes) -> dict:
    return {"type": "http.response.body", "body": chunk, "more_body": True}


async def _wait_for_disconnect(receive) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
