"""The offline planner on phrasings engineers write in Slack and issues. Written for the causes the
fresh held-out evals exposed (docs/evals.md), in phrasings of our own (not the eval cases'); every
expected value is read off the sentence by hand: "bs 24" is a global batch of 24 sequences,
"max_len 1024" a sequence length of 1,024 tokens, "gbs 2k" 2 x 1024 = 2,048 sequences."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract
from shardwise.agent.planner.intents import classify
from shardwise.agent.state import ConversationState
from support.what_if_checks import assert_read_as_what_if

# ---- 1. setup phrasings: batch, sequence length, GPU spellings, model nicknames ----------------------

SETUP = [
    ("phi-4 on 8 h100s, bs 24, 4k ctx", dict(model="phi-4", gpu="h100-sxm", gpus=8, global_batch=24, seq_len=4096)),
    ("qwen3 8b, 16 h200, bs=48, seq 2048", dict(model="qwen3-8b", gpus=16, global_batch=48, seq_len=2048)),
    ("falcon 7b, 8 l40s, total bs 96, max_len 1024", dict(model="falcon-7b", gpu="l40s", global_batch=96, seq_len=1024)),
    ("olmo2 7b on 32 b200, global bs 768, max_seq_len=3072", dict(gpu="b200", gpus=32, global_batch=768, seq_len=3072)),
    ("gemma 2 27b, 64 h100, gbs 2k, ctx 16k", dict(model="gemma-2-27b", global_batch=2048, seq_len=16384)),
    ("qwen2.5-14b on 24 a100s, global 192, seqlen=6144", dict(gpus=24, global_batch=192, seq_len=6144)),
    ("4 A100-40G for a 3b", dict(gpu="a100-40gb", gpus=4)),
    ("mistral 7b on 16 A100 40GB", dict(gpu="a100-40gb", gpus=16)),
    ("32 a100-80g, llama 3 8b", dict(gpu="a100-80gb", gpus=32, model="llama-3-8b")),
    ("a node of 8 H100 80GB HBM3", dict(gpu="h100-sxm", gpus=8)),
    ("24 MI300 over roce", dict(gpu="mi300x", gpus=24)),
    ("3x8 A100 80G, seq 4k", dict(gpu="a100-80gb", gpus=24, gpus_per_node=8)),
    ("DSv3 finetune on 256 h800", dict(model="deepseek-v3", gpu="h800", gpus=256)),
    ("ds-v3 on 1024 h100", dict(model="deepseek-v3", gpus=1024)),
    ("L3.1-70B on 64 h100", dict(model="llama-3.1-70b")),
    ("mixtral 8x22 on 128 h100", dict(model="mixtral-8x22b")),
]


@pytest.mark.parametrize("message, expected", SETUP)
def test_setup_is_read(message, expected):
    scenario = extract(message).scenario_patch()
    assert {k: getattr(scenario, k) for k in expected} == expected


def test_node_count_that_contradicts_the_gpu_count_is_asked_about():
    # 24 GPUs written, but 2 nodes x 8 = 16: neither is guessed
    message = "phi-4 on 24 H100 (2 nodes x 8), 4k, gbs 128, what plan?"
    e = extract(message)
    assert e.conflicts and classify(message, e, ConversationState()).family == "clarify"


# ---- 2. a change stated as news, not asked as "what if" ---------------------------------------------

from shardwise.tools.scenario import Scenario  # noqa: E402

WHAT_IFS = [  # (message, the setup before the change, the change)
    ("phi-4 on 32 H100 over NDR, 4k ctx, gbs 256. the new site only has 100GbE, what now?",
     dict(network="ib-ndr", gpus=32), dict(network="eth-100g")),
    ("llama 3 8b on 8 A100 80GB, 2k seq, bs 64. we got budget for 8 H200s instead, new plan?",
     dict(gpu="a100-80gb", gpus=8), dict(gpu="h200", gpus=8)),
    ("qwen3 8b, 16 h100, 4k, 1M tok batch. thinking of raising the batch to 4M tokens",
     dict(global_batch_tokens="1M"), dict(global_batch_tokens="4M")),
    ("gemma 2 9b LoRA r=16 on 2 h100, 4k ctx, bs 8. does QLoRA change anything?",
     dict(mode="lora", lora_rank=16), dict(mode="qlora")),
    ("mistral 7b on 16 a100s, seq 4096, gbs 128. we're moving to MI300X next month",
     dict(gpu="a100-80gb"), dict(gpu="mi300x")),
]


@pytest.mark.parametrize("message, before, change", WHAT_IFS)
def test_change_stated_as_news_is_a_what_if(message, before, change):
    assert_read_as_what_if(message, before, change)


SESSION = ConversationState(scenario=Scenario(model="phi-4", gpu="h100", gpus=48, seq_len=4096, global_batch=256))


@pytest.mark.parametrize("message, gpus", [
    ("finance says we can only have half as many nodes", 24),  # 48 / 2
    ("turns out we get double the gpus", 96),  # 48 x 2
    ("fine, assume 40 of them then", 40),
])
def test_follow_up_changing_the_gpu_count(message, gpus):
    e = extract(message)
    assert classify(message, e, SESSION).family == "what_if"
    assert e.scenario_patch(base_gpus=48).gpus == gpus


# ---- 3. "A vs B": each side keeps the knobs the user stated for it ----------------------------------

COMPARISONS = [
    # the layout in an earlier clause is shared; the contrast is the knob in the question
    ("phi-4 on 64 h100, tp4 pp2 mb2 (4k, gbs 512): should we stay on zero-2 instead of zero-3?",
     [dict(tp=4, pp=2, micro_batch=2, zero=2), dict(tp=4, pp=2, micro_batch=2, zero=3)]),
    # "for both" settings go to both sides
    ("qwen3 8b, 32k, 16 h100, gbs 32. selective recompute, mb1, zero2 for both: CP=2 or TP=2?",
     [dict(recompute="selective", micro_batch=1, zero=2, cp=2), dict(recompute="selective", micro_batch=1, zero=2, tp=2)]),
    # "X vs plain" is the same plan with X off
    ("llama 3 70b, 128 h100, tp8 pp4 mb1, 8k -- vpp=4 vs plain pipeline, which wins?",
     [dict(tp=8, pp=4, micro_batch=1, vpp=4), dict(tp=8, pp=4, micro_batch=1, vpp=1)]),
    ("qwen3 8b on 8 h100, 128k ctx, tp2 mb1 -- cp=4 vs no cp?",
     [dict(tp=2, micro_batch=1, cp=4), dict(tp=2, micro_batch=1, cp=1)]),
]


@pytest.mark.parametrize("message, plans", COMPARISONS)
def test_comparison_sides(message, plans):
    e = extract(message)
    assert e.plans == plans
    assert classify(message, e, ConversationState()).family == "compare"


# ---- 4. the question goes to the tool that answers it -----------------------------------------------

ROUTES = [
    # a value of the plan asked for is a recommendation, not the glossary entry of that knob
    ("gemma 2 27b on 64 h100, 4k ctx, gbs 512. which plan would you pick, and what tp degree?", "recommend"),
    ("phi-4, 32 h200, seq 4096, bs 256 -- whats the zero stage you'd recommend?", "recommend"),
    # where the memory goes: the memory estimate
    ("qwen3 4b on one h100, 16k ctx, gbs 16: where does my memory go? break it down", "memory"),
    ("what eats all the vram for llama 3 8b on 8 a100s, 8k, gbs 64?", "memory"),
    # "what does X buy me" is a question about the idea X, with their numbers
    ("llama 3 70b, 64 h100, tp8 pp8 mb1, 8k, gbs 128: what does interleaving buy us here?", "explain"),
    # a plan pasted for review wants a verdict, not a config file
    ("sanity check this config pls\ntp: 4\npp: 2\nzero: 1\nmicro_batch: 2\n(phi-4, 16 h100, 4k, gbs 256)", "evaluate"),
    ("can you review our setup? qwen3 8b, 8 h100, 8k ctx, bs 64, tp2 mbs 1 zero2 -- is it ok?", "evaluate"),
    # reading papers is not what the advisor does
    ("tldr the deepseek v3 paper please", "out_of_domain"),
    ("summarize the gemma 2 tech paper in a few bullets", "out_of_domain"),
]


@pytest.mark.parametrize("message, family", ROUTES)
def test_question_routing(message, family):
    assert classify(message, extract(message), ConversationState()).family == family


def test_interleaving_question_names_the_virtual_pipeline_concept():
    message = "how much bubble does interleaved 1F1B remove for us? llama 3 70b, 64 h100, tp8 pp8 mb1, 8k, gbs 128"
    assert classify(message, extract(message), ConversationState()).detail == "virtual_pipeline"


# ---- end to end: the tool called and its arguments ---------------------------------------------------

def ask(service, *messages):
    """The tool calls of each turn of one conversation: [[(name, arguments), ...], ...]."""
    from shardwise.agent.events import DoneEvent

    session, calls = None, []
    for message in messages:
        done = next(e for e in service.stream(message, session) if isinstance(e, DoneEvent))
        session = done.session_id
        calls.append([(c["name"], c["arguments"]) for c in done.tool_calls])
    return calls


def test_news_of_a_slower_network_is_answered_for_the_new_network(make_service):
    [calls] = ask(make_service(), "phi-4 on 32 H100 over NDR, 4k ctx, gbs 256. the new site only has 100GbE, what now?")
    name, args = calls[0]
    assert name == "what_if" and args["change"]["network"] == "eth-100g" and args["scenario"]["network"] == "ib-ndr"


def test_half_as_many_gpus_carries_into_the_next_turn(make_service):
    turns = ask(make_service(), "phi-4, 48 h100, 4k, gbs 384. plan?", "finance says we can only have half as many gpus",
                "and with LoRA?")
    _, args = turns[2][0]
    assert args["scenario"]["gpus"] == 24  # 48 / 2, carried from turn 2


def test_comparison_keeps_each_sides_knobs(make_service):
    [calls] = ask(make_service(), "phi-4 on 64 h100, tp4 pp2 mb2 (4k, gbs 512): should we stay on zero-2 instead of zero-3?")
    name, args = calls[-1]
    assert name == "compare_plans"
    picked = ("tp", "pp", "micro_batch", "zero")
    assert [{k: args[side][k] for k in picked} for side in ("plan_a", "plan_b")] == \
        [dict(tp=4, pp=2, micro_batch=2, zero=2), dict(tp=4, pp=2, micro_batch=2, zero=3)]


def test_memory_breakdown_question_estimates_memory(make_service):
    [calls] = ask(make_service(), "qwen3 1.7b on one h100, 4k ctx, gbs 16: where does my memory go? break it down")
    assert "estimate_memory" in [name for name, _ in calls]


def test_pasted_plan_to_review_is_evaluated_not_exported(make_service):
    [calls] = ask(make_service(), "sanity check this config pls\ntp: 4\npp: 2\nzero: 1\nmicro_batch: 2\n"
                                  "(phi-4, 16 h100, 4k, gbs 256)")
    name, args = calls[0]
    assert name == "evaluate_plan"
    assert {k: args["plan"][k] for k in ("tp", "pp", "zero", "micro_batch")} == dict(tp=4, pp=2, zero=1, micro_batch=2)
