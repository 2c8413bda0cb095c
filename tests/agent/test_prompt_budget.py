"""What an LLM reads before the user says a word fits a small local model's context.

Ollama and the llama.cpp server default to small context windows (2,048 to 4,096 tokens); a
system prompt and tool list larger than that is truncated before the question arrives. The
budget: system prompt + tool schemas ≤ 2,500 tokens in o200k_base (counted offline by
agent/tokens.py), leaving room for the question and the first tool results.
"""

from __future__ import annotations

import json

from shardwise.agent.service import ChatService
from shardwise.agent.state import ConversationState
from shardwise.agent.tokens import count_tokens
from shardwise.tools import tool_schemas
from shardwise.tools.scenario import Plan, Scenario

BUDGET = 2_500


def prompt_tokens(system_prompt: str) -> int:
    return count_tokens(system_prompt) + count_tokens(json.dumps(tool_schemas()))


def test_system_prompt_and_tool_schemas_fit_the_budget():
    # (the agent tests' conftest points the session store at a temporary directory)
    assert prompt_tokens(ChatService().system_prompt()) <= BUDGET


def test_still_within_budget_with_a_scenario_and_a_plan_on_the_table():
    service = ChatService()
    state = ConversationState(
        scenario=Scenario(model="llama-3.1-70b", gpu="h100-sxm", gpus=128, gpus_per_node=8, network="ib-ndr",
                          seq_len=8192, global_batch_tokens="4M", mode="full", precision="bf16", framework="megatron"),
        plan=Plan(tp=8, pp=2, vpp=5, zero=1, micro_batch=1, recompute="selective"))
    prompt = service.system_prompt(state)
    assert "llama-3.1-70b" in prompt and "TP=8" in prompt
    assert prompt_tokens(prompt) <= BUDGET

