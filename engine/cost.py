"""Time to train, GPU-hours and cost for a token budget, from predicted throughput.

time = tokens / (tokens per second); GPU-hours = time × GPUs / 3600; cost = GPU-hours × price.
Vectorised over plans (numpy arrays of tokens/s) for the search; `cost_report` builds the
frozen CostReport for one plan.
"""

from __future__ import annotations

import numpy as np

from .assumptions.cost import (DEFAULT_PRICE_PER_GPU_HOUR, DEFAULT_PRICE_SOURCE, MAX_PRICE_PER_GPU_HOUR,
                               MAX_TRAIN_TOKENS, PRICE_PER_GPU_HOUR)
from .errors import SettingsInputError
from .results import CostReport

SECONDS_PER_HOUR = 3600.0


def price_per_gpu_hour(gpu_id: str, override: float | None = None) -> tuple[float, str]:
    """(USD per GPU-hour, where it comes from)."""
    if override is not None:
        if not np.isfinite(override) or override < 0:
            raise SettingsInputError(f"{{price_per_gpu_hour}} must be a non-negative number of USD, got {override!r}",
                                     "price_per_gpu_hour")
        if override > MAX_PRICE_PER_GPU_HOUR:
            raise SettingsInputError(f"{{price_per_gpu_hour}} {override:,g} USD per GPU-hour is beyond "
                                     f"{MAX_PRICE_PER_GPU_HOUR:,.0f}: give the price of one GPU for one hour",
                                     "price_per_gpu_hour")
        return float(override), "user-supplied"
    return PRICE_PER_GPU_HOUR.get(gpu_id, (DEFAULT_PRICE_PER_GPU_HOUR, DEFAULT_PRICE_SOURCE))


def time_to_train_s(train_tokens: float, tokens_per_s):
    return train_tokens / np.asarray(tokens_per_s, dtype=np.float64)


def gpu_hours(train_tokens: float, tokens_per_s, num_gpus: int):
    return time_to_train_s(train_tokens, tokens_per_s) * num_gpus / SECONDS_PER_HOUR


def training_cost(train_tokens: float, tokens_per_s, num_gpus: int, price: float):
    return gpu_hours(train_tokens, tokens_per_s, num_gpus) * price


def cost_report(tokens_per_s: float, num_gpus: int, gpu_id: str, train_tokens: float | None = None,
                price: float | None = None) -> CostReport:
    if train_tokens is not None and (not np.isfinite(train_tokens) or train_tokens <= 0):
        raise SettingsInputError(f"{{train_tokens}} must be a positive number of tokens, got {train_tokens!r}",
                                 "train_tokens")
    if train_tokens is not None and train_tokens > MAX_TRAIN_TOKENS:
        raise SettingsInputError(f"{{train_tokens}} {train_tokens:,.3g} is beyond {MAX_TRAIN_TOKENS:,.0e} tokens "
                                 f"(the largest published pre-training budget is about 1.6e13)", "train_tokens")
    rate, source = price_per_gpu_hour(gpu_id, price)
    per_hour = rate * num_gpus
    per_billion = 1e9 / tokens_per_s * num_gpus / SECONDS_PER_HOUR * rate
    fields = dict(price_per_gpu_hour=rate, price_source=source, cluster_cost_per_hour=per_hour,
                  cost_per_billion_tokens=per_billion, train_tokens=train_tokens)
    if train_tokens is not None:
        seconds = float(time_to_train_s(train_tokens, tokens_per_s))
        fields.update(time_to_train_s=seconds, time_to_train_days=seconds / 86400.0,
                      gpu_hours=seconds * num_gpus / SECONDS_PER_HOUR,
                      total_cost=seconds * num_gpus / SECONDS_PER_HOUR * rate)
    return CostReport(**fields)
