"""The LLM agent loop: the model calls tools until it answers, within limits.

- Parallel tool calls: every call of a reply is dispatched (in order) before the model
  speaks again.
- Turn limit: at most `max_tool_rounds` replies may call tools; then the model gets one
  last request without tools and must answer with what it has.
- Deadline: a wall-clock limit for the whole answer, passed down to every request.
- Numbers without tools: while no tool has run in this turn, the reply's text is held
  back; if it states quantities that no tool result in the conversation backs, the model
  is asked once more to use the tools. Once tools have run, text streams as it comes.
- Everything shown passes through the LeakGuard (key, system prompt).

The loop is one async generator, `arun_llm_turn`: the web service awaits the model's network
replies on its event loop and hands tool calls to its worker pool (`dispatch` and `reserve_ids`
may return awaitables). `run_llm_turn` is the same turn for synchronous callers (the CLI): with a
synchronous model and plain callables nothing in it ever waits on an event loop.
"""

from __future__ import annotations

import inspect
import re
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator, TypeVar

from ..tools.dispatch import ToolOutcome
from .events import DeltaEvent, ToolEvent
from .guard import LeakGuard
from .model import ChatModel, ModelError, ModelReply, TextDelta, assistant_message
from .tool_call_repair import repair_reply

REASK = ("[shardwise] Your answer states numbers, but no tool result in this conversation contains them. "
         "Call the tools to get them, then answer citing the result ids. Do not estimate.")
LAST_ROUND = ("[shardwise] The tool budget for this question is used up. Answer now with the results you have, "
              "citing their ids; say what is still unknown.")
UNBACKED_NOTE = "\n\n_Note: the numbers above did not come from a shardwise tool result; treat them as unverified._"

# Quantities an answer may state: a number with a unit, or a plan degree such as "TP=8".
QUANTITY = re.compile(
    r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s*(?:GiB|GB|MiB|TiB|ms|s\b|sec|seconds|%|percent|tokens?/s|tok/s|TFLOP)"
    r"|\b(?:TP|PP|DP|CP|EP|VPP|ZeRO)[\s=-]*(\d+)\b", re.IGNORECASE)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def stated_quantities(text: str) -> list[float]:
    values = []
    for match in QUANTITY.finditer(text):
        raw = (match.group(1) or match.group(2)).replace(",", "")
        try:
            values.append(float(raw))
        except ValueError:
            continue
    return values


def known_numbers(messages: list[dict]) -> list[float]:
    """Every number in the conversation's tool results."""
    found = []
    for m in messages:
        if m.get("role") == "tool":
            found += [float(x) for x in NUMBER.findall(str(m.get("content") or ""))]
    return found


def is_backed(value: float, known: list[float]) -> bool:
    """Equal to a known number, or to one rounded to the digits written (61.2 for 61.234), or a share of one."""
    for k in known:
        for candidate in (k, 100 * k, k / 1e3, k * 1e3):
            if abs(candidate - value) <= max(0.051 * (1 if value >= 1 else 0.1), 0.006 * abs(candidate)):
                return True
    return False


def needs_reask(text: str, context: list[dict]) -> bool:
    values = stated_quantities(text)
    if not values:
        return False
    known = known_numbers(context)
    return any(not is_backed(v, known) for v in values)


@dataclass
class TurnRecord:
    """What one turn produced, for the session to store and the service to summarise."""

    answer: str = ""
    outcomes: list[ToolOutcome] = field(default_factory=list)
    messages: list[dict] = field(default_factory=list)  # this turn's messages, user message first
    reasked: bool = False
    state: object | None = None  # the offline planner's new ConversationState (the LLM's is derived)


T = TypeVar("T")


async def resolved(value: T | Awaitable[T]) -> T:
    """A callback's result, awaited when the callback was asynchronous."""
    return await value if inspect.isawaitable(value) else value


async def model_events(model: Any, messages: list[dict], tools: list[dict], *, deadline: float) -> AsyncIterator:
    """The model's events: from `astream` when it has one (network I/O on the event loop), else `stream`."""
    if hasattr(model, "astream"):
        async for event in model.astream(messages, tools, deadline=deadline):
            yield event
    else:
        for event in model.stream(messages, tools, deadline=deadline):
            yield event


def drive(events: AsyncIterator[T]) -> Iterator[T]:
    """An async generator as a plain one, for synchronous callers. Everything it awaits must complete
    at once (a synchronous model, plain callbacks); one that really waits is a programming error."""
    try:
        while True:
            step = events.__anext__()
            try:
                step.send(None)
            except StopIteration as finished:
                yield finished.value
                continue
            except StopAsyncIteration:
                return
            step.close()
            raise RuntimeError("this turn awaits real I/O; iterate it with `async for` on an event loop")
    finally:
        closing = events.aclose()
        try:
            closing.send(None)
        except (StopIteration, StopAsyncIteration):
            pass
        else:
            closing.close()


def run_llm_turn(model: ChatModel, **kwargs) -> Iterator[DeltaEvent | ToolEvent]:
    """`arun_llm_turn` for synchronous callers (same arguments)."""
    return drive(arun_llm_turn(model, **kwargs))


async def arun_llm_turn(model: ChatModel, *, system_prompt: str, history: list[dict], user_message: str,
                        tool_schemas: list[dict], dispatch: Callable[[str, str, str], ToolOutcome | Awaitable[ToolOutcome]],
                        reserve_ids: Callable[[int], list[str] | Awaitable[list[str]]], guard: LeakGuard,
                        deadline: float, max_tool_rounds: int, record: TurnRecord,
                        scenario: dict | None = None) -> AsyncIterator[DeltaEvent | ToolEvent]:
    """Yield deltas and tool events; fill `record`. Raises ModelError when the endpoint fails.
    `scenario`: the conversation's current one, for repairing a call that leaves it out."""
    user = {"role": "user", "content": user_message}
    conversation = [{"role": "system", "content": system_prompt}, *history, user]
    record.messages.append(user)
    rounds_with_tools = 0
    repair_asked = False
    shown: list[str] = []
    while True:
        if time.monotonic() >= deadline:
            raise ModelError("the answer's time limit ran out", kind="deadline")
        allow_tools = rounds_with_tools < max_tool_rounds
        hold_text = not record.outcomes  # until a tool has run, check before showing
        held: list[str] = []
        reply: ModelReply | None = None
        async for event in model_events(model, conversation, tool_schemas if allow_tools else [], deadline=deadline):
            if isinstance(event, TextDelta):
                if hold_text:
                    held.append(event.text)
                else:
                    safe = guard.feed(event.text)
                    if safe:
                        shown.append(safe)
                        yield DeltaEvent(safe)
            elif isinstance(event, ModelReply):
                reply = event
        if reply is None:
            raise ModelError("the model's reply ended without a final message", kind="bad_request")
        repaired = repair_reply(reply, tool_schemas if allow_tools else [], conversation, scenario,
                                may_retry=not repair_asked)
        reply = repaired.reply
        if repaired.retry:  # a tool call written as text that could not be read: say so, once
            repair_asked = True
            conversation += [assistant_message(reply), {"role": "user", "content": repaired.retry}]
            continue
        calls = reply.tool_calls if allow_tools else []
        message = assistant_message(ModelReply(reply.text, calls, reply.finish_reason))
        conversation.append(message)
        record.messages.append(message)

        if calls:
            if held and reply.text:  # a preamble before tool calls ("let me check") is fine to show
                safe = guard.feed(reply.text)  # (without a call the model wrote as text)
                if safe:
                    shown.append(safe)
                    yield DeltaEvent(safe)
            rounds_with_tools += 1
            ids = await resolved(reserve_ids(len(calls)))
            for call, rid in zip(calls, ids):
                outcome = await resolved(dispatch(call.name, call.arguments, rid))
                record.outcomes.append(outcome)
                yield ToolEvent(id=rid, name=outcome.name, arguments=outcome.arguments, ok=outcome.ok,
                                summary=outcome.summary(), errors=outcome.errors,
                                result=outcome.result.model_dump(mode="json") if outcome.result is not None else None)
                tool_message = {"role": "tool", "tool_call_id": call.id, "content": outcome.content()}
                conversation.append(tool_message)
                record.messages.append(tool_message)
            if not allow_tools or rounds_with_tools >= max_tool_rounds:
                nudge = {"role": "user", "content": LAST_ROUND}
                conversation.append(nudge)
            continue

        if hold_text and not record.reasked and needs_reask(reply.text, conversation):
            record.reasked = True
            record.messages.pop()  # the unbacked answer is neither shown nor stored
            conversation.append({"role": "user", "content": REASK})
            continue

        text = reply.text
        if hold_text and record.reasked and needs_reask(text, conversation):
            text += UNBACKED_NOTE
        if hold_text:
            safe = guard.feed(text)
            if safe:
                shown.append(safe)
                yield DeltaEvent(safe)
        tail = guard.flush()
        if tail:
            shown.append(tail)
            yield DeltaEvent(tail)
        record.answer = "".join(shown)
        record.messages[-1] = {"role": "assistant", "content": record.answer}
        return

