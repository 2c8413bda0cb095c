"""recommend_plans with a token budget and a price: the best plan's time, GPU-hours and cost, by engine/cost.py's
formulas written out here (time = tokens / tokens-per-second; GPU-hours = time x GPUs / 3600; cost = GPU-hours x
price) on the throughput the tool itself reports; bad budgets come back as errors, not crashes."""

from __future__ import annotations

import json

import pytest

from shardwise.tools.dispatch import dispatch

SCENARIO = {"model": "mistral-7b", "gpu": "h100-sxm", "gpus": 32, "seq_len": 4096, "global_batch": 512}


def call(arguments):
    return dispatch("recommend_plans", json.dumps(arguments), result_id="R1")


def test_budget_and_price_give_time_gpu_hours_and_cost():
    out = call({"scenario": SCENARIO, "top_k": 1, "train_tokens": "100B", "price_per_gpu_hour": 2.0})
    assert out.ok
    tokens_per_s, c = out.result.best.tokens_per_s, out.result.cost
    seconds = 100e9 / tokens_per_s
    # the reported tokens/s is rounded to a whole token: allow the rounding of the figures built on it
    assert c.days == pytest.approx(seconds / 86400, abs=0.01)
    assert c.gpu_hours == pytest.approx(seconds * 32 / 3600, abs=1)
    assert c.total_usd == pytest.approx(seconds * 32 / 3600 * 2.0, abs=2)
    assert (c.price_per_gpu_hour, c.price_source) == (2.0, "user-supplied")


def test_a_price_alone_gives_the_hourly_and_per_billion_cost_with_no_total():
    c = call({"scenario": SCENARIO, "top_k": 1, "price_per_gpu_hour": 2.0}).result
    assert c.cost.train_tokens is None and c.cost.total_usd is None
    assert c.cost.cluster_usd_per_hour == 64.0  # 32 GPUs x $2.00
    assert c.cost.usd_per_billion_tokens == pytest.approx(1e9 / c.best.tokens_per_s * 32 / 3600 * 2.0, abs=0.01)


def test_no_budget_no_price_no_cost():
    assert call({"scenario": SCENARIO, "top_k": 1}).result.cost is None


def test_a_budget_that_is_no_number_is_an_error():
    out = call({"scenario": SCENARIO, "top_k": 1, "train_tokens": "lots"})
    assert not out.ok and "train_tokens" in out.errors[0]


def test_a_budget_below_one_step_is_an_error_as_on_the_cli():
    """512 sequences x 4,096 tokens = 2,097,152 tokens per step: a budget of 15 tokens (15T without its unit) was
    priced at 0 days and $0."""
    out = call({"scenario": SCENARIO, "top_k": 1, "train_tokens": "15"})
    assert not out.ok and "less than one optimizer step of this setup (2,097,152 tokens)" in out.errors[0]
