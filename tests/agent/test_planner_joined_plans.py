"""Two plans joined by "and" / "with" / "to" in a comparison ("compare TP4 PP4 with TP8 PP2", "TP4 PP4 and TP8 PP2
- which is faster?") are both read, with the settings said for both, as the "vs" phrasing is; a joiner followed by
another knob ("tp4 pp4 with zero1") stays one plan. Expected plans are the degrees written in each message."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.entities import normalise
from shardwise.agent.planner.knobs import find_plans
from shardwise.agent.service import ChatService

A, B = {"tp": 4, "pp": 4}, {"tp": 8, "pp": 2}
BOTH = {"zero": 1, "micro_batch": 1}


@pytest.mark.parametrize("text, plans", [
    ("compare TP4 PP4 with TP8 PP2", [A, B]),
    ("TP4 PP4 and TP8 PP2 — which is faster?", [A, B]),
    ("compare TP4 PP4 to TP8 PP2", [A, B]),
    ("between tp4 pp4 and tp8 pp2, which wins?", [A, B]),
    ("compare tp4 pp4 with tp8 pp2, both zero1 mb1", [{**BOTH, **A}, {**BOTH, **B}]),
    ("zero1 mb1 for both. compare tp4 pp4 and tp8 pp2", [{**BOTH, **A}, {**BOTH, **B}]),
    ("tp4 pp4 with zero1, which is faster?", [{**A, "zero": 1}]),  # one plan: "with" adds a knob, names no other plan
    ("we run tp4 pp4 and zero1", [{**A, "zero": 1}]),  # no comparison asked
])
def test_plans_joined_by_and_with_to(text, plans):
    assert find_plans(normalise(text)) == plans


SETUP = "70B on 64 H100s, seq 8192, global batch 512: "


def _compared(service: ChatService, message: str) -> tuple[dict, dict]:
    done = list(service.stream(SETUP + message, None))[-1]
    call = next(c for c in done.tool_calls if c["name"] == "compare_plans")
    return call["arguments"]["plan_a"], call["arguments"]["plan_b"]


@pytest.mark.parametrize("message", ["compare TP4 PP4 with TP8 PP2, both zero1 mb1",
                                     "TP4 PP4 and TP8 PP2, both zero1 mb1 — which is faster?"])
def test_the_chat_compares_both_plans_as_the_vs_phrasing_does(tmp_path, message):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    a, b = _compared(service, message)
    assert {k: a[k] for k in ("tp", "pp", "zero", "micro_batch")} == {**A, **BOTH}
    assert {k: b[k] for k in ("tp", "pp", "zero", "micro_batch")} == {**B, **BOTH}
    assert (a, b) == _compared(service, "TP4 PP4 vs TP8 PP2, both zero1 mb1")


@pytest.mark.parametrize("text, plans", [
    # labels with no punctuation, a knob straight after (holdout_fresh_7 hf7-two-plans-fit-and-faster-405b: read as
    # one plan before; fixed after seeing that case fail, so it no longer counts as held-out)
    ("option A tp8 pp16 mb1 zero1 full recompute, option B tp4 pp16 cp4 mb1 zero2 no recompute. which is faster?",
     [{"tp": 8, "pp": 16, "micro_batch": 1, "zero": 1, "recompute": "full"},
      {"tp": 4, "pp": 16, "cp": 4, "micro_batch": 1, "zero": 2, "recompute": "none"}]),
    ("plan 1 tp8 pp2, plan 2 tp4 pp4", [{"tp": 8, "pp": 2}, {"tp": 4, "pp": 4}]),
    ("option 2 is better", []),  # a label with no knobs names no plan
])
def test_labelled_options_without_punctuation(text, plans):
    assert find_plans(normalise(text)) == plans


@pytest.mark.parametrize("text, plans", [
    # The clause before "and" starts the first plan, not a setting for both, when the other plan names its knob
    # again (TP here): "tp8" is TP8 alone, as after "vs" — not TP8 with the first plan's PP4.
    ("which is better, tp4 pp4 and zero1 or tp8?", [{"tp": 4, "pp": 4, "zero": 1}, {"tp": 8}]),
    ("tp4 pp4 zero1 vs tp8", [{"tp": 4, "pp": 4, "zero": 1}, {"tp": 8}]),
    # ... and stays shared when the other plan does not touch it: "keep zero-1 instead of zero-3" for tp8 pp1 mb1.
    ("tp8 pp1 mb1 (8k): keep zero-1 instead of zero-3",
     [{"tp": 8, "pp": 1, "micro_batch": 1, "zero": 1}, {"tp": 8, "pp": 1, "micro_batch": 1, "zero": 3}]),
])
def test_a_clause_the_other_plan_overrides_is_not_shared(text, plans):
    assert find_plans(normalise(text)) == plans
