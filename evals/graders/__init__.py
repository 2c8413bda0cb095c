"""Graders, cheapest and most objective first. Each is a module with NAME and
`grade(ctx) -> list[str]`: the reasons the turn fails that grader (empty = passes).

1. tools    — the right tools, with the scenario's key arguments, within the call budget;
              no forbidden behaviour.
2. plan     — the plan the answer recommends equals the engine's.
3. numbers  — every number the answer states is backed by a tool result (or the user's question).
4. facts    — required keywords and the facts the engine's truth implies.
The LLM judge (judge.py) is separate: reported, never gating.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable

from ..case import Case, Scenario, Turn, truth_kind
from ..transcript import Reply, TurnRecord


@dataclass
class TurnContext:
    case: Case
    index: int
    scenario: Scenario  # the effective scenario at this turn
    reply: Reply
    history: list[TurnRecord] = field(default_factory=list)  # earlier turns of this conversation
    system_prompt: str = ""
    truth_fn: Callable[["TurnContext"], object] | None = None  # computes the engine's ground truth
    side_truth_fn: Callable[[Scenario], object] | None = None  # a side's truth (default: truth.recommend_truth)
    name_patterns: tuple[re.Pattern, ...] = ()

    @property
    def turn(self) -> Turn:
        return self.case.turns[self.index]

    @property
    def truth_kind(self) -> str:
        return truth_kind(self.case, self.turn)

    @cached_property
    def truth(self):
        if self.truth_fn is None:
            raise RuntimeError("no ground truth function given")
        return self.truth_fn(self)

    @cached_property
    def side_truths(self) -> list:
        """The engine's recommendation for each side's scenario of a side-by-side turn."""
        if self.side_truth_fn is None:
            from ..truth import recommend_truth
            return [recommend_truth(s) for s in self.turn.side_scenarios(self.scenario)]
        return [self.side_truth_fn(s) for s in self.turn.side_scenarios(self.scenario)]

    def user_messages(self) -> list[str]:
        return [t.user for t in self.history] + [self.turn.user]

    def all_tool_calls(self):
        """Every tool call of the conversation so far, this turn's last."""
        calls = [c for t in self.history for c in t.reply.tool_calls]
        return calls + list(self.reply.tool_calls)


def _graders():
    from . import facts, numbers, plan, tools
    return [tools, plan, numbers, facts]


GATING = ("tools", "plan", "numbers", "facts")


def grade_turn(ctx: TurnContext) -> dict[str, list[str]]:
    """{grader name: failure reasons} for every gating grader."""
    out = {}
    for grader in _graders():
        try:
            out[grader.NAME] = grader.grade(ctx)
        except Exception as exc:  # a broken truth/engine call fails the grader, it does not stop the run
            out[grader.NAME] = [f"grader error: {type(exc).__name__}: {exc}"]
    return out
