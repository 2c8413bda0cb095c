"""The offline planner on the failure causes the twelfth fresh held-out set's first run exposed, each tested in
phrasings of our own, not the eval cases'. Expected values are read off the sentence by hand (a DGX server
holds eight GPUs, NVIDIA's DGX H100/B200/A100 datasheets; HF Trainer's global batch is
per_device_train_batch_size x gradient_accumulation_steps x data-parallel size, its `total_train_batch_size`)
or come from the engine called directly here, never from the planner's answer."""

from __future__ import annotations

import re

import pytest

from shardwise.agent.planner.entities import extract
from shardwise.agent.planner.measured import PROFILE_ASKED
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.search import recommend
from shardwise.engine.training import TrainingSetup

from support.chat import ask


# ---- 1. a DGX/HGX named with a count is that many servers of eight ---------------------------------------
@pytest.mark.parametrize("message, gpus", [
    ("3x DGX H100, mistral 7b, 4k, gbs 256. layout?", 3 * 8),
    ("we rent 2 dgx b200 for qwen2.5-14b, 8k ctx", 2 * 8),
    ("a DGX A100 80GB, llama 8b lora", 1 * 8),
    ("four HGX H100 for llama 70b, 4k", 4 * 8),
])
def test_a_count_of_dgx_servers_is_eight_gpus_each(message, gpus):
    assert extract(message).scenario_patch().gpus == gpus


def test_a_total_said_beside_the_servers_still_wins():
    # "2 DGX H100 (16 GPUs total)": the total agrees with 2 x 8 and is taken as written
    assert extract("got 2 DGX H100 (16 GPUs total), llama 8b").scenario_patch().gpus == 16


# ---- 2. a per-device batch with gradient accumulation gives the global batch ----------------------------
@pytest.mark.parametrize("message, batch", [
    # 2 per device x 8 accumulation x 16 GPUs / TP 1 = 256 sequences
    ("mistral 7b on 16 h100, per_device_train_batch_size=2, gradient_accumulation_steps=8, seq 2048", 2 * 8 * 16),
    # 1 x 16 x (32 GPUs / TP 2 = 16 replicas) = 256
    ("llama 8b, 32 h100, tp2, micro batch 1 with 16 grad accum steps, 4k ctx", 1 * 16 * (32 // 2)),
    # 4 x 2 x (one 8-GPU node / (TP 2 x PP 2) = 2 replicas) = 16
    ("qwen 14b on one 8x a100 node, tp2 pp2, per-device batch 4, grad accumulation 2, 4k", 4 * 2 * (8 // 4)),
])
def test_per_device_batch_times_accumulation_times_replicas(message, batch):
    assert extract(message).scenario_patch().global_batch == batch


def test_a_global_batch_said_outright_is_not_recomputed():
    e = extract("llama 8b, 8 h100, mb 2, grad accum 4, gbs 128, 4k")  # 2 x 4 x 8 = 64, but 128 is what they said
    assert e.scenario_patch().global_batch == 128


# ---- 3. another line's number before "seq is 32k" is not the length ------------------------------------
@pytest.mark.parametrize("message, seq_len", [
    ("pipeline-model-parallel size: 2\nseq is 16k, calibrate please", 16384),
    ("world size: 8\nseq = 4096", 4096),
    ("num layers 32. seq: 8k", 8192),
])
def test_a_count_before_a_sequence_sentence_is_not_its_length(message, seq_len):
    assert extract(message).seq_len == seq_len


# ---- 4. "why would A beat B" compares the two plans --------------------------------------------------------
@pytest.mark.parametrize("message, a, b", [
    ("llama 70b on 64 h100, 8k, gbs 512, zero1 mb1 for both: why would tp8 pp2 beat tp4 pp4?",
     {"tp": 8, "pp": 2}, {"tp": 4, "pp": 4}),
    ("llama 70b on 64 h100, 8k, gbs 512. how does tp4 pp2 outperform tp8 pp1 with zero3 mb1 for both?",
     {"tp": 4, "pp": 2}, {"tp": 8, "pp": 1}),
])
def test_why_one_plan_beats_another_is_a_comparison(make_service, message, a, b):
    [(calls, answer)] = ask(make_service(), message)
    name, args = calls[-1]
    assert name == "compare_plans"
    assert {k: args["plan_a"][k] for k in a} == a and {k: args["plan_b"][k] for k in b} == b


# ---- 5. a token budget and a price: time, GPU-hours and cost of the recommended plan --------------------
@pytest.mark.parametrize("message, tokens, price", [
    ("mistral 7b on 32 h100, 4k, gbs 512, we have 300B tokens at $2.2/gpu-hr. best plan and cost?", 300e9, 2.2),
    ("mistral 7b on 32 h100, 4k, gbs 512, 0.3 trillion tokens, 2.2 usd per gpu hour - what's the bill?", 0.3e12, 2.2),
])
def test_a_token_budget_and_price_reach_the_recommendation(make_service, message, tokens, price):
    [(calls, answer)] = ask(make_service(), message)
    name, args = calls[0]
    assert name == "recommend_plans" and args["price_per_gpu_hour"] == price
    # the best plan's throughput from the engine itself, then engine/cost.py's formulas by hand:
    # GPU-hours = tokens / (tokens/s) x GPUs / 3600; cost = GPU-hours x price
    rec = recommend(get_model("mistral-7b"), build_cluster("h100-sxm", 32), TrainingSetup(seq_len=4096, global_batch=512),
                    top_k=1)
    gpu_hours = tokens / rec.plans[0].throughput.tokens_per_s * 32 / 3600
    assert f"**{gpu_hours:,.0f} GPU-hours**" in answer
    assert f"**${gpu_hours * price:,.0f}**" in answer and f"${price:.2f}/GPU-hour (your rate)" in answer


def test_no_budget_no_cost_line(make_service):
    [(calls, answer)] = ask(make_service(), "mistral 7b on 32 h100, 4k, gbs 512. best plan?")
    assert "train_tokens" not in calls[0][1] and "**Cost:**" not in answer


@pytest.mark.parametrize("message, budget", [
    ("pretrain on 1.5T tokens", "1.5T"), ("200 billion tokens total", "200B"),
    ("4M tok batch", None), ("a 2b tokens per batch run", None),  # a batch, not a budget
])
def test_a_budget_is_billions_or_trillions_of_tokens(message, budget):
    assert extract(message).train_tokens == budget


# ---- 6. the profile asked for in chat shorthand -------------------------------------------------------------
@pytest.mark.parametrize("message", [
    "w/ our calibration what tok/s/gpu should we expect?",
    "given ur profile, how fast is tp4?",
    "does ur calibration carry over to h200?",
    "based on our calibration, what step time?",
])
def test_the_profile_asked_in_shorthand(message):
    assert PROFILE_ASKED.search(message.lower())


# ---- 7. the same plan moved to other hardware: that plan evaluated there, and the profile said not to apply ----
def test_the_same_plan_on_new_hardware_is_evaluated_and_the_h100_profile_does_not_apply(make_service):
    turns = ask(make_service(), "mistral 7b on one 8x h100 node, 4k ctx, gbs 256, tp1 zero1 mb2. measured 9,000 tok/s/gpu,"
                                " calibrate to that",
                "same plan on an 8x h200 node - does our profile still apply? step time there?")
    calls, answer = turns[1]
    name, args = calls[-1]
    assert name == "evaluate_plan" and args["scenario"]["gpu"] == "h200"
    assert (args["plan"]["tp"], args["plan"]["zero"], args["plan"]["micro_batch"]) == (1, 1, 2)
    assert re.search(r"[Pp]rofile not applied", answer) and "H200" in answer
