"""Follow-ups the chat got wrong in session 13's trial of everyday what-ifs and issue-14 features (calibrate,
profiles, ranges), each in phrasings of our own. Expected values are read off the message by hand or computed
from the same turn's tool result by the formula written here, never pasted from the planner's answer."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract, normalise
from shardwise.agent.planner.setup_words import find_setup

from support.chat import turns

PLAN_70B = "llama 3.1 70b on 64 h100, 8k context, 4M token batches - what plan?"


# ---- Megatron-Core options in words: the gradient dtype and FP8 weights, not a training precision ----------------
@pytest.mark.parametrize("message, dtype", [
    ("and with grad reduce in bf16?", "bf16"), ("what if we pass --grad-reduce-in-bf16", "bf16"),
    ("bf16 gradient reduction instead?", "bf16"), ("with grad_reduce_in_fp32=False", "bf16"),
    ("keep the grad reduce in fp32", "fp32"), ("and what if we reduce gradients in bf16?", "bf16"),
    ("we all-reduce the grads in fp32", "fp32"),
])
def test_the_gradient_dtype_is_read_and_is_no_precision(message, dtype):
    assert find_setup(normalise(message)).grad_reduce_dtype == dtype
    assert extract(message).precision is None


@pytest.mark.parametrize("message, on", [("what about fp8 with fp8 param gather?", True),
                                         ("--fp8-param-gather please", True), ("without fp8 param gather", False)])
def test_fp8_param_gather_is_read(message, on):
    assert find_setup(normalise(message)).fp8_param_gather is on


@pytest.mark.parametrize("message, modules", [
    ("what if we use selective recompute of core_attn only?", ["core_attn"]),
    ("--recompute-modules core_attn layernorm moe_act", ["core_attn", "layernorm", "moe_act"]),
    ("only recompute the core attention and layernorm", ["core_attn", "layernorm"]),
    ("recompute everything", None), ("layernorm is slow", None),
])
def test_recompute_modules_are_read_beside_recompute(message, modules):
    assert find_setup(normalise(message)).recompute_modules == modules


def test_a_gradient_dtype_what_if_names_its_change(make_service):
    _, done = turns(make_service(), PLAN_70B, "and with grad reduce in bf16?")
    [call] = [c for c in done.tool_calls if c["name"] == "what_if"]
    assert call["arguments"]["change"]["grad_reduce_dtype"] == "bf16" and call["arguments"]["change"]["precision"] is None
    assert "**What if gradient reduction fp32 → bf16?**" in done.answer and "What if ?" not in done.answer


def test_a_what_if_that_changes_nothing_says_so(make_service):
    _, done = turns(make_service(), PLAN_70B, "what if we use bf16?")  # bf16 is already the precision
    assert "What if ?" not in done.answer and "**Nothing changes:**" in done.answer


def test_recompute_modules_are_priced_on_the_plan_on_the_table(make_service):
    first, done = turns(make_service(), "llama 3.1 8b on 16 h100, 8k ctx, gbs 256: plan?",
                        "what if we use selective recompute of core_attn only?")
    [call] = [c for c in done.tool_calls if c["name"] == "what_if"]
    assert call["arguments"]["change"]["recompute_modules"] == ["core_attn"]
    assert call["arguments"]["plan"]["recompute"] == "selective"  # the modules only matter to selective recompute
    assert "recompute modules the model's default → core_attn" in done.answer


# ---- a token budget's cost asked as a follow-up ----------------------------------------------------------------
@pytest.mark.parametrize("follow_up, budget", [("how much would 500B tokens cost?", "500B"),
                                               ("what would it cost for 500B tokens?", "500B"),
                                               ("cost for 1T tokens at $2/gpu-hour?", "1T")])
def test_a_budget_follow_up_is_costed(make_service, follow_up, budget):
    _, done = turns(make_service(), "qwen 2.5 32b, 32 h100, 4k ctx, gbs 512: best plan?", follow_up)
    [call] = [c for c in done.tool_calls if c["name"] == "recommend_plans"]
    assert call["arguments"]["train_tokens"] == budget
    best, cost = call["result"]["best"], call["result"]["cost"]
    tokens = {"500B": 500e9, "1T": 1e12}[budget]
    days = tokens / best["tokens_per_s"] / 86_400  # the budget at the plan's predicted rate, in days
    assert cost["days"] == pytest.approx(days, rel=1e-2)
    assert f"**{cost['days']:,.1f} days**" in done.answer


# ---- "apply it to 64 gpus" right after the calibration offer -----------------------------------------------------
def test_apply_it_to_another_size_uses_the_profile_just_offered(make_service):
    *_, done = turns(make_service(), "qwen 2.5 32b, 32 h100, 4k ctx, gbs 512: best plan?",
                     "we're seeing 38% MFU on that", "apply it to 64 gpus")
    [call] = [c for c in done.tool_calls if c["name"] == "what_if"]
    assert call["arguments"]["change"]["gpus"] == 64
    assert "_With your calibration profile_" in done.answer and "Calibrated:" in done.answer
