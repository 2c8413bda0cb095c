"""REST: a plan whose TP·CP·PP does not divide the GPUs is a 400 saying what is wrong and what is allowed, not
a 200 with a rounded-down DP. By hand: 16 / 3 is not whole; the divisors of 16 are 1, 2, 4, 8, 16."""

from __future__ import annotations

import pytest


SCENARIO = {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpus": 16}


@pytest.fixture(scope="module")
def client(api_client):
    return api_client


@pytest.mark.parametrize("path, extra", [
    ("/api/evaluate", {"tp": 3}),
    ("/api/explain", {"a": "tp=2", "b": "tp=3"}),
    ("/api/export", {"tp": 3, "format": "megatron"}),
])
def test_a_plan_without_a_whole_dp_is_a_400_naming_the_rule_and_the_valid_tp(client, path, extra):
    r = client.post(path, json={**SCENARIO, **extra})
    assert r.status_code == 400, r.text
    message = r.json()["message"]
    assert "TP·CP·PP = 3·1·1 = 3 does not divide 16 GPUs" in message and "1, 2, 4, 8, 16" in message
