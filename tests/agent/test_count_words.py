"""Counts of hardware written in English words are read wherever a GPU or node count is read: the offline
planner (normalise -> every count reader) and the LLM path's argument repair. Expected values are the
English words' arithmetic written out (a dozen = 12; a DGX/HGX H100 or B200 server holds 8 GPUs, NVIDIA's
DGX H100/B200 datasheets); words that are not a count ("one of", "a couple of ideas") stay unread."""

from __future__ import annotations

import json

import pytest

from shardwise.agent.count_words import count_value, phrase_value, with_digit_counts
from shardwise.agent.planner.entities import extract
from shardwise.agent.tool_call_repair import repair_arguments


@pytest.mark.parametrize("phrase, value", [
    ("sixteen", 16), ("thirty-two", 30 + 2), ("thirty two", 30 + 2), ("a dozen", 12), ("two dozen", 2 * 12),
    ("half a dozen", 12 // 2), ("a hundred and twenty-eight", 100 + 20 + 8), ("one hundred twenty eight", 128),
    ("two hundred fifty-six", 2 * 100 + 50 + 6), ("two thousand and forty-eight", 2 * 1000 + 40 + 8),
    ("a couple of", 2), ("a pair of", 2),
])
def test_english_count_phrases_are_their_arithmetic(phrase, value):
    assert phrase_value(phrase) == value


@pytest.mark.parametrize("message, gpus", [
    ("six HGX H100 boxes, llama 70b, 8k", 6 * 8),  # six servers of eight
    ("a dozen nodes of 8xH100 for llama 70b", 12 * 8),
    ("two dozen B200 nodes for llama 405b", 2 * 12 * 8),
    ("sixteen GPUs, H100, mistral 7b", 16),
    ("thirty-two H100s for llama 8b at 4k", 32),
    ("half a dozen DGX H100 for llama 70b", 6 * 8),
    ("a hundred and twenty-eight GPUs (h100) for llama 70b", 128),
    ("Seventy-two MI300X for qwen 72b", 72),
    ("a couple of 8x A100 boxes, llama 8b lora", 2 * 8),
    ("two 8xH100 nodes, llama 70b", 2 * 8),
])
def test_count_words_before_hardware_are_the_gpu_count(message, gpus):
    assert extract(message).scenario_patch().gpus == gpus


@pytest.mark.parametrize("message, nodes_added, gpus_added", [
    ("what if we add three more nodes?", 3, None),
    ("and with two dozen extra gpus?", None, 2 * 12),
])
def test_count_words_of_added_hardware(message, nodes_added, gpus_added):
    e = extract(message)
    assert (e.nodes_added, e.gpus_added) == (nodes_added, gpus_added)


@pytest.mark.parametrize("message", [
    "one of our H100 nodes is flaky, llama 8b",
    "a couple of ideas for llama 8b on H100",
    "two questions about llama 70b on h100",
    "three of the nodes are down, h100",
    "I have a dozen questions about H100",
])
def test_count_words_that_are_not_a_count_are_not_read_as_one(message):
    assert extract(message).scenario_patch().gpus is None


@pytest.mark.parametrize("text", ["one of them", "a couple of ideas", "two questions", "twelve layers",
                                  "sixteen heads", "a dozen experiments"])
def test_only_counts_of_hardware_are_rewritten(text):
    assert with_digit_counts(text) == text


def test_the_llm_paths_argument_repair_reads_the_same_words():
    notes: list[str] = []
    args = repair_arguments("recommend_plans", {"scenario": {"model": "llama-3.1-70b", "gpu": "h100-sxm",
                                                             "gpus": "thirty-two", "seq_len": "4k"}}, None, notes)
    assert args["scenario"]["gpus"] == 30 + 2 and args["scenario"]["seq_len"] == 4 * 1024
    assert count_value("a couple of ideas") is None and count_value("two dozen") == 24
    assert any("thirty-two" in n for n in notes)
    json.dumps(args)  # still plain JSON for the tool


@pytest.mark.parametrize("message, gpus, per_node", [
    ("llama 8b on four nodes of four, h100", 4 * 4, 4),  # a node's size after its noun
    ("two nodes with four a100 each, llama 8b", 2 * 4, 4),
])
def test_a_node_size_in_words_after_its_noun(message, gpus, per_node):
    patch = extract(message).scenario_patch()
    assert (patch.gpus, patch.gpus_per_node) == (gpus, per_node)


def test_two_counts_sharing_one_hardware_noun_are_both_read(make_service):
    from support.chat import ask

    [(calls, _)] = ask(make_service(), "sixteen or thirty-two H100s for llama 3.1 8b, 4k, gbs 256?")
    assert [args["scenario"]["gpus"] for _, args in calls] == [16, 32]


@pytest.mark.parametrize("text", ["one or two ideas", "two or three questions about 8 gpus", "nodes with one of our tricks"])
def test_paired_and_node_size_words_need_hardware(text):
    assert with_digit_counts(text) == text
