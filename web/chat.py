"""The agent's chat service as SSE events: `session`, `delta`, `tool`, `configs`, `done`, `error`.

The agent yields its own event objects; `to_wire` turns each into (name, JSON-able data) and the
stream adds what only the web needs: the finished answer rendered as sanitised HTML on `done`.
Exceptions become an `error` event with a message fit for users — never a traceback or a key.
"""

from __future__ import annotations

import dataclasses
import inspect
import logging
from typing import Any, AsyncIterator, Iterator, Protocol

from pydantic import BaseModel, ValidationError

from ..engine.errors import ShardwiseInputError
from .markdown import render_markdown

log = logging.getLogger("shardwise.web")
EVENT_NAMES = ("session", "delta", "tool", "configs", "done", "error")


class ChatServiceLike(Protocol):
    def stream(self, message: str, session_id: str | None) -> Iterator[Any]: ...


def to_wire(event: Any) -> tuple[str, dict[str, Any]]:
    """An agent event (dataclass, pydantic model, dict or (name, data) pair) -> (name, data)."""
    if isinstance(event, tuple) and len(event) == 2 and isinstance(event[0], str):
        name, data = event
    elif isinstance(event, dict):
        name = event.get("event") or event.get("type") or event.get("name")
        data = event.get("data", {k: v for k, v in event.items() if k not in {"event", "type"}})
    else:
        key = next((k for k in ("event", "type", "kind") if getattr(event, k, None)), None)
        name = getattr(event, key) if key else None
        data = getattr(event, "data", None)
        if data is None:
            data = _as_dict(event)
            data.pop(key, None)  # only the attribute that named the event (an error's `kind` stays)
    data = _jsonable(data)
    if not isinstance(data, dict):
        data = {"value": data}
    if name not in EVENT_NAMES:
        raise TypeError(f"unknown chat event {name!r}")
    return str(name), data


def _as_dict(obj: Any) -> dict:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    if dataclasses.is_dataclass(obj):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    return dict(vars(obj))


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _jsonable(_as_dict(value))
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def accepts_scenario(service: ChatServiceLike) -> bool:
    try:
        return "scenario" in inspect.signature(service.stream).parameters
    except (TypeError, ValueError):
        return False


def seed_scenario(service: Any, session_id: str | None, scenario: dict, plan: dict | None = None) -> str | None:
    """Make the page's form the conversation's scenario before the next question, so "what if H200s?"
    starts from what the form shows, and the plan it shows the plan under discussion ("why not TP=8?").
    Uses the agent's session store; a service without one is left alone."""
    store = getattr(service, "store", None)
    if store is None:
        return session_id
    from ..agent.state import ConversationState
    from ..tools.scenario import Plan, Scenario

    new = _validated(Scenario, "scenario", {k: v for k, v in scenario.items() if v not in (None, "")})
    shown = _validated(Plan, "plan", plan) if plan else None
    session = store.open(session_id)
    state = ConversationState.load(session.state)
    if state.scenario != new:
        # A new scenario: the plan under discussion belonged to the old one; the page's plan, if sent, is the new one.
        state = state.model_copy(update={"scenario": new, "plan": shown, "plan_result": None, "alternatives": []})
        store.append_turn(session.id, [], state.dump())  # no messages: only the state changes
    elif shown is not None and state.plan is None:  # the page now shows a plan for the scenario the chat has
        store.append_turn(session.id, [], state.model_copy(update={"plan": shown}).dump())
    return session.id


def _validated(model: Any, what: str, data: dict) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ShardwiseInputError(f"{what}: " + "; ".join(
            f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())) from None


def session_scenario(service: Any, session_id: str | None) -> dict | None:
    """The scenario the conversation ended on (the page fills its form with it)."""
    store = getattr(service, "store", None)
    if store is None or not session_id:
        return None
    try:
        scenario = store.load(session_id).state.get("scenario")
    except (KeyError, ValueError):
        return None
    return scenario if isinstance(scenario, dict) and scenario else None


class _Wire:
    """Agent events -> wire events: `done` gains `html` (the whole answer as safe HTML) and `scenario`
    (where the conversation now stands); an `error` that carries the offline planner's answer gets the
    same for that answer. `scenario_of(session_id)` reads the stored scenario."""

    def __init__(self, session_id: str | None):
        self.session_id = session_id
        self.answer: list[str] = []

    def convert(self, event: Any) -> tuple[str, dict, str | None]:
        """(name, data, the session whose scenario `data` still needs, or None)."""
        name, data = to_wire(event)
        if name == "session":
            self.session_id = data.get("session_id") or self.session_id
        if name == "delta":
            self.answer.append(str(data.get("text", "")))
        if name == "done":
            text = data.get("answer") if isinstance(data.get("answer"), str) else "".join(self.answer)
            data = {**data, "html": render_markdown(text)}
            if "scenario" not in data:
                return name, data, data.get("session_id") or self.session_id
        if name == "error" and isinstance(data.get("offline"), dict):
            offline = data["offline"]
            data = {**data, "offline": {**offline, "html": render_markdown(str(offline.get("answer") or ""))}}
            if "scenario" not in offline:
                return name, data, self.session_id
        return name, data, None

    @staticmethod
    def with_scenario(name: str, data: dict, scenario: dict | None) -> tuple[str, dict]:
        if name == "error":
            return name, {**data, "offline": {**data["offline"], "scenario": scenario}}
        return name, {**data, "scenario": scenario}


def wire_events(service: ChatServiceLike, message: str, session_id: str | None,
                scenario: dict | None = None, plan: dict | None = None,
                profile: Any = None) -> Iterator[tuple[str, dict]]:
    """The service's events in wire form (see `_Wire`). `profile`: a CalibrationProfile for this message."""
    calibrated = {"profile": profile} if profile is not None else {}
    if scenario is not None and accepts_scenario(service):
        stream = service.stream(message, session_id, scenario=scenario, **calibrated)
    else:
        if scenario is not None:
            session_id = seed_scenario(service, session_id, scenario, plan)
        stream = service.stream(message, session_id, **calibrated)
    wire = _Wire(session_id)
    try:
        for event in stream:
            name, data, needs = wire.convert(event)
            if needs is not None or (name == "done" and "scenario" not in data):
                name, data = wire.with_scenario(name, data, session_scenario(service, needs))
            yield name, data
    finally:
        close = getattr(stream, "close", None)
        if close is not None:
            close()


async def awire_events(service: Any, message: str, session_id: str | None, scenario: dict | None = None,
                       plan: dict | None = None, *, offload: Any, deadline_s: float | None = None,
                       profile: Any = None) -> AsyncIterator[tuple[str, dict]]:
    """The same for the agent's `astream`: its store reads go through `offload.io`."""
    calibrated = {"profile": profile} if profile is not None else {}
    stream = None
    try:
        if scenario is not None:
            session_id = await offload.io(seed_scenario, service, session_id, scenario, plan)
        stream = service.astream(message, session_id, offload=offload, deadline_s=deadline_s, **calibrated)
        wire = _Wire(session_id)
        async for event in stream:
            name, data, needs = wire.convert(event)
            if needs is not None or (name == "done" and "scenario" not in data):
                name, data = wire.with_scenario(name, data, await offload.io(session_scenario, service, needs))
            yield name, data
    finally:
        if stream is not None:
            await stream.aclose()


def error_payload(exc: BaseException) -> dict[str, Any]:
    """What the browser is told when the chat fails: input problems verbatim, anything else generically."""
    if isinstance(exc, ShardwiseInputError):
        return {"message": str(exc), "kind": "input"}
    kind = getattr(exc, "kind", None)
    if kind in {"unavailable", "timeout", "auth", "bad_request", "deadline"}:
        # The agent's ModelError: its message names the endpoint's problem, never the key.
        return {"message": f"the language model failed ({kind}): {exc}", "kind": kind}
    return {"message": "the advisor hit an internal error answering this; it has been logged", "kind": "internal"}
