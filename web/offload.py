"""The agent's blocking work, placed for a server: engine work in the worker pool, store I/O in a thread."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, TypeVar

from ..agent.model import ModelError
from .workpool import PoolBusy, WorkPool

T = TypeVar("T")


class PoolOffload:
    """Work for an answer already under way waits for a pool thread, at most until its deadline.
    `reserved`: the answer was admitted with `pool.reserve()`; its first job takes that place, and
    `release()` gives it back if no job came."""

    def __init__(self, pool: WorkPool, reserved: bool = False):
        self.pool = pool
        self._reserved = reserved

    async def cpu(self, fn: Callable[..., T], *args: Any, deadline: float | None = None) -> T:
        wait_s = None if deadline is None else max(0.0, deadline - time.monotonic())
        reserved, self._reserved = self._reserved, False
        try:
            return await self.pool.run(fn, *args, admit=False, wait_s=wait_s, reserved=reserved)
        except PoolBusy as exc:
            raise ModelError(f"the server was too busy to run the engine before the answer's time limit ({exc})",
                             kind="deadline") from None

    async def io(self, fn: Callable[..., T], *args: Any) -> T:
        # Session reads and writes take milliseconds; SQLite's busy timeout bounds a contended write.
        return await asyncio.to_thread(fn, *args)

    def release(self) -> None:
        """The answer is over: a place still held for it goes back to the pool."""
        if self._reserved:
            self._reserved = False
            self.pool.unreserve()
