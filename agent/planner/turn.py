"""One offline turn's tool calls, recorded as the messages an LLM turn would store, and small helpers
every part of the planner shares."""

from __future__ import annotations

import json
from typing import Callable

from ...prompts.render import render
from ...tools.dispatch import ToolOutcome, dispatch
from ...tools.scenario import Plan, Scenario
from ..events import ToolEvent
from ..loop import TurnRecord
from ..state import ConversationState


class Turn:
    """Collects one turn's tool calls as the same messages an LLM turn would store."""

    def __init__(self, reserve: Callable[[int], list[str]], record: TurnRecord, profile=None):
        self.reserve, self.record, self.profile = reserve, record, profile  # profile: the session's calibration
        self.events: list[ToolEvent] = []

    def call(self, name: str, arguments: dict) -> ToolOutcome:
        rid = self.reserve(1)[0]
        outcome = dispatch(name, arguments, result_id=rid, profile=self.profile)
        self.record.outcomes.append(outcome)
        call_id = f"call_{rid}"
        self.record.messages.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}]})
        self.record.messages.append({"role": "tool", "tool_call_id": call_id, "content": outcome.content()})
        self.events.append(ToolEvent(id=rid, name=name, arguments=outcome.arguments, ok=outcome.ok,
                                     summary=outcome.summary(), errors=outcome.errors,
                                     result=outcome.result.model_dump(mode="json") if outcome.ok else None))
        return outcome


def scenario_args(s: Scenario) -> dict:
    return s.model_dump(mode="json")


def plan_with(base: Plan | None, knobs: dict) -> Plan:
    return Plan(**{**(base.model_dump() if base else {}), **knobs})


def base_gpu(state: ConversationState) -> str | None:
    return state.scenario.gpu if state.scenario else None


def base_per_node(state: ConversationState) -> int | None:
    return state.scenario.gpus_per_node if state.scenario else None


def base_gpus(state: ConversationState) -> int | None:
    return state.scenario.gpus if state.scenario else None


def result_or_error(outcome: ToolOutcome, template: str) -> str:
    if not outcome.ok:
        return render("offline/tool_error.md.j2", outcome=outcome)
    return render(template, r=outcome.result)
