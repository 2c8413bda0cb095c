"""The offline planner reads the setup options said in words (agent/planner/setup_words.py): the MoE
dispatcher, the expert all-to-all overlap, CUDA graphs and packed data with its document length, in
phrasings of our own. Expected values are read off each sentence ("~200 tokens each" is 200; "1k" is 1,024
as every length here); "cuda graphs" with no scope is per-layer, the reading documented in setup_words.py
(Megatron's --enable-cuda-graph captures per layer), and the answer must say it was assumed. Invalid
combinations must come back as the engine's own sentence (engine/training.py, engine/validity/graphs.py)."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract

from support.chat import ask


@pytest.mark.parametrize("message, dispatcher", [
    ("we run DeepEP for the expert dispatch on our 256 h100s", "deepep"),
    ("qwen3 30b a3b, allgather dispatcher, 32 h100", "allgather"),
    ("mixtral on 64 h100 with the all-to-all token dispatcher", "alltoall"),
    ("--moe-token-dispatcher-type flex --moe-enable-deepep", "deepep"),
    ("we moved from the alltoall dispatcher to deepep", "deepep"),
    ("what if we ran it without deepep?", "alltoall"),  # Megatron-Core's default dispatcher
    ("deepep vs alltoall dispatcher, which is faster?", None),  # two named side by side: not guessed
])
def test_dispatcher_words(message, dispatcher):
    assert extract(message).moe_dispatcher == dispatcher


@pytest.mark.parametrize("message, overlap", [
    ("we overlap the all-to-all with the other micro-batch", True),
    ("a2a overlap is on", True),
    ("what if we overlap the ep comms?", True),
    ("ep overlap off", False),
    ("we don't overlap the a2a yet", False),
    ("we overlap grad reduce with backward", None),  # a DP overlap, not the expert all-to-all
])
def test_overlap_words(message, overlap):
    assert extract(message).moe_a2a_overlap is overlap


@pytest.mark.parametrize("message, graphs, assumed", [
    ("full cuda graphs", "full-iteration", False),
    ("we capture full-iteration graphs", "full-iteration", False),
    ("--cuda-graph-impl local --cuda-graph-scope full_iteration", "full-iteration", False),
    ("per-layer cuda graphs only", "per-layer", False),
    ("TE graphs for attn and mlp", "per-layer", False),
    ("per-layer graphs instead of full cuda graphs", "per-layer", False),
    ("no cuda graphs please", "none", False),
    ("we turned off CUDA graphs", "none", False),
    ("with cuda graphs", "per-layer", True),
])
def test_cuda_graph_words(message, graphs, assumed):
    e = extract(message)
    assert (e.cuda_graphs, e.cuda_graphs_unscoped) == (graphs, assumed)


@pytest.mark.parametrize("message, doc_len", [
    ("sft on packed alpaca samples, ~200 tokens each", 200),
    ("mean doc length 512", 512),
    ("average sample length of about 1k tokens, packed into 8k sequences", 1024),
    ("sequence packing, 300-token conversations", 300),
])
def test_packed_document_length(message, doc_len):
    e = extract(message)
    assert e.mean_doc_len == doc_len and e.packed


def test_a_packed_document_length_is_not_the_sequence():
    # "~200 tokens each" of packed samples is the documents' length; the sequence is the 8k said
    e = extract("llama 3.1 8b, 8k sequences packed with samples of ~200 tokens each")
    assert (e.seq_len, e.mean_doc_len) == (8192, 200)


@pytest.mark.parametrize("message", [
    "can shardwise plan a graph neural network on 8 h100?",
    "the dispatcher thread hangs when we use all-to-all on 16 nodes",
    "we ship packed bf16 weights, llama 3.1 8b on 8 h100",
    "we overlap the optimizer step with the all-gather",
])
def test_no_false_positives(message):
    e = extract(message)
    assert (e.moe_dispatcher, e.moe_a2a_overlap, e.cuda_graphs, e.mean_doc_len, e.packed) == (None, None, None, None, False)


def test_the_setup_said_is_priced_and_stated(make_service):
    [(calls, answer)] = ask(make_service(), "deepseek-v3 on 2048 h800, we use deepep with full cuda graphs and overlap the a2a")
    name, args = calls[0]
    assert name == "recommend_plans"
    s = args["scenario"]
    assert (s["moe_dispatcher"], s["cuda_graphs"], s["moe_a2a_overlap"]) == ("deepep", "full-iteration", True)
    understood = answer.split("\n")[0]
    assert "deepep dispatcher" in understood and "full-iteration CUDA graphs" in understood
    assert "EP all-to-all overlapped" in understood


def test_unscoped_graphs_are_said_to_be_a_default(make_service):
    [(calls, answer)] = ask(make_service(), "llama 3.1 8b on 16 h100 with cuda graphs, what layout?")
    assert calls[0][1]["scenario"]["cuda_graphs"] == "per-layer"
    _, defaults = answer.split("\n")[0].split("_defaults:_")
    assert '"cuda graphs" read as per-layer CUDA graphs' in defaults and "full-iteration" in defaults


def test_packed_samples_are_priced_per_document(make_service):
    [(calls, answer)] = ask(make_service(), "sft llama 3.1 8b on 8 h100, 4k sequences of packed alpaca samples, ~200 tokens each")
    s = calls[0][1]["scenario"]
    assert (s["seq_len"], s["mean_doc_len"]) == (4096, 200)
    assert "packed documents of 200 tokens on average" in answer.split("\n")[0]


def test_packed_without_a_length_says_what_stood_in(make_service):
    [(calls, answer)] = ask(make_service(), "llama 3.1 8b on 16 h100 with packed sequences, what plan?")
    assert calls[0][1]["scenario"]["mean_doc_len"] is None
    assert "mean document length of the packed data" in answer and "one document per sequence" in answer


def test_graphs_outside_megatron_get_the_engines_sentence(make_service):
    [(_, answer)] = ask(make_service(), "llama 3.1 8b on 16 h100, deepspeed zero-3, cuda graphs on")
    # engine/training.py: CUDA graphs are Megatron-Core's; the sentence names what is allowed
    assert "Megatron-Core option" in answer and "use framework megatron with cuda graphs" in answer
    assert "Value error" not in answer


def test_full_iteration_graphs_of_a_dropless_moe_need_deepep(make_service):
    [(_, answer)] = ask(make_service(), "mixtral 8x7b on 64 h100, full-iteration cuda graphs")
    # engine/validity/graphs.py: the dispatcher's token counts sync with the host; the chat names the setting
    # as its tools do (moe_dispatcher), not as the CLI's flag
    assert "No valid plan" in answer and "valid: moe_dispatcher deepep" in answer and "--moe-dispatcher" not in answer


def test_follow_ups_go_through_what_if(make_service):
    turns = ask(make_service(), "mixtral 8x7b on 64 h100, best layout?", "what if we turn on cuda graphs?",
                "and with deepep?", "what about full cuda graphs?")
    changes = [calls[-1] for calls, _ in turns[1:]]
    assert [name for name, _ in changes] == ["what_if"] * 3
    assert changes[0][1]["change"]["cuda_graphs"] == "per-layer"
    assert changes[1][1]["change"]["moe_dispatcher"] == "deepep"
    assert changes[2][1]["change"]["cuda_graphs"] == "full-iteration"
    assert changes[2][1]["scenario"]["moe_dispatcher"] == "deepep"  # the setup said before is kept
    assert '"cuda graphs" read as per-layer' in turns[1][1]


@pytest.mark.parametrize("message, sides", [
    ("deepep vs alltoall dispatcher, which is faster?", ({"moe_dispatcher": "deepep"}, {"moe_dispatcher": "alltoall"})),
    ("full or per-layer cuda graphs?", ({"cuda_graphs": "full-iteration"}, {"cuda_graphs": "per-layer"})),
    ("with or without cuda graphs?", ({"cuda_graphs": "per-layer"}, {"cuda_graphs": "none"})),
    ("all-gather vs all-to-all for SP?", None),  # collectives, not dispatchers
])
def test_two_values_of_an_option_are_two_sides(message, sides):
    from shardwise.agent.planner.entities import normalise
    from shardwise.agent.planner.sides import scenario_sides

    assert scenario_sides(normalise(message)) == sides


def test_dispatchers_side_by_side(make_service):
    [(calls, answer)] = ask(make_service(), "mixtral 8x7b on 64 h100: deepep or the alltoall dispatcher, which is faster?")
    assert [(name, args["scenario"]["moe_dispatcher"]) for name, args in calls] == [
        ("recommend_plans", "deepep"), ("recommend_plans", "alltoall")]
    assert "| deepep dispatcher [R1] | alltoall dispatcher [R2] |" in answer


@pytest.mark.parametrize("message, packed", [("our samples are packed, ~250 tokens each", True),
                                             ("the int4 weights are packed.", False)])
def test_packed_said_of_the_data_only(message, packed):
    assert extract(message).packed is packed


@pytest.mark.parametrize("message, said", [
    ("plan for DPO on llama 3.1 8b, 8 h100s, pairs of 2k tokens", "DPO"),
    ("grpo with lora on qwen2.5 7b, 16 h100, what layout?", "GRPO with LoRA"),
])
def test_post_training_mode_is_said_not_crashed_on(make_service, message, said):
    """A post-training mode reaches the 'Understood:' line by its algorithm's name (it once raised a
    KeyError there: the line knew only full/LoRA/QLoRA)."""
    [(calls, answer)] = ask(make_service(), message)
    assert [name for name, _ in calls] == ["recommend_plans"]
    assert "internal error" not in answer
    understood = answer.split("\n")[0]
    assert said in understood, understood
