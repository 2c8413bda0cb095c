"""A what-if on the MoE dispatcher ("would DeepEP help here?") prices the user's plan when they gave one (session 12):
the same knobs under the scenario before and after, beside the search's best; with no plan of theirs, the best plan,
said to be the recommended one. Expectations come from the other tools' results in the same conversation and from
the engine's evaluate() of the same plan with the dispatcher switched, never from the what-if's own output."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService
from shardwise.tools.scenario import Plan, Scenario
from shardwise.engine.evaluate import evaluate
from shardwise.tools.calibration import active_profile

from support.chat import turns

SETUP = "mixtral 8x7b on 64 h100, seq 4096, gbs 512"


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))


def _step_ms_with(dispatcher: str, scenario: dict, plan: dict) -> float:
    resolved = Scenario(**{**scenario, "moe_dispatcher": dispatcher}).resolve()
    e = evaluate(resolved.model, resolved.cluster, resolved.setup, Plan(**plan).strategy(), profile=active_profile())
    return 1e3 * e.time.step_s


@pytest.mark.parametrize("ask", ["would DeepEP help here?", "what if we switch the dispatcher to deepep?"])
def test_the_users_plan_is_priced_with_and_without_deepep(service, ask):
    checked, done = turns(service, f"{SETUP}. my plan: tp=2 ep=8 pp=2 zero 1 mb 1. check it", ask)
    [evaluated] = checked.tool_calls
    [call] = done.tool_calls
    assert call["name"] == "what_if" and call["arguments"]["change"]["moe_dispatcher"] == "deepep"
    plan = call["arguments"]["plan"]
    assert (plan["tp"], plan["ep"], plan["pp"], plan["zero"], plan["micro_batch"]) == (2, 8, 2, 1, 1)
    given = call["result"]["given_plan"]
    # before: the plan the user asked us to check, as evaluate_plan priced it one turn earlier
    assert given["before"]["step_ms"] == evaluated["result"]["plan"]["step_ms"]
    # after: the same knobs with the dispatcher switched, through the engine's evaluate()
    assert given["after"]["step_ms"] == pytest.approx(_step_ms_with("deepep", call["arguments"]["scenario"], plan), abs=0.01)
    assert f"**Your plan `{given['before']['label']}`**" in done.answer
    assert "For comparison, the best plan" in done.answer


def test_with_no_plan_of_theirs_the_best_plan_is_priced_and_said_to_be_the_recommended_one(service):
    _, done = turns(service, f"{SETUP} - best plan?", "would DeepEP help here?")
    [call] = done.tool_calls
    assert call["name"] == "what_if" and "plan" not in call["arguments"]
    assert call["result"]["given_plan"] is None
    assert "prices the recommended (best) plan" in done.answer and "Your plan" not in done.answer


def test_a_change_of_hardware_still_ranks_afresh_after_the_user_gave_a_plan(service):
    # a new GPU changes what fits: the what-if stays the best plan's, as before session 12
    _, done = turns(service, f"{SETUP}. my plan: tp=2 ep=8 pp=2 zero 1 mb 1. check it", "what if we had h200s?")
    [call] = done.tool_calls
    assert call["name"] == "what_if" and "plan" not in call["arguments"]


def test_the_answer_leads_with_the_change_for_their_plan_and_where_the_step_moves(service):
    _, done = turns(service, f"{SETUP}. my plan: tp=2 ep=8 pp=2 zero 1 mb 1. check it", "would DeepEP help here?")
    given = done.tool_calls[0]["result"]["given_plan"]
    assert f"with the change: **{given['tokens_per_s_change_percent']:+.1f}% tokens/s**" in done.answer
    before = {t["name"]: t["value"] for t in given["before"]["time_terms"]}
    after = {t["name"]: t["value"] for t in given["after"]["time_terms"]}
    assert after["EP communication"] < before["EP communication"]  # DeepEP prices the expert all-to-all lower
    assert "Where its step changes:" in done.answer and "EP communication" in done.answer


def test_deepep_on_a_dense_model_changes_nothing_and_says_why(service):
    # a dense model has no experts: the dispatcher cannot change its step (same step time before and after)
    _, done = turns(service, "llama 3.1 8b on 16 h100, 4k, gbs 256. we run tp2 zero1 mb2. does it fit?",
                    "would DeepEP help here?")
    given = done.tool_calls[0]["result"]["given_plan"]
    assert given["before"]["step_ms"] == given["after"]["step_ms"]
    assert "(the same step time)" in done.answer and "Nothing in its step depends on that setting" in done.answer


@pytest.mark.parametrize("ask", ["is it worth turning on deepep for our run?",
                                 "would enabling deepep actually help our throughput on this run?"])
def test_longer_phrasings_of_the_dispatcher_question_are_what_ifs_on_their_plan(service, ask):
    _, done = turns(service, f"{SETUP}. we run tp=2 ep=8 pp=2 zero 1 mb 1. does it fit?", ask)
    [call] = done.tool_calls
    assert call["name"] == "what_if" and call["arguments"]["change"]["moe_dispatcher"] == "deepep"
    assert call["arguments"]["plan"]["tp"] == 2 and call["arguments"]["plan"]["ep"] == 8
