"""A what-if on sequence parallelism (session 13): "what if sequence parallel was off?", "turn SP off", "without
sequence parallelism", "with SP" were not understood (or answered with the glossary). SP is a knob of the plan, so the
change is priced on the plan under discussion: compare_plans of that plan as it is against the same plan with SP
switched. Expected plans are the recommended plan's knobs (from recommend_plans one turn earlier) with SP set as the
user said; expected memory comes from the engine's evaluate() of that plan, never from the comparison's own output."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import normalise
from shardwise.agent.planner.knobs import find_plans
from shardwise.engine.evaluate import evaluate
from shardwise.engine.plan_label import plan_label
from shardwise.engine.strategy import Strategy
from shardwise.tools.scenario import Plan, Scenario

from support.chat import turns

SETUP = "llama 3.1 70b on 64 h100, 8k, gbs 512. best plan?"  # a TP=2 plan wins (memory-bound 70B)


@pytest.mark.parametrize("text, on", [
    ("what if sequence parallel was off?", False), ("turn SP off", False), ("without sequence parallelism", False),
    ("no-SP", False), ("sp=false", False), ("disable SP", False), ("with SP", True), ("turn sp on", True),
    ("ok turn SP back on", True),
])
def test_sp_switched_in_words_is_the_plan_knob(text, on):
    assert find_plans(normalise(text)) == [{"sequence_parallel": on}]


@pytest.mark.parametrize("text", ["does SP save memory?", "explain sequence parallelism", "with sp 2", "with spark"])
def test_sp_named_without_a_switch_sets_nothing(text):
    assert find_plans(normalise(text)) == []  # the idea, or DeepSpeed-Ulysses' degree, not Megatron's SP switch


def _memory_gib(scenario: dict, plan: dict) -> float:
    resolved = Scenario(**scenario).resolve()
    return evaluate(resolved.model, resolved.cluster, resolved.setup, Plan(**plan).strategy()).memory.total_gib


@pytest.mark.parametrize("ask", ["what if sequence parallel was off?", "turn SP off", "without sequence parallelism"])
def test_sp_off_is_priced_on_the_plan_under_discussion(make_service, ask):
    recommended, done = turns(make_service(), SETUP, ask)
    best = recommended.tool_calls[0]["result"]["best"]["strategy"]
    assert best["tp"] > 1 and best["sequence_parallel"] is True
    [call] = done.tool_calls
    assert call["name"] == "compare_plans"
    a, b = call["arguments"]["plan_a"], call["arguments"]["plan_b"]
    knobs = ("tp", "pp", "cp", "zero", "micro_batch", "recompute")
    ours = {"tp": best["tp"], "pp": best["pp"], "cp": best["cp"], "zero": best["zero_stage"],
            "micro_batch": best["micro_batch"], "recompute": best["recompute"]}
    assert {k: a[k] for k in knobs} == ours and {k: b[k] for k in knobs} == ours
    assert a["sequence_parallel"] is True and b["sequence_parallel"] is False
    # the same plan without SP holds the activations TP leaves whole: more memory, by the engine's own evaluate()
    off = _memory_gib(call["arguments"]["scenario"], b)
    assert call["result"]["b"]["memory_gib"] == pytest.approx(off, abs=0.05)
    assert off > _memory_gib(call["arguments"]["scenario"], a)
    assert "What if SP on → off?" in done.answer and "no-SP`" in done.answer


def test_with_sp_on_a_plan_that_has_it_says_so_and_shows_it_against_sp_off(make_service):
    _, done = turns(make_service(), SETUP, "with SP")
    [call] = done.tool_calls
    assert call["arguments"]["plan_a"]["sequence_parallel"] is True and call["arguments"]["plan_b"]["sequence_parallel"] is False
    assert "SP is already on" in done.answer


def test_with_sp_on_the_users_plan_without_it(make_service):
    checked, done = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512. we run tp4 pp2 zero1 mb1 without sp. "
                                          "does it fit?", "what if we turned SP on?")
    assert checked.tool_calls[0]["arguments"]["plan"]["sequence_parallel"] is False
    [call] = done.tool_calls
    a, b = call["arguments"]["plan_a"], call["arguments"]["plan_b"]
    assert (a["tp"], a["pp"], a["sequence_parallel"]) == (4, 2, False) and (b["tp"], b["pp"], b["sequence_parallel"]) == (4, 2, True)
    assert "What if SP off → on?" in done.answer


def test_a_plan_with_tp_1_has_no_sp_to_switch(make_service):
    # Llama-3.1-8B on 16 H100s: the best plan is pure DP (TP=1); SP on or off is the same plan
    recommended, done = turns(make_service(), "llama 3.1 8b on 16 h100, 4k, gbs 256. best plan?", "what if SP off?")
    assert recommended.tool_calls[0]["result"]["best"]["strategy"]["tp"] == 1
    [call] = done.tool_calls
    assert call["name"] == "evaluate_plan" and call["arguments"]["plan"]["tp"] == 1
    assert "has TP=1" in done.answer and "same plan" in done.answer


def test_with_no_plan_yet_the_recommended_one_is_switched(make_service):
    [done] = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512: what if SP was off?")
    assert [c["name"] for c in done.tool_calls] == ["recommend_plans", "compare_plans"]
    best = done.tool_calls[0]["result"]["best"]["strategy"]
    assert done.tool_calls[1]["arguments"]["plan_a"]["tp"] == best["tp"]


def test_the_tools_label_says_no_sp_only_when_it_is_off():
    # two plans that differ only in SP must not read alike in a comparison; SP on stays unsaid (it is the default)
    assert plan_label(Strategy(tp=2, sequence_parallel=False), "tools").endswith(" no-SP")
    assert "SP" not in plan_label(Strategy(tp=2), "tools") and "SP" not in plan_label(Strategy(tp=1, sequence_parallel=False), "tools")


@pytest.mark.parametrize("text, recompute", [("what if recompute was full?", "full"), ("recompute is selective", "selective"),
                                             ("recompute set to none", "none")])
def test_a_recompute_said_with_a_verb_is_the_knob(text, recompute):
    # "what if recompute was full?" was answered as outside shardwise's domain (found beside the SP what-if)
    assert find_plans(normalise(text)) == [{"recompute": recompute}]


def test_best_plan_without_sp_is_the_search_with_a_note_not_a_plan_of_sp_alone(make_service):
    # SP is no constraint of the search (it tries every plan both ways): said, rather than dropped in silence or read
    # as a plan of its own (TP=1 and every other knob at its default)
    [done] = turns(make_service(), "llama 3.1 70b on 64 h100, 8k, gbs 512. best plan without SP?")
    [call] = done.tool_calls
    assert call["name"] == "recommend_plans" and call["arguments"]["constraints"] is None
    assert "cannot be held to SP off" in done.answer


def test_the_verdict_writes_memory_to_a_tenth_of_a_gib(make_service):
    # the verdict read "82.378 GiB needed" beside a table of "82.4": one precision for memory in one answer
    _, done = turns(make_service(), SETUP, "turn SP off")
    b = done.tool_calls[0]["result"]["b"]
    assert not b["fits"] and f"out of memory ({b['memory_gib']:.1f} GiB needed, 72 GiB usable)" in done.answer
