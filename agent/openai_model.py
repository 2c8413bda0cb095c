"""ChatModel over the `openai` package's chat-completions API with tools.

Works with OpenAI and any OpenAI-compatible server (vLLM, Ollama, llama.cpp server,
LM Studio, Azure's v1 endpoint). Retries are ours, not the client's (max_retries=0 on the
client), so they respect the answer's wall-clock deadline and never replay a stream
that has already shown text to the user.
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

import httpx
import openai

from .config import AgentConfig
from .model import ModelError, ModelEvent, ModelReply, TextDelta, ToolCall

RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError,
             openai.APIConnectionError, openai.ConflictError,
             httpx.TimeoutException, httpx.TransportError)  # the last two: raised mid-stream, unwrapped
BACKOFF_BASE_S = 0.5  # first retry after 0.5 s, doubling (the openai client's own schedule)
BACKOFF_MAX_S = 8.0  # and never longer, even when Retry-After asks for more
SERVER_MESSAGE_CHARS = 300  # how much of an endpoint's error text we pass on


class OpenAIChatModel:
    def __init__(self, config: AgentConfig, *, client: openai.OpenAI | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        if not config.model:
            raise ValueError("OpenAIChatModel needs config.model")
        self.name = config.model
        self.config = config
        self._sleep = sleep
        self._client = client or openai.OpenAI(
            base_url=config.base_url, api_key=config.key(), max_retries=0,
            timeout=httpx.Timeout(config.request_timeout_s, connect=config.connect_timeout_s),
        )

    # -- the ChatModel method ------------------------------------------------------------
    def stream(self, messages: list[dict], tools: list[dict], *, deadline: float) -> Iterator[ModelEvent]:
        attempt = 0
        while True:
            shown_text = False
            try:
                once = self._stream_once if self.config.stream else self._complete_once
                for event in once(messages, tools, deadline):
                    if isinstance(event, TextDelta):
                        shown_text = True
                    yield event
                return
            except RETRYABLE as exc:
                if shown_text or attempt >= self.config.max_retries:
                    raise self._as_model_error(exc, attempt) from None
                delay = self._delay(exc, attempt)
                if time.monotonic() + delay >= deadline:
                    raise ModelError("the LLM endpoint kept failing and the answer's time limit ran out",
                                     kind="deadline") from None
                self._sleep(delay)
                attempt += 1
            except openai.OpenAIError as exc:
                raise self._as_model_error(exc, attempt) from None

    # -- one request ---------------------------------------------------------------------
    def _request_kwargs(self, messages: list[dict], tools: list[dict], deadline: float, stream: bool) -> dict:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ModelError("the answer's time limit ran out before the model replied", kind="deadline")
        kwargs: dict = {"model": self.name, "messages": messages, "stream": stream,
                        "timeout": httpx.Timeout(min(self.config.request_timeout_s, remaining),
                                                 connect=min(self.config.connect_timeout_s, remaining))}
        if tools:
            kwargs["tools"] = tools
        if self.config.temperature is not None:
            kwargs["temperature"] = self.config.temperature
        return kwargs

    def _request(self, messages: list[dict], tools: list[dict], deadline: float, stream: bool):
        return self._client.chat.completions.create(**self._request_kwargs(messages, tools, deadline, stream))

    def _complete_once(self, messages, tools, deadline) -> Iterator[ModelEvent]:
        yield from completion_events(self._request(messages, tools, deadline, stream=False))

    def _stream_once(self, messages, tools, deadline) -> Iterator[ModelEvent]:
        stream = self._request(messages, tools, deadline, stream=True)
        assembler = ReplyAssembler()
        with stream:
            for chunk in stream:
                if time.monotonic() > deadline:
                    raise ModelError("the answer's time limit ran out while the model was writing", kind="deadline")
                text = assembler.feed(chunk)
                if text:
                    yield TextDelta(text)
        yield assembler.reply()

    # -- errors --------------------------------------------------------------------------
    @staticmethod
    def _delay(exc: Exception, attempt: int) -> float:
        delay = BACKOFF_BASE_S * 2**attempt
        response = getattr(exc, "response", None)
        if response is not None:
            headers = response.headers
            try:
                if "retry-after-ms" in headers:
                    delay = float(headers["retry-after-ms"]) / 1000
                elif "retry-after" in headers:
                    delay = float(headers["retry-after"])
            except ValueError:
                pass  # an HTTP date or garbage: keep the exponential schedule
        return max(0.0, min(delay, BACKOFF_MAX_S))

    def _as_model_error(self, exc: Exception, attempt: int) -> ModelError:
        where = self.config.base_url or "the OpenAI API"
        tries = f" after {attempt + 1} attempts" if attempt else ""
        if isinstance(exc, (openai.APITimeoutError, httpx.TimeoutException)):
            return ModelError(f"the LLM endpoint ({where}) did not answer within "
                              f"{self.config.request_timeout_s:g} s{tries}", kind="timeout")
        if isinstance(exc, (openai.APIConnectionError, httpx.TransportError)):
            return ModelError(f"cannot reach the LLM endpoint ({where}){tries}; check OPENAI_BASE_URL",
                              kind="unavailable")
        if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return ModelError(f"the LLM endpoint ({where}) refused the API key "
                              f"(HTTP {exc.status_code}); check OPENAI_API_KEY", kind="auth")
        if isinstance(exc, openai.APIStatusError):
            detail = _server_message(exc)
            kind = "unavailable" if exc.status_code == 429 or exc.status_code >= 500 else "bad_request"
            return ModelError(f"the LLM endpoint ({where}) answered HTTP {exc.status_code}{tries}: {detail}",
                              kind=kind)
        return ModelError(f"the LLM endpoint ({where}) failed: {type(exc).__name__}", kind="unavailable")


def _server_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    if not message and isinstance(body, dict) and isinstance(body.get("error"), dict):
        message = body["error"].get("message")
    text = str(message or exc.message or "")
    return text[:SERVER_MESSAGE_CHARS]


def completion_events(response) -> Iterator[ModelEvent]:
    """A non-streamed chat completion as events: its text (if any), then the reply."""
    if not response.choices:
        raise ModelError("the LLM endpoint returned no choices", kind="bad_request")
    choice = response.choices[0]
    calls = [ToolCall(id=c.id or f"call_{i}", name=c.function.name, arguments=c.function.arguments or "")
             for i, c in enumerate(choice.message.tool_calls or []) if getattr(c, "function", None)]
    text = choice.message.content or ""
    if text:
        yield TextDelta(text)
    yield ModelReply(text=text, tool_calls=calls, finish_reason=choice.finish_reason or "stop")


class ReplyAssembler:
    """Streamed chunks -> the reply: text as it comes, tool calls from their fragments (keyed by index)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.slots: dict[int, dict] = {}
        self.finish = "stop"

    def feed(self, chunk) -> str:
        """Take one chunk; return the text it adds ("" if none)."""
        if not chunk.choices:
            return ""
        choice = chunk.choices[0]
        delta = choice.delta
        added = ""
        if delta is not None and delta.content:
            added = delta.content
            self.text.append(added)
        for position, fragment in enumerate((delta.tool_calls if delta is not None else None) or []):
            index = fragment.index if fragment.index is not None else position
            slot = self.slots.setdefault(index, {"id": "", "name": "", "arguments": ""})
            if fragment.id:
                slot["id"] = fragment.id
            if fragment.function is not None:
                slot["name"] += fragment.function.name or ""
                slot["arguments"] += fragment.function.arguments or ""
        if choice.finish_reason:
            self.finish = choice.finish_reason
        return added

    def reply(self) -> ModelReply:
        calls = [ToolCall(id=s["id"] or f"call_{i}", name=s["name"], arguments=s["arguments"])
                 for i, s in sorted(self.slots.items())]
        return ModelReply(text="".join(self.text), tool_calls=calls, finish_reason=self.finish)
