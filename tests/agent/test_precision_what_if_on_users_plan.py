""""What if fp8?" with a plan under discussion that the user named or evaluated prices that plan in FP8 too, beside the
best FP8 plan (session 13; as the dispatcher what-if does, test_dispatcher_what_if_on_users_plan.py). With no plan of
theirs, the best plans before and after, as before. Expectations come from other tools' results in the same
conversation and from the engine's evaluate() of the same plan in FP8, never from the what-if's own output."""

from __future__ import annotations

import pytest

from shardwise.engine.evaluate import evaluate
from shardwise.tools.calibration import active_profile
from shardwise.tools.dispatch import dispatch
from shardwise.tools.scenario import Plan, Scenario

from support.chat import turns

SETUP = "llama 3.1 8b on 16 h100, 4k, gbs 256"


def _step_ms_in(precision: str, scenario: dict, plan: dict) -> float:
    resolved = Scenario(**{**scenario, "precision": precision}).resolve()
    e = evaluate(resolved.model, resolved.cluster, resolved.setup, Plan(**plan).strategy(), profile=active_profile())
    return 1e3 * e.time.step_s


@pytest.mark.parametrize("first", [f"{SETUP}. we run tp2 zero1 mb2. how fast?", f"{SETUP}. how about tp2 zero1 mb2?"])
def test_the_users_plan_is_priced_in_fp8_beside_the_best_fp8_plan(make_service, first):
    checked, done = turns(make_service(), first, "what if fp8?")
    [evaluated] = checked.tool_calls
    [call] = done.tool_calls
    assert call["name"] == "what_if" and call["arguments"]["change"]["precision"] == "fp8"
    plan = call["arguments"]["plan"]
    assert (plan["tp"], plan["zero"], plan["micro_batch"]) == (2, 1, 2)
    given = call["result"]["given_plan"]
    # before: the plan as evaluate_plan priced it one turn earlier; after: the same knobs in FP8, by evaluate()
    assert given["before"]["step_ms"] == evaluated["result"]["plan"]["step_ms"]
    assert given["after"]["step_ms"] == pytest.approx(_step_ms_in("fp8", call["arguments"]["scenario"], plan), abs=0.01)
    # the best FP8 plan is the one recommend_plans finds for the FP8 scenario
    fp8 = {**call["arguments"]["scenario"], "precision": "fp8"}
    best = dispatch("recommend_plans", {"scenario": fp8, "top_k": 1}, result_id="X1").result.best
    assert call["result"]["after_best"]["label"] == best.label
    assert f"**Your plan `{given['before']['label']}`**" in done.answer
    assert "For comparison, the best plan" in done.answer and f"`{best.label}`" in done.answer
    assert "own dense peak" in done.answer  # an FP8 MFU is of the FP8 peak: said, since it falls as tokens/s rise


def test_with_no_plan_of_theirs_the_best_plans_alone_are_priced(make_service):
    _, done = turns(make_service(), f"{SETUP} - best plan?", "what if fp8?")
    [call] = done.tool_calls
    assert call["name"] == "what_if" and "plan" not in call["arguments"]
    assert call["result"]["given_plan"] is None and "Your plan" not in done.answer
