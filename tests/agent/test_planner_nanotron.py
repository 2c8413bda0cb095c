"""The offline planner reads "nanotron" as the framework the user trains with (issue 13: a nanotron
user plans with nanotron's profile, not Megatron's), in phrasings of our own. Expected values are
read off the sentence: "in nanotron" names the framework; a follow-up asking for "the config"
without a format gets the framework's own file (nanotron's YAML); nanotron runs ZeRO-0/1 only and
no interleaved pipeline (engine/validity/frameworks.py), so the plan exported is one of those."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract

from support.chat import ask


@pytest.mark.parametrize("message", ["we train with nanotron: llama 3.1 8b on 32 h100, seq 4096, global batch 512",
                                     "Nanotron run, qwen2.5 7b, 16 H100s, 8k context"])
def test_nanotron_named_is_the_framework(message):
    assert extract(message).framework == "nanotron"


def test_a_nanotron_user_plans_with_nanotron_and_gets_its_config(make_service):
    [(plan_calls, _), (export_calls, _)] = ask(
        make_service(),
        "our stack is nanotron. llama 3.1 8b on 32 h100, 4k sequences, batch of 512: what layout?",
        "fine, send me the config for it")
    name, args = plan_calls[-1]
    assert name == "recommend_plans" and args["scenario"]["framework"] == "nanotron"
    name, args = export_calls[-1]
    assert name == "export_config" and args["format"] == "nanotron"
    assert args["plan"]["zero"] <= 1 and args["plan"]["vpp"] == 1
