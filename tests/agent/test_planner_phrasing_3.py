"""The offline planner on the failure causes the third fresh held-out set exposed (docs/evals.md,
"Third fresh held-out set"), each tested in phrasings of our own, not the eval cases'. Every
expected value is read off the sentence by hand: "quarter of a million tokens" is 0.25M, which
`--global-batch-tokens` reads as 0.25 x 2^20 = 262,144; "5 servers, each with 4 A100s" is 5 x 4 = 20
GPUs; "2 extra boxes like this" on a 16-GPU setup of 8-GPU nodes is 16 + 2 x 8 = 32."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract, normalise
from shardwise.agent.planner.intents import classify
from shardwise.agent.planner.names import find_link_speed
from shardwise.agent.state import ConversationState
from shardwise.engine.inputs import parse_token_count

from support.chat import ask


# ---- 1. the global batch in sequences, however it is abbreviated ------------------------------------

@pytest.mark.parametrize("message, batch", [
    ("qwen3 8b on 16 h100, 8k ctx, bsz 1024", 1024),
    ("qwen3 8b on 16 h100, 8k ctx, bsz=96", 96),
    ("qwen3 8b on 16 h100, 8k ctx, gbs of 384", 384),
    ("qwen3 8b on 16 h100, 8k ctx, batch size 48", 48),
    ("qwen3 8b on 16 h100, 8k ctx, global bs 192", 192),
    ("phi-4 on 2 nodes of 8 a100, 2k/256", 256),  # seq/batch, the way recipes abbreviate it
])
def test_global_batch_abbreviations(message, batch):
    e = extract(message)
    assert (e.global_batch, e.global_batch_tokens) == (batch, None)


def test_seq_slash_batch_gives_both():
    e = extract("phi-4 on 2 nodes of 8 a100, 2k/256")
    assert (e.seq_len, e.global_batch) == (2 * 1024, 256)


# ---- 2. a token budget per step in words -----------------------------------------------------------

@pytest.mark.parametrize("message, written, tokens", [
    ("llama 3 8b, 32 h100, 4k ctx, roughly a quarter of a million tokens per step", "0.25M", 262_144),
    ("llama 3 8b, 32 h100, 4k ctx, about one million tokens/batch", "1M", 1_048_576),
    ("llama 3 8b, 32 h100, 4k ctx, 3 million tok per step", "3M", 3 * 1_048_576),
    ("llama 3 8b, 32 h100, 4k ctx, 2.5M tok", "2.5M", 2_621_440),
    ("llama 3 8b, 32 h100, 4k ctx, 256k tokens per iteration", "256K", 262_144),
])
def test_token_batch_in_words(message, written, tokens):
    e = extract(message)
    assert (e.global_batch, e.global_batch_tokens) == (None, written)
    assert parse_token_count(e.global_batch_tokens) == tokens


def test_a_million_token_context_is_a_length_not_a_batch():
    e = extract("llama 3 8b on 256 h100 with a 1M token context, gbs 16")
    assert (e.seq_len, e.global_batch, e.global_batch_tokens) == (1_048_576, 16, None)


# ---- 3. N nodes, each with M GPUs ------------------------------------------------------------------

@pytest.mark.parametrize("message, nodes, per_node", [
    ("mistral 7b on 5 servers, each with 4 A100s, 4k ctx", 5, 4),
    ("mistral 7b on 6 nodes w/ 8 H200s each, 4k ctx", 6, 8),
    ("mistral 7b on 2 boxes holding 8x L40S each, 4k ctx", 2, 8),
])
def test_nodes_with_gpus_each(message, nodes, per_node):
    e = extract(message)
    assert (e.nodes, e.gpus_per_node) == (nodes, per_node)
    assert e.scenario_patch().gpus == nodes * per_node


# ---- 4. activation checkpointing is recompute -------------------------------------------------------

@pytest.mark.parametrize("message, recompute", [
    ("llama 3 8b on 8 h100, tp 2 mbs 2 with gradient checkpointing, 8k ctx, gbs 64", "full"),
    ("llama 3 8b on 8 h100, tp 2 mbs 2, grad ckpt on, 8k ctx, gbs 64", "full"),
    ("llama 3 8b on 8 h100, tp 2 mbs 2, activation checkpointing, 8k ctx, gbs 64", "full"),
    ("llama 3 8b on 8 h100, tp 2 mbs 2, act ckpt, 8k ctx, gbs 64", "full"),
    ("llama 3 8b on 8 h100, tp 2 mbs 2, selective act ckpt, 8k ctx, gbs 64", "selective"),
    ("llama 3 8b on 8 h100, tp 2 mbs 2, no activation checkpointing, 8k ctx, gbs 64", "none"),
])
def test_checkpointing_words_set_recompute(message, recompute):
    [plan] = extract(message).plans
    assert plan["recompute"] == recompute and plan["tp"] == 2


def test_checkpointing_asked_about_is_the_concept():
    intent = classify("what is gradient checkpointing?", extract("what is gradient checkpointing?"),
                      ConversationState())
    assert (intent.family, intent.detail) == ("explain", "activation_recompute")


def test_act_ckpt_reaches_the_evaluated_plan(make_service):
    [(calls, _)] = ask(make_service(), "qwen3 8b on one 8xH100 node, tp2 zero1 mbs 1 with act ckpt, 4k ctx, "
                                       "gbs 64: how fast is that?")
    assert calls[0][0] == "evaluate_plan" and calls[0][1]["plan"]["recompute"] == "full"


# ---- 5./6. a concept asked about beside a scenario is explained ----------------------------------

@pytest.mark.parametrize("message, concept", [
    ("so what exactly is tensor parallelism doing in our run? llama 3 8b, 16 h100, tp4 pp1 mbs 1, 4k ctx, gbs 64",
     "tensor_parallel"),
    ("what really *is* ZeRO here -- llama 3 8b, 16 h100, zero3 mbs 1, 4k ctx, gbs 64", "zero"),
    ("how does the bubble work for us: llama 3 70b, 64 h100, tp8 pp4 mbs 1, 8k ctx, gbs 256", "pipeline_bubble"),
    ("how come QLoRA makes a 70b fit on one h100? 2k ctx, bs 8", "qlora"),
    ("how come lora allows mistral 7b on a single 3090? walk me through the memory, 2k ctx bs 8", "lora"),
])
def test_concept_question_with_a_scenario_is_explained(message, concept):
    intent = classify(message, extract(message), ConversationState())
    assert (intent.family, intent.detail) == ("explain", concept)


def test_lora_memory_walkthrough_explains_then_breaks_memory_down(make_service):
    [(calls, answer)] = ask(make_service(), "how come lora lets llama 3 8b train on one L40S? walk me through "
                                            "the memory, 2k ctx bs 8")
    assert [name for name, _ in calls] == ["explain_concept", "estimate_memory"]
    assert calls[0][1]["concept"] == "lora" and calls[0][1]["scenario"]["mode"] == "lora"
    assert "frozen" in answer.lower() or "freezes" in answer.lower()
    assert "optimizer states" in answer


def test_how_come_about_a_plan_still_asks_why():
    message = "how come the planner picked tp8 over tp4?"
    assert classify(message, extract(message), ConversationState()).family == "compare"


# ---- 7. network speeds read to the catalog network, or said when there is none ---------------------

@pytest.mark.parametrize("text, network", [
    ("25gbe between the racks", "eth-25g"),
    ("only 25 gigabit ethernet", "eth-25g"),
    ("100G ethernet", "eth-100g"),
    ("roce v2 at 200 gb/s", "roce-200g"),
    ("200G RoCE fabric", "roce-200g"),
    ("400 gbps infiniband", "ib-ndr"),
    ("IB 200G", "ib-hdr"),
])
def test_link_speeds_match_the_catalog(text, network):
    assert find_link_speed(normalise(text)) == (network, None)


@pytest.mark.parametrize("text", ["a100 80gb", "24g of vram", "h100 80gb, ib"])
def test_memory_sizes_are_not_links(text):
    assert find_link_speed(text)[0] is None and find_link_speed(text)[1] is None


def test_a_speed_the_catalog_lacks_is_said_not_replaced(make_service):
    [(calls, answer)] = ask(make_service(), "llama 3 8b on 2 nodes of 8 a100, 4k ctx, gbs 128, nodes linked by "
                                            "10 gig ethernet. best plan?")
    assert calls[0][1]["scenario"]["network"] is None  # not the 100 GbE network silently
    assert "no 10 Gb/s Ethernet network" in answer


def test_network_change_in_a_what_if(make_service):
    [(calls, _)] = ask(make_service(), "qwen3 8b on 2 nodes x 8 h100, 8k/128. we'd move to 25GbE between nodes "
                                       "instead of IB, does the plan change?")
    assert calls[0][0] == "what_if" and calls[0][1]["change"]["network"] == "eth-25g"
    assert calls[0][1]["scenario"]["global_batch"] == 128


# ---- 8. "N more nodes" adds to the current count ----------------------------------------------------

@pytest.mark.parametrize("follow_up, gpus", [
    ("and if we add 2 extra boxes like this?", 16 + 2 * 8),
    ("what about another 3 nodes?", 16 + 3 * 8),
    ("what if we got 8 more gpus", 16 + 8),
])
def test_more_nodes_add_to_the_current_count(make_service, follow_up, gpus):
    _, (calls, _) = ask(make_service(), "llama 3 8b on 2 nodes of 8 h100, 4k ctx, gbs 128", follow_up)
    assert calls[0][0] == "what_if"
    assert calls[0][1]["change"]["gpus"] == gpus


# ---- 9. a mode ruled out is not chosen -------------------------------------------------------------

@pytest.mark.parametrize("message, mode", [
    ("lora on llama 3 8b, no qlora, 1 a100", "lora"),
    ("plain lora without quantization, llama 3 8b on 1 a100", "lora"),
    ("llama 3 8b lora (16-bit base, NOT q-lora) on 1 a100", "lora"),
    ("not qlora -- full finetune of llama 3 8b on 8 a100", "full"),
    ("qlora on llama 3 70b, 1 a100", "qlora"),
])
def test_negated_mode_is_not_selected(message, mode):
    assert extract(message).mode == mode


# ---- 10. cluster operations and scripting are out of domain ----------------------------------------

@pytest.mark.parametrize("message", [
    "could you draft a cron job that restarts my job if a node crashes",
    "write a python script to resubmit failed sbatch jobs",
    "need a watchdog that pings me when a node goes down",
    "write me a bash one-liner that tails all the logs",
])
def test_cluster_ops_requests_are_out_of_domain(message):
    assert classify(message, extract(message), ConversationState()).family == "out_of_domain"


@pytest.mark.parametrize("message", ["give me the launch script", "write a bash script to launch torchrun for it"])
def test_launch_scripts_are_still_exports(message):
    assert classify(message, extract(message), ConversationState()).family == "export"


def test_ops_answer_says_what_shardwise_does(make_service):
    [(calls, answer)] = ask(make_service(), "can you script an auto-resubmit of my sbatch job for when a node fails?")
    assert calls == []
    assert "shardwise export --format launch" in answer and "distributed training" in answer
