"""A config file for another framework than the plan on the table was chosen under (session 10's product decision,
docs/agent.md "A file for another framework"): the assistant's plan is re-ranked under the file's framework, among
the plans that file can express, one line says whether the pick changed, and that plan is exported; the user's own
plan is exported as is; a file for the framework already in the setup, or a format that runs any plan, re-ranks
nothing. Expectations come from the tools' results in the same conversation."""

from __future__ import annotations

import pytest

from shardwise.agent.config import AgentConfig
from shardwise.agent.service import ChatService

from support.chat import turns


@pytest.fixture
def service(tmp_path):
    return ChatService(AgentConfig(session_db=tmp_path / "s.sqlite3"))


def knobs(plan: dict) -> dict:
    return {k: plan.get(k, plan.get("zero_stage") if k == "zero" else None)
            for k in ("tp", "pp", "cp", "ep", "zero", "micro_batch", "recompute")}


def framework_of(call: dict) -> str | None:
    return call["arguments"]["scenario"]["framework"]


@pytest.mark.parametrize("ask, fmt, framework, title", [
    ("give me a deepspeed json for that", "deepspeed", "deepspeed", "DeepSpeed"),
    ("ds_config for that please", "deepspeed", "deepspeed", "DeepSpeed"),
    ("can I get that as a torchtitan toml", "torchtitan", "fsdp", "FSDP2 (torchtitan)"),
])
def test_a_file_for_another_framework_re_ranks(service, ask, fmt, framework, title):
    first, done = turns(service, "llama 3.1 8b on 8 h100, 4k, gbs 256 - best plan?", ask)
    assert [c["name"] for c in done.tool_calls] == ["recommend_plans", "export_config"]
    ranked, exported = done.tool_calls
    assert framework_of(ranked) == framework and ranked["arguments"]["export_format"] == fmt
    assert exported["arguments"]["format"] == fmt and framework_of(exported) == framework
    best = ranked["result"]["best"]
    assert knobs(exported["arguments"]["plan"]) == knobs(best["strategy"])
    before = first.tool_calls[0]["result"]["best"]["strategy"]
    said = "the same plan as the Megatron-LM pick" if knobs(best["strategy"]) == knobs(before) else "the Megatron-LM pick was `"
    assert f"Under {title} the best plan" in done.answer and said in done.answer


def test_the_same_plan_is_said_to_be_the_same(service):
    # Mistral 7B on 4 A100s: the DeepSpeed ranking's best is the Megatron-LM pick (both read from the tools' results)
    first, done = turns(service, "mistral 7b on 4 a100 80gb, 2k, gbs 64 - plan?", "deepspeed json for that pls")
    ranked, exported = done.tool_calls
    before, best = first.tool_calls[0]["result"]["best"], ranked["result"]["best"]
    assert knobs(best["strategy"]) == knobs(before["strategy"])
    assert f"is `{best['label']}`, the same plan as the Megatron-LM pick" in done.answer
    assert knobs(exported["arguments"]["plan"]) == knobs(before["strategy"])


@pytest.mark.parametrize("ask, fmt", [("megatron args for that", "megatron"), ("accelerate yaml for that", "accelerate"),
                                      ("slurm launch script for it", "launch")])
def test_a_file_that_runs_the_plan_as_chosen_re_ranks_nothing(service, ask, fmt):
    first, done = turns(service, "llama 3.1 8b on 8 h100, 4k, gbs 256 - best plan?", ask)
    [call] = done.tool_calls
    assert call["name"] == "export_config" and call["arguments"]["format"] == fmt and framework_of(call) is None
    assert knobs(call["arguments"]["plan"]) == knobs(first.tool_calls[0]["result"]["best"]["strategy"])


def test_the_users_own_plan_is_exported_as_is(service):
    _, done = turns(service, "llama 3.1 8b on 16 h100, 4k, gbs 256. we run tp2 zero1 mb2 - does it fit?",
                    "give me the deepspeed json for it")
    [call] = done.tool_calls
    assert call["name"] == "export_config" and framework_of(call) == "deepspeed"
    assert (call["arguments"]["plan"]["tp"], call["arguments"]["plan"]["zero"], call["arguments"]["plan"]["micro_batch"]) == (2, 1, 2)


def test_a_file_that_can_express_no_fitting_plan_says_why(service):
    # DeepSpeed's config has no FP8 switch (engine/validity/deepspeed_config.py, limit "fp8"): since session 12 the
    # deepspeed ranking itself holds no plan, and the answer says that one reason (and no empty "what would fit")
    _, done = turns(service, "llama 3.1 8b on 8 h100, 4k, gbs 256, fp8 training - plan?", "deepspeed json for that")
    ranked = done.tool_calls[0]
    assert ranked["name"] == "recommend_plans" and ranked["result"]["best"] is None
    assert "No valid plan exists" in done.answer and "no FP8 training switch" in done.answer
    assert "What would make it fit" not in done.answer
