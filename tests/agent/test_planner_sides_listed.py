"""Three or more setups side by side ("h100 vs h200 vs a100 40gb side by side"): every listed side is read and
priced by its own recommend_plans call, in one table. Expected sides are read off the message by hand; the cost
row is checked against the cost arithmetic (GPUs x $/GPU-hour / tokens per hour) on the same turn's tool result."""

from __future__ import annotations

import pytest

from shardwise.agent.planner.entities import normalise
from shardwise.agent.planner.sides import scenario_sides

from support.chat import turns


@pytest.mark.parametrize("message, sides", [
    ("llama 3.1 70b on 64 gpus: h100 vs h200 vs a100 40gb side by side",
     [{"gpu": "h100-sxm"}, {"gpu": "h200"}, {"gpu": "a100-40gb"}]),
    ("compare h100, h200 and b200 for llama 3.1 70b on 64 gpus",
     [{"gpu": "h100-sxm"}, {"gpu": "h200"}, {"gpu": "b200"}]),
    ("h100 / h200 / mi300x for qwen 2.5 32b on 32 gpus", [{"gpu": "h100-sxm"}, {"gpu": "h200"}, {"gpu": "mi300x"}]),
    ("h100 or h200, or b200 for llama 3.1 8b on 16 gpus", [{"gpu": "h100-sxm"}, {"gpu": "h200"}, {"gpu": "b200"}]),
    ("llama 3.1 70b on h100s: 32 vs 64 vs 128 gpus", [{"gpus": 32}, {"gpus": 64}, {"gpus": 128}]),
    ("llama 3.1 70b: 32 vs 64 vs 128 h100s", [{"gpus": 32}, {"gpus": 64}, {"gpus": 128}]),
    ("llama 3.1 8b vs qwen 2.5 7b vs mistral 7b on 8 h100",
     [{"model": "llama-3.1-8b"}, {"model": "qwen2.5-7b"}, {"model": "mistral-7b"}]),
    ("lora vs qlora vs full on llama 3.1 8b, 8 a100", [{"mode": "lora"}, {"mode": "qlora"}, {"mode": "full"}]),
    ("mixtral 8x7b on 64 h100: compare deepep vs alltoall vs allgather",
     [{"moe_dispatcher": "deepep"}, {"moe_dispatcher": "alltoall"}, {"moe_dispatcher": "allgather"}]),
])
def test_every_listed_side_is_read(message, sides):
    assert list(scenario_sides(normalise(message))) == sides


@pytest.mark.parametrize("message, sides", [
    ("Llama 3.1 8B on H100s: 16 versus 32 GPUs?", [{"gpus": 16}, {"gpus": 32}]),
    ("8 nodes or 16 nodes of h100", [{"nodes": 8}, {"nodes": 16}]),
    ("8x a100 or 4x h100 for llama 3 8b", [{"gpu": "a100-80gb", "gpus": 8}, {"gpu": "h100-sxm", "gpus": 4}]),
    ("a100 vs h100 and 64 gpus for llama 3 8b", [{"gpu": "a100-80gb"}, {"gpu": "h100-sxm"}]),  # a count, no third GPU
])
def test_pairs_stay_pairs(message, sides):
    assert list(scenario_sides(normalise(message))) == sides


def test_three_gpus_three_columns_one_table(make_service):
    [done] = turns(make_service(), "llama 3.1 70b on 64 gpus, 8k context, 4M token batches: "
                                   "h100 vs h200 vs a100 40gb side by side")
    calls = [c for c in done.tool_calls if c["name"] == "recommend_plans"]
    assert [c["arguments"]["scenario"]["gpu"] for c in calls] == ["h100-sxm", "h200", "a100-40gb"]
    header = next(line for line in done.answer.splitlines() if line.startswith("| |"))
    assert header.count("[R") == 3 and "A100" in header and "H200" in header
    assert done.answer.count("| best plan |") == 1  # one table, not three answers


def test_each_side_is_costed_at_its_own_listed_price_when_a_budget_is_given(make_service):
    [done] = turns(make_service(), "llama 3.1 70b on 64 gpus, 8k context, 4M token batches, 1T tokens: "
                                   "h100 vs h200 vs a100 40gb side by side")
    calls = [c for c in done.tool_calls if c["name"] == "recommend_plans"]
    assert all(c["arguments"]["train_tokens"] == "1T" for c in calls)
    row = next(line for line in done.answer.splitlines() if line.startswith("| $ per billion tokens"))
    for c in calls:
        best, cost = c["result"]["best"], c["result"]["cost"]
        # $ per 1e9 tokens = GPUs x price per GPU-hour / (tokens/s x 3600 s) x 1e9
        by_hand = 64 * cost["price_per_gpu_hour"] / (best["tokens_per_s"] * 3600) * 1e9
        assert by_hand == pytest.approx(cost["usd_per_billion_tokens"], rel=2e-3)
        assert f"{cost['usd_per_billion_tokens']:,.0f} (at ${cost['price_per_gpu_hour']:.2f}/GPU-hour)" in row
    prices = {c["result"]["cost"]["price_per_gpu_hour"] for c in calls}
    assert len(prices) == 3  # each GPU at its own listed price, not one price for all


def test_a_users_price_is_not_spread_over_different_gpus(make_service):
    [done] = turns(make_service(), "llama 3.1 8b on 16 gpus, 200B tokens at $2/gpu-hour: h100 vs h200 vs b200")
    calls = [c for c in done.tool_calls if c["name"] == "recommend_plans"]
    assert len(calls) == 3 and all("price_per_gpu_hour" not in c["arguments"] for c in calls)


def test_a_users_price_applies_to_every_side_of_one_gpu(make_service):
    [done] = turns(make_service(), "llama 3.1 8b on 16 h100, 200B tokens at $2/gpu-hour: 4k vs 8k context")
    calls = [c for c in done.tool_calls if c["name"] == "recommend_plans"]
    assert len(calls) == 2 and all(c["arguments"]["price_per_gpu_hour"] == 2 for c in calls)
