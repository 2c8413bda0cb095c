"""Session 12's fixes for the failures of fresh set 16's first run (branch chatfix16), each checked on phrasings
written for these tests (not the eval cases' text):
- the two ends of an interval asked as "min/max", "upper and lower bounds", "best case / worst case" after a plan;
- once a profile was fitted in the chat, "w/ calibration", "with calibration" and "after calibrating" mean it;
- an export with no valid plan says the rule that excluded every plan (DeepSpeed has no FP8 switch);
- outside GRPO/PPO a sample or response length is the training sequence;
- an unknown accelerator written "Nx CODE" is named as unsupported, and "which gpus and models do you support"
  beside unknown names lists both catalogs.

Expected values are the user's own figures, the engine's named limits, or the tools' results in the same test, never
the planner's answer copied in."""

from __future__ import annotations

import json

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.planner.catalog_asked import catalogs_asked
from shardwise.agent.planner.entities import extract, normalise
from shardwise.agent.planner.measured import profile_meant
from shardwise.agent.planner.unlisted_accelerator import unlisted_accelerator
from shardwise.agent.service import ChatService
from shardwise.engine.hardware_catalog import list_gpus
from shardwise.engine.validity.deepspeed_config import LIMITS_BY_NAME
from shardwise.tools import dispatch

from support.chat import calls, turns


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))


def call(done, name: str) -> dict:
    return next(c for c in done.tool_calls if c["name"] == name)


def figures(done, name: str) -> dict:
    return call(done, name)["result"]


# -- 1. the interval's two ends, asked in other words --------------------------------------------------------------

@pytest.mark.parametrize("follow_up", ["what about min/max on the step time?", "upper and lower bounds for the step?",
                                       "best case / worst case step time?"])
def test_the_two_ends_of_a_figure_ask_for_the_plans_intervals(service, follow_up):
    first, second = turns(service, "mistral 7b, 16 a100, seq 4k, gbs 256 - best plan?", follow_up)
    assert calls(second) == ["evaluate_plan"]
    best = figures(first, "recommend_plans")["best"]["strategy"]
    asked = call(second, "evaluate_plan")["arguments"]["plan"]
    assert {k: asked[k] for k in ("tp", "pp", "cp", "zero", "micro_batch")} == \
        {k: best[k if k != "zero" else "zero_stage"] for k in ("tp", "pp", "cp", "zero", "micro_batch")}
    low, high = figures(second, "evaluate_plan")["evaluation"]["time"]["step_s_range"]  # the engine's 80 % interval
    assert f"{low:.1f} s" in second.answer and f"{high:.1f} s" in second.answer


# -- 2. the profile fitted in this chat, named loosely -------------------------------------------------------------

@pytest.mark.parametrize("follow_up", ["and the band with calibration applied?", "ok so the interval after calibrating?"])
def test_with_calibration_after_a_fit_uses_the_profile(service, follow_up):
    _, fitted, asked = turns(service, "qwen2.5 7b on 8 h100, tp2 zero1 mb1, seq 4k, gbs 128. how sure is the tok/s?",
                             "we measured 7,100 tok/s/gpu on that, fit to it", follow_up)
    assert calls(fitted) == ["calibrate_to_measurement"]
    assert calls(asked) == ["evaluate_plan"]
    per_gpu = figures(asked, "evaluate_plan")["evaluation"]["throughput"]["tokens_per_s_per_gpu"]
    # the profile was fitted to the user's 7,100 tok/s/GPU on this very plan: its prediction for it is that figure
    assert per_gpu == pytest.approx(7100, rel=0.01)


def test_calibration_words_without_a_fitted_profile_still_ask_how():
    assert not profile_meant(normalise("can you help with calibration?"), fitted=False)
    assert not profile_meant(normalise("help with calibration docs"), fitted=True)
    assert profile_meant(normalise("what's the range now w/ calibration?"), fitted=True)


# -- 3. no valid plan to export: the rule that excluded them ------------------------------------------------------

@pytest.mark.parametrize("text", ["deepspeed json for mistral 7b on 8 h100 at fp8, seq 4k gbs 128, we train with deepspeed",
                                  "give me a ds_config in fp8 for qwen2.5 7b on 16 h100s (deepspeed is our framework)"])
def test_a_deepspeed_export_at_fp8_says_deepspeed_has_no_fp8_switch(service, text):
    [done] = turns(service, text)
    assert calls(done) == ["export_config"]
    result = figures(done, "export_config")
    limit = LIMITS_BY_NAME["fp8"]
    assert result["exported"] is False and limit.reason(None) in result["refused_reason"]
    assert "(none)" not in done.answer and "FP8" in done.answer and "bf16" in done.answer


def test_the_export_tool_says_the_blocking_rule_when_no_plan_is_valid():
    out = dispatch("export_config", json.dumps({"scenario": {"model": "llama-3.1-8b", "gpu": "h100", "gpus": 8,
                                                             "seq_len": 4096, "global_batch": 256, "precision": "fp8",
                                                             "framework": "deepspeed"}, "format": "deepspeed"}),
                   result_id="R1")
    assert out.ok and out.result.exported is False
    assert LIMITS_BY_NAME["fp8"].reason(None) in out.result.refused_reason
    assert "nothing fits" not in out.result.refused_reason


# -- 4. a sample's length outside RL is the sequence length -------------------------------------------------------

@pytest.mark.parametrize("text, seq_len, mode", [
    ("lora fine-tune of mistral 7b on 4 a100, 1k-token completions, gbs 64", 1024, "lora"),
    # DPO trains on prompt + response: 512 + 1,024 = 1,536 tokens
    ("dpo on llama 3.1 8b, 8 h100, 512-token prompts and 1k-token responses, gbs 64", 1536, "dpo"),
])
def test_a_sample_length_outside_rl_is_the_sequence_length(service, text, seq_len, mode):
    [done] = turns(service, text)
    assert calls(done) == ["recommend_plans"]
    scenario = call(done, "recommend_plans")["arguments"]["scenario"]
    assert (scenario["seq_len"], scenario["mode"], scenario["response_len"]) == (seq_len, mode, None)


def test_a_grpo_follow_up_keeps_its_response_length(service):
    _, follow = turns(service, "grpo on qwen2.5 7b, 8 h100, 1k-token responses", "and with 2k-token responses?")
    change = call(follow, "what_if")["arguments"]["change"]
    assert change["response_len"] == 2048 and change["seq_len"] is None


# -- 5. two unknowns and "which do you support" --------------------------------------------------------------------

@pytest.mark.parametrize("text, code", [("pricing 32x mi400x for us. which gpus do you support?", "mi400x"),
                                        ("we have 16x a6000 boxes, plan phi 5 on them?", "a6000")])
def test_an_accelerator_written_n_x_code_is_read_as_unlisted(text, code):
    assert unlisted_accelerator(normalise(text)) == code
    assert extract(text).gpu is None


def test_catalog_questions_are_read_with_what_they_ask_for():
    assert catalogs_asked(normalise("if not, which gpus and models do you actually support")) == (True, True)
    assert catalogs_asked(normalise("what models can you handle?")) == (False, True)
    assert catalogs_asked(normalise("what hardware do you cover")) == (True, False)


def test_unknown_gpu_and_model_with_which_do_you_support_lists_both(service):
    [done] = turns(service, "someone offered us 128x mi400x. plan grok 3 on those? else tell me what hardware and "
                            "which models you support")
    assert {"list_hardware", "lookup_model"} <= set(calls(done))
    gpus = [g.id for g in list_gpus()]
    catalog = next(c for c in done.tool_calls if c["name"] == "lookup_model" and c["arguments"]["name"] is None)
    assert "mi400x" in done.answer.lower() and "grok 3" in done.answer.lower()
    assert all(f"`{g}`" in done.answer for g in gpus)
    assert all(f"`{m['id']}`" in done.answer for m in catalog["result"]["catalog"])


@pytest.mark.parametrize("text", ["lower or higher tp?", "min/max batch size?", "what is the range for tp here"])
def test_two_values_of_a_setting_are_not_an_interval(text):
    from shardwise.agent.planner.intents import UNCERTAINTY
    assert UNCERTAINTY.search(normalise(text)) is None


@pytest.mark.parametrize("text, seq_len", [
    ("lora on llama 3.1 8b, 2 l40s, each example is at most 3k tokens", 3 * 1024),
    ("qlora 8b, 1 a100, conversations are under 3k tokens", 3 * 1024),
    ("lora 8b on 2 l40s, samples ~2k tokens long", 2 * 1024),
])
def test_a_bound_on_the_samples_length_is_the_sequence_length(text, seq_len):
    e = extract(text)
    assert (e.seq_len, e.response_len) == (seq_len, None)


def test_which_gpus_and_models_do_you_support_lists_both_alone(service):
    [done] = turns(service, "ok which accelerators and models do you actually support?")
    assert calls(done) == ["list_hardware", "lookup_model"]
