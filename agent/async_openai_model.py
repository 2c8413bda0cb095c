"""The OpenAI adapter for an event loop: `openai.AsyncOpenAI`, and a cap on requests in flight.

Same requests, retries and error messages as `OpenAIChatModel` (whose helpers it borrows), but the
wait for the endpoint costs no thread, so one server process can hold a hundred answers that are
waiting on a slow LLM. `LLMSlots` keeps at most `llm_max_concurrency` requests (SHARDWISE_LLM_MAX_CONCURRENCY)
open to the endpoint from this process at once, so a busy server cannot flood a provider's rate
limit; the others wait in line (first come, first served) until a slot frees or their answer's
deadline passes.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable

import httpx
import openai

from .config import AgentConfig
from .model import ModelError, ModelEvent, TextDelta
from .openai_model import RETRYABLE, OpenAIChatModel, ReplyAssembler, completion_events


class LLMSlots:
    """At most `limit` requests at once in this process; each event loop gets its own semaphore."""

    def __init__(self, limit: int):
        self.limit = limit
        self.waiting = 0
        self.in_use = 0
        self._semaphores: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.limit)
        return semaphore

    @asynccontextmanager
    async def slot(self, deadline: float) -> AsyncIterator[None]:
        semaphore = self._semaphore()
        self.waiting += 1
        try:
            await asyncio.wait_for(semaphore.acquire(), timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise ModelError(f"all {self.limit} LLM request slots of this server stayed busy until the answer's "
                             "time limit (SHARDWISE_LLM_MAX_CONCURRENCY)", kind="deadline") from None
        finally:
            self.waiting -= 1
        self.in_use += 1
        try:
            yield
        finally:
            self.in_use -= 1
            semaphore.release()


class AsyncOpenAIChatModel:
    def __init__(self, config: AgentConfig, *, client: openai.AsyncOpenAI | None = None,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        if not config.model:
            raise ValueError("AsyncOpenAIChatModel needs config.model")
        self.name = config.model
        self.config = config
        self.slots = LLMSlots(config.llm_max_concurrency)
        self._sleep = sleep
        self._client = client
        self._clients: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # one per event loop

    # the request, the backoff schedule and the error messages are the synchronous adapter's
    _request_kwargs = OpenAIChatModel._request_kwargs
    _delay = staticmethod(OpenAIChatModel._delay)
    _as_model_error = OpenAIChatModel._as_model_error

    def client(self) -> openai.AsyncOpenAI:
        if self._client is not None:
            return self._client
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = self._clients[loop] = openai.AsyncOpenAI(
                base_url=self.config.base_url, api_key=self.config.key(), max_retries=0,
                timeout=httpx.Timeout(self.config.request_timeout_s, connect=self.config.connect_timeout_s))
        return client

    async def astream(self, messages: list[dict], tools: list[dict], *, deadline: float) -> AsyncIterator[ModelEvent]:
        """TextDelta events, then one ModelReply; retries on 429, 5xx, timeouts and dropped connections
        (with backoff, within the deadline, never after text was shown)."""
        attempt = 0
        while True:
            shown_text = False
            try:
                async with self.slots.slot(deadline):
                    once = self._stream_once if self.config.stream else self._complete_once
                    async for event in once(messages, tools, deadline):
                        if isinstance(event, TextDelta):
                            shown_text = True
                        yield event
                return
            except RETRYABLE as exc:
                if shown_text or attempt >= self.config.max_retries:
                    raise self._as_model_error(exc, attempt) from None
                delay = self._delay(exc, attempt)
                if time.monotonic() + delay >= deadline:
                    raise ModelError(f"{self._as_model_error(exc, attempt)}; retrying would pass the answer's "
                                     "time limit", kind="deadline") from None
                await self._sleep(delay)
                attempt += 1
            except openai.OpenAIError as exc:
                raise self._as_model_error(exc, attempt) from None

    async def _request(self, messages, tools, deadline, stream: bool):
        return await self.client().chat.completions.create(**self._request_kwargs(messages, tools, deadline, stream))

    async def _complete_once(self, messages, tools, deadline) -> AsyncIterator[ModelEvent]:
        for event in completion_events(await self._request(messages, tools, deadline, stream=False)):
            yield event

    async def _stream_once(self, messages, tools, deadline) -> AsyncIterator[ModelEvent]:
        stream = await self._request(messages, tools, deadline, stream=True)
        assembler = ReplyAssembler()
        async with stream:
            async for chunk in stream:
                if time.monotonic() > deadline:
                    raise ModelError("the answer's time limit ran out while the model was writing", kind="deadline")
                text = assembler.feed(chunk)
                if text:
                    yield TextDelta(text)
        yield assembler.reply()
