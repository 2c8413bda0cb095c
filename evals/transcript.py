"""What the evals read from an advisor: one reply per user turn, with the tool calls behind it.

The shape is the one `shardwise ask --json` prints: {answer, tool_calls: [{name, arguments,
result}]} (plus plan and configs, which the graders do not need). A *target* is anything that
opens conversations; a conversation answers a list of chat messages whose last one is the
user's new question — the offline planner, a scripted model replayed through the agent, a
live LLM, or a hand-written transcript in a test.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Protocol

from pydantic import BaseModel, ConfigDict, Field, field_validator


class ToolCallRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: Any = None
    errors: list[str] = Field(default_factory=list, description="why the tool did not run (bad arguments)")

    @field_validator("arguments", mode="before")
    @classmethod
    def _parse(cls, value):
        """A model writes arguments as JSON text; unreadable text is kept so graders can say so."""
        if isinstance(value, str):
            try:
                value = json.loads(value or "{}")
            except json.JSONDecodeError:
                return {"__unparsed__": value}
        return value if isinstance(value, dict) else {"__unparsed__": value}


class Reply(BaseModel):
    model_config = ConfigDict(frozen=True)

    answer: str
    tool_calls: list[ToolCallRecord] = Field(default_factory=list)
    plan: dict | None = None
    configs: dict[str, str] = Field(default_factory=dict)
    error: str | None = Field(default=None, description="the target failed to answer (endpoint down, crash)")


# One conversation: messages in ([{"role": "user"|"assistant", "content": str}, ...]), reply out.
Conversation = Callable[[list[dict]], Reply]


class Target(Protocol):
    """Something the evals can talk to. `start(case_id)` opens a fresh conversation (a new
    session, so scenarios never leak between cases)."""

    name: str

    def start(self, case_id: str) -> Conversation: ...

    def system_prompt(self) -> str:
        """The text the answer must never echo ('' when the target has none)."""
        ...


class TurnRecord(BaseModel):
    model_config = ConfigDict(frozen=True)

    user: str
    reply: Reply
    seconds: float = 0.0


def as_reply(obj: Reply | dict) -> Reply:
    return obj if isinstance(obj, Reply) else Reply.model_validate(obj)


__all__ = ["Conversation", "Reply", "Target", "ToolCallRecord", "TurnRecord", "as_reply"]

