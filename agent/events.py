"""What ChatService.stream yields: session, delta, tool, configs, done, error.

Each event is a frozen dataclass whose class attribute `event` is its wire name; the web
service sends `dataclasses.asdict(e)` as the SSE data under that name.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import ClassVar, Literal, Union

Mode = Literal["offline", "llm"]


@dataclass(frozen=True)
class SessionEvent:
    event: ClassVar[str] = "session"
    session_id: str
    mode: Mode
    model: str | None = None  # the LLM's name in llm mode; never the key or the endpoint's URL


@dataclass(frozen=True)
class DeltaEvent:
    event: ClassVar[str] = "delta"
    text: str


@dataclass(frozen=True)
class ToolEvent:
    event: ClassVar[str] = "tool"
    id: str  # the result id answers cite, e.g. "R3"
    name: str
    arguments: dict | str
    ok: bool
    summary: str
    errors: list[str] = field(default_factory=list)
    result: dict | None = None


@dataclass(frozen=True)
class ConfigsEvent:
    event: ClassVar[str] = "configs"
    configs: dict[str, str]  # format -> text, ready to paste
    plan: str  # the plan they configure, e.g. "TP=8 PP=2 DP=4 ZeRO-1 …"
    notes: dict[str, str] = field(default_factory=dict)  # format -> why it could not be exported
    filenames: dict[str, str] = field(default_factory=dict)  # format -> suggested file name


@dataclass(frozen=True)
class DoneEvent:
    event: ClassVar[str] = "done"
    session_id: str
    answer: str
    mode: Mode
    tool_calls: list[dict] = field(default_factory=list)  # [{id, name, arguments, ok, result, errors}]
    plan: dict | None = None  # the answer's plan as `evaluate --json` prints it
    configs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorEvent:
    event: ClassVar[str] = "error"
    message: str
    kind: str = "input"  # input | unavailable | timeout | auth | bad_request | deadline | internal
    # When the LLM failed: the offline planner's answer to the same question
    # ({answer, mode: "offline", tool_calls, plan, configs}), or None.
    offline: dict | None = None


Event = Union[SessionEvent, DeltaEvent, ToolEvent, ConfigsEvent, DoneEvent, ErrorEvent]


def to_wire(event: Event) -> tuple[str, dict]:
    return event.event, asdict(event)
