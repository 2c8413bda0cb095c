"""A named plan said to be the best ("someone told me TP=16 is optimal for 70B on 64 H100s - is it?") is checked
like other comparisons: the plan's own numbers, the best plan (recommend), then the two compared, saying which is
faster and by how much. One knob named means the fastest plan with it (answers._best_with), both when it is
evaluated and when it is compared. A claim that a plan *fits* is still checked on that plan alone
(tests/agent/test_planner_phrasing_4.py). Expected figures come from the engine's evaluate() of the two plans the
answer compares (the tools' ground truth), not from the answer itself."""

from __future__ import annotations

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.tools.scenario import Plan, Scenario

from support.chat import ask


def step_s(scenario: dict, plan: dict) -> float:
    resolved = Scenario(**scenario).resolve()
    return evaluate(resolved.model, resolved.cluster, resolved.setup, Plan(**plan).strategy()).time.step_s


def test_tp16_said_to_be_optimal_is_evaluated_then_compared_with_the_best(make_service):
    [(calls, answer)] = ask(make_service(), "someone told me TP=16 is optimal for 70B on 64 H100s - is it?")
    names = [name for name, _ in calls]
    assert names == ["recommend_plans", "evaluate_plan", "recommend_plans", "recommend_plans", "compare_plans"]
    pinned, evaluated, best, _, compared = (args for _, args in calls)
    assert pinned["constraints"] == {"tp": 16} and best["constraints"] is None
    assert evaluated["plan"]["tp"] == 16
    plan_a, plan_b = compared["plan_a"], compared["plan_b"]
    assert plan_b == evaluated["plan"]  # the TP=16 plan evaluated is the one compared
    assert plan_a["tp"] != 16
    # which is faster and by how much: the engine's two step times (same tokens per step, so the step
    # ratio is the throughput ratio)
    scenario = compared["scenario"]
    a, b = step_s(scenario, plan_a), step_s(scenario, plan_b)
    assert a < b
    # tools/compare.py writes the figure rounded to 0.1 with :g (15.0 -> "15")
    assert f"is {round(100 * (b / a - 1), 1):g}% faster" in answer
    # their claim's plan first, then the best plan, then the comparison
    assert answer.index("TP=16 alone is not a whole plan") < answer.index("**Recommended plan:**") \
        < answer.index("% faster")
    assert "[tp_crosses_node]" in answer  # the evaluation's warnings say why TP=16 is slow here


@pytest.mark.parametrize("message", [
    "my boss says tp8 pp2 zero1 is the optimal layout for llama 3.1 70b on 64 h100, true?",
    "llama 3.1 70b on 64 h100: is tp8 pp2 zero1 mb1 really the fastest?",
])
def test_a_whole_plan_said_to_be_best_is_compared_as_given(make_service, message):
    [(calls, answer)] = ask(make_service(), message)
    assert [name for name, _ in calls] == ["evaluate_plan", "recommend_plans", "compare_plans"]
    evaluated, compared = calls[0][1]["plan"], calls[2][1]
    assert {k: compared["plan_b"][k] for k in ("tp", "pp", "zero")} == {"tp": 8, "pp": 2, "zero": 1}
    assert {k: evaluated[k] for k in ("tp", "pp", "zero")} == {"tp": 8, "pp": 2, "zero": 1}
    a, b = step_s(compared["scenario"], compared["plan_a"]), step_s(compared["scenario"], compared["plan_b"])
    # tools/compare.py writes the figure rounded to 0.1 with :g (15.0 -> "15")
    assert f"is {round(100 * (b / a - 1), 1):g}% faster" in answer


def test_a_plan_that_is_the_best_is_confirmed_without_comparing_it_with_itself(make_service):
    # Premise: for Llama-3.1-70B on 64 H100 (defaults: 4k, batch 1,024) the search ranks a TP=2 plan first, so
    # "TP=2" read as the fastest TP=2 plan is that plan (were the ranking to change, name the new best's TP).
    [(calls, answer)] = ask(make_service(), "is tp2 really the best for llama 3.1 70b on 64 h100?")
    names = [name for name, _ in calls]
    assert "compare_plans" not in names and names.count("recommend_plans") >= 2
    best = next(args for name, args in calls if name == "recommend_plans" and args["constraints"] is None)
    assert best is not None
    assert "**Yes: `TP=2" in answer and "is the plan the search ranks first" in answer
    assert "predicted equally fast" not in answer


def test_a_claim_that_a_plan_fits_is_still_checked_on_that_plan_alone(make_service):
    [(calls, _)] = ask(make_service(), "colleague claims llama 3.1 8b runs fine on 8 h100 with tp2 zero1 mb4 at 8k, "
                                       "gbs 128 - true? and how fast")
    assert [name for name, _ in calls] == ["evaluate_plan"]
