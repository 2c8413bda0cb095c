"""The page shows what the plan costs, as `shardwise evaluate` does: per billion tokens and per hour at the listed
price (the CLI's `cost` line; the page had none)."""

from __future__ import annotations

import html
import re

from fastapi.testclient import TestClient

from shardwise.web.app import create_app
from shardwise.web.pages import DEFAULT_FORM
from shardwise.web.settings import Settings


def test_the_summary_gives_the_cost():
    client = TestClient(create_app(Settings(rate_limit_per_minute=100_000, rate_limit_burst=100_000),
                                   chat_service=object()))
    page = html.unescape(client.post("/ui/results", data={**DEFAULT_FORM, "model": "llama-3.1-8b", "gpus": "8"}).text)
    per_b, per_hour, price = re.search(r"<dt>Cost</dt><dd>\$([\d,]+) <small>per billion tokens</small>"
                                       r"<small[^>]*>\$([\d,]+)/hour at \$([\d.]+)/GPU-hour</small>", page).groups()
    tokens_per_s = float(re.search(r"<dt>Throughput</dt><dd>([\d,]+) <small>tokens/s per GPU", page).group(1)
                         .replace(",", "")) * 8
    # H100 SXM listed at $2.99/GPU-hour (engine/assumptions/cost.py, Lambda on-demand): 8 GPUs = $23.92/hour;
    # a billion tokens takes 1e9 / tokens-per-second seconds, so costs $23.92 x 1e9 / tokens_per_s / 3600.
    assert price == "2.99" and per_hour == "24"
    assert abs(float(per_b.replace(",", "")) - 23.92 * 1e9 / tokens_per_s / 3600) <= 1.0  # page figures are rounded
