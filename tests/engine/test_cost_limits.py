"""A token budget or a price no training run has is refused with the limit named, not turned into a cost."""

import pytest

from shardwise.engine.cost import cost_report
from shardwise.engine.errors import SettingsInputError


def test_a_budget_far_beyond_any_published_run_is_refused():
    # Llama 3 405B: 15.6T tokens (Llama 3 Herd, 2024); 1e30 is a typo, 15.6e12 is a real budget
    with pytest.raises(SettingsInputError, match=r"train_tokens 1e\+30 is beyond 1e\+15 tokens"):
        cost_report(1000.0, 8, "h100-sxm", train_tokens=1e30)
    ok = cost_report(1000.0, 8, "h100-sxm", train_tokens=15.6e12)
    # 15.6e12 tokens / 1,000 tokens/s = 15.6e9 s; x 8 GPUs / 3,600 = 34,666,667 GPU-hours
    assert ok.gpu_hours == pytest.approx(15.6e9 * 8 / 3600)


def test_a_price_per_gpu_hour_beyond_any_list_price_is_refused():
    with pytest.raises(SettingsInputError, match="price_per_gpu_hour 5,000 USD per GPU-hour is beyond 1,000"):
        cost_report(1000.0, 8, "h100-sxm", price=5000.0)
    # $999/GPU-hour on 8 GPUs = $7,992 per hour for the cluster
    assert cost_report(1000.0, 8, "h100-sxm", price=999.0).cluster_cost_per_hour == pytest.approx(7992.0)
