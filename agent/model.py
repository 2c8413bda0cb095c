"""The chat-model interface the agent loop talks to.

One method: `stream(messages, tools, deadline)` yields TextDelta events while the model
writes and ends with exactly one ModelReply (the full text and any tool calls). Messages
and tool schemas are OpenAI chat-completions dicts, the lingua franca of every
OpenAI-compatible server. The OpenAI adapter (openai_model.py) and the scripted fake used
by tests and evals (scripted.py) implement it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterator, Protocol, Union


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # raw JSON text as the model wrote it; the dispatcher validates it


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ModelReply:
    text: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str = "stop"


ModelEvent = Union[TextDelta, ModelReply]


class ModelError(RuntimeError):
    """The model endpoint failed after retries (unreachable, timed out, refused)."""

    def __init__(self, message: str, *, kind: str = "unavailable"):
        super().__init__(message)
        self.kind = kind  # "unavailable" | "timeout" | "auth" | "bad_request" | "deadline"


class ChatModel(Protocol):
    name: str

    def stream(self, messages: list[dict], tools: list[dict], *, deadline: float) -> Iterator[ModelEvent]:
        """Yield TextDelta events, then one ModelReply. `deadline` is a time.monotonic() value."""
        ...


def assistant_message(reply: ModelReply) -> dict:
    """The reply as it goes back into the conversation."""
    message: dict = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in reply.tool_calls
        ]
    return message
