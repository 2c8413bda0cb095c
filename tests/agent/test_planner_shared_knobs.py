"""Settings said for both plans of a comparison ("either way", "for both") in a sentence before the contrast
apply to both plans, not to the first alone (the second was then filled in by the search: ZeRO-2 mb4)."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.knobs import find_plans
from shardwise.agent.service import ChatService


@pytest.mark.parametrize("text, plans", [
    ("mixtral on 64 h100, 8k. zero2 mb2 either way. tp2 ep8 vs tp4 ep4, which wins?",
     [{"zero": 2, "micro_batch": 2, "tp": 2, "ep": 8}, {"zero": 2, "micro_batch": 2, "tp": 4, "ep": 4}]),
    ("qwen 32b on 16 h100. full recompute and mb1 for both. tp2 pp2 or plain tp4?",
     [{"recompute": "full", "micro_batch": 1, "tp": 2, "pp": 2}, {"recompute": "full", "micro_batch": 1, "tp": 4}]),
    ("tp4 pp2 zero1 vs tp8", [{"tp": 4, "pp": 2, "zero": 1}, {"tp": 8}]),  # said of plan A only: not shared
])
def test_knobs_said_before_the_contrast_go_to_both_plans(text, plans):
    assert find_plans(text) == plans


def test_the_comparison_runs_both_plans_with_the_shared_settings(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = list(service.stream("llama 3.1 8b on 16 h100, 4k, gbs 128. zero1 mb2 either way. tp2 pp2 vs plain tp4, "
                               "which is faster?", None))[-1]
    call = next(c for c in done.tool_calls if c["name"] == "compare_plans")
    for side in ("plan_a", "plan_b"):
        assert (call["arguments"][side]["zero"], call["arguments"][side]["micro_batch"]) == (1, 2)
    assert call["arguments"]["plan_b"]["tp"] == 4 and not any(c["name"] == "recommend_plans" for c in done.tool_calls)


SHARED = {"recompute": "full", "zero": 1}


@pytest.mark.parametrize("text, first, second", [
    # knobs.py's own docstring example, and the same settings said after the contrast, in brackets, with "each"
    ("full recompute, zero1 for both: CP=4 or TP=4", {"cp": 4}, {"tp": 4}),
    ("compare cp4 with tp4, full recompute and zero1 on both", {"cp": 4}, {"tp": 4}),  # was one plan: cp4 AND tp4
    ("compare cp4 and tp4 - full recompute and zero1 for each", {"cp": 4}, {"tp": 4}),  # was one plan
    ("CP=4 or TP=4 (full recompute, zero1 in both cases)", {"cp": 4}, {"tp": 4}),
    ("should we use cp=4 or tp=4? zero1 and full recompute either way", {"cp": 4}, {"tp": 4}),
    ("tp8 pp2 vs tp4 pp4 using zero1, full recompute for both", {"tp": 8, "pp": 2}, {"tp": 4, "pp": 4}),  # was zero1 on B only
    ("with zero1 and full recompute in both cases, tp8 pp2 or tp4 pp4?", {"tp": 8, "pp": 2}, {"tp": 4, "pp": 4}),
    ("same for each: full recompute, zero1. cp=4 or tp=4?", {"cp": 4}, {"tp": 4}),
])
def test_settings_said_for_both_plans_go_to_both_wherever_written(text, first, second):
    assert find_plans(text.lower()) == [{**first, **SHARED}, {**second, **SHARED}]  # the planner reads lowercased text


def test_a_setting_said_for_one_plan_stays_with_it_beside_one_said_for_both():
    # zero1 is plan A's own (and zero3 plan B's); mb1 is said for both
    assert find_plans("tp4 pp2 zero1 vs tp8 zero3, mb1 for both") == [
        {"tp": 4, "pp": 2, "zero": 1, "micro_batch": 1}, {"tp": 8, "zero": 3, "micro_batch": 1}]


def test_the_docstring_example_compares_two_plans_in_the_chat(tmp_path):
    service = ChatService(AgentConfig(session_db=tmp_path / "s.db"))
    done = list(service.stream("llama 3.1 8b on 16 h100, 4k, gbs 128. compare cp4 with tp4, full recompute and zero1 on "
                               "both", None))[-1]
    call = next(c for c in done.tool_calls if c["name"] == "compare_plans")["arguments"]
    assert (call["plan_a"]["cp"], call["plan_b"]["tp"]) == (4, 4) and call["plan_a"]["tp"] in (None, 1)
    for side in ("plan_a", "plan_b"):
        assert (call[side]["zero"], call[side]["recompute"]) == (1, "full")
