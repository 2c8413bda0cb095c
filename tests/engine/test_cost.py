"""Time to train, GPU-hours and cost, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.cost import cost_report, gpu_hours, price_per_gpu_hour, time_to_train_s, training_cost
from shardwise.engine.errors import ShardwiseInputError


def test_llama3_scale_budget_by_hand():
    """15e12 tokens at 1,000,000 tokens/s on 1,024 GPUs: 1.5e7 s = 173.6 days;
    1.5e7·1024/3600 = 4,266,666.7 GPU-hours; at $2.00 -> $8,533,333."""
    assert time_to_train_s(15e12, 1e6) == pytest.approx(1.5e7)
    assert gpu_hours(15e12, 1e6, 1024) == pytest.approx(4_266_666.67, rel=1e-6)
    assert training_cost(15e12, np.array([1e6, 2e6]), 1024, 2.0) == pytest.approx([8_533_333.3, 4_266_666.7], rel=1e-6)
    r = cost_report(1e6, 1024, "h100-sxm", 15e12, price=2.0)
    assert r.price_source == "user-supplied"
    assert r.time_to_train_days == pytest.approx(173.61, rel=1e-4)
    assert r.total_cost == pytest.approx(8_533_333.3, rel=1e-6)
    # $ per billion tokens: 1e9/1e6 s × 1024 GPUs / 3600 × $2 = $568.9
    assert r.cost_per_billion_tokens == pytest.approx(568.89, rel=1e-4)


def test_default_prices_have_sources_and_unknown_gpus_fall_back():
    price, source = price_per_gpu_hour("h100-sxm")
    assert price > 0 and "2025" in source
    price, source = price_per_gpu_hour("some-new-gpu")
    assert price > 0 and "default" in source
    r = cost_report(5000.0, 8, "a100-80gb")
    assert r.train_tokens is None and r.total_cost is None and r.cluster_cost_per_hour > 0


def test_bad_budget_or_price_is_a_clear_error():
    with pytest.raises(ShardwiseInputError, match="^train_tokens must be"):
        cost_report(1e6, 8, "h100-sxm", -5)
    with pytest.raises(ShardwiseInputError, match="^price_per_gpu_hour must be"):
        cost_report(1e6, 8, "h100-sxm", 1e12, price=-1.0)
