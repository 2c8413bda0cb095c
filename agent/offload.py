"""Where a chat turn's blocking work runs: `cpu` for engine work (tool calls, the offline planner),
`io` for session-store reads and writes.

`ChatService.stream` (the CLI) runs both inline. The web service passes its own: engine work goes
to its bounded worker pool, store calls to a thread, so the event loop keeps streaming other
answers while one of them computes.
"""

from __future__ import annotations

from typing import Any, Callable, Protocol, TypeVar

T = TypeVar("T")


class Offload(Protocol):
    async def cpu(self, fn: Callable[..., T], *args: Any, deadline: float | None = None) -> T:
        """`fn(*args)`, waiting for a worker at most until `deadline` (a time.monotonic() value)."""
        ...

    async def io(self, fn: Callable[..., T], *args: Any) -> T: ...


class Inline:
    """Run everything where it is called (synchronous callers; tests)."""

    async def cpu(self, fn: Callable[..., T], *args: Any, deadline: float | None = None) -> T:
        return fn(*args)

    async def io(self, fn: Callable[..., T], *args: Any) -> T:
        return fn(*args)


INLINE = Inline()
