"""The offline planner on the failure causes fresh set 13's first run exposed, each in phrasings of our own, not
the eval cases'. Expected values are read off the sentence by hand ("six HGX boxes" of eight GPUs is 48 GPUs) or
taken from the engine's tools called directly, never from the planner's answer."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import extract

from support.chat import ask


# ---- 1. a DGX/HGX is a server: its count is a count of nodes --------------------------------------------------
@pytest.mark.parametrize("message, nodes", [
    ("we might get six HGX boxes instead of two next month", 6),
    ("what about 4 DGX nodes", 4),
    ("budget allows three DGXs", 3),
    ("say 12 hgx servers", 12),
])
def test_a_count_of_dgx_or_hgx_servers_is_nodes(message, nodes):
    assert extract(message).nodes == nodes


def test_servers_instead_of_two_after_calibrating_scale_the_gpus(make_service):
    # 2 nodes of 8 H100 first; "six HGX boxes" of the same 8 GPUs per node: 6 x 8 = 48 GPUs
    turns = ask(make_service(), "llama-3.1-8b on 16x h100 (2 nodes IB), 4096 seq, gbs 512. tp1 zero3 mbs 2 does "
                                "9,100 tok/s/gpu for us, calibrate",
                "we may end up with six HGX boxes instead of two. best plan there with our profile?")
    calls, _ = turns[1]
    assert calls and calls[-1][1]["scenario"]["gpus"] == 6 * 8


# ---- 2. a config in another framework's format, when no framework was ever said, changes the framework ----------
@pytest.mark.parametrize("request_", ["can I get a ds_config json for that?", "export it as a deepspeed config please"])
def test_a_format_after_a_default_framework_re_recommends_under_it(make_service, request_):
    turns = ask(make_service(), "lora on qwen2.5 7b with 2x L40S, 2k max len - what settings?", request_)
    calls, _ = turns[1]
    assert [name for name, _ in calls] == ["recommend_plans", "export_config"]
    (_, rec), (_, exp) = calls
    assert rec["scenario"]["framework"] == exp["scenario"]["framework"] == "deepspeed"


def test_a_format_the_default_framework_reads_keeps_the_setup(make_service):
    # megatron is the default framework: its own format asks for nothing new, so no second recommendation
    turns = ask(make_service(), "lora on qwen2.5 7b with 2x L40S, 2k max len - what settings?", "megatron args for that pls")
    calls, _ = turns[1]
    assert [name for name, _ in calls] == ["export_config"]


# ---- 3. an accelerator outside the catalog is called unsupported in plain words --------------------------------
@pytest.mark.parametrize("message, name", [("could you size llama 3.1 8b for 32 gaudi2 cards?", "Intel Gaudi"),
                                           ("plan mistral 7b on a trainium2 pod of 16", "AWS Trainium")])
def test_an_unknown_accelerator_is_said_to_be_unsupported(make_service, message, name):
    [(calls, answer)] = ask(make_service(), message)
    assert calls == [] and f"I can't plan for {name}: it is not a supported accelerator" in answer
