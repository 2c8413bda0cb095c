"""Gradients as stored (layouts.py) and DeepSpeed's reduction buckets (kept for the whole step:
ZeRO-1/2/3 hold a bf16 bucket of reduce_bucket_size elements, or fewer if the rank has fewer
trainable parameters). Unsharded gradient buffers and temporaries are phase-dependent:
phase_buffers.py."""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import BF16_BYTES, DEEPSPEED_REDUCE_BUCKET_ELEMENTS, DEEPSPEED_REDUCE_BUCKETS
from .layouts import adapter_layout, dense_shard_group, expert_shard_group, full_training_layout, sharded
from .rank import Rank


def gradients_at_rest(rank: Rank) -> dict[str, np.ndarray]:
    grid, p = rank.grid, rank.params
    dense_group, expert_group = dense_shard_group(grid), expert_shard_group(grid)
    if rank.full_training:
        layout = full_training_layout(rank.setup, grid)
        dense, expert = p.dense, p.expert
    else:
        layout = adapter_layout(rank.setup, grid)
        dense, expert = rank.adapter_dense, rank.adapter_expert
    stored = layout.gradients * (sharded(dense, layout.gradients_sharded, dense_group)
                                 + sharded(expert, layout.gradients_sharded, expert_group))
    terms = {"gradients": stored}
    if rank.setup.framework == "deepspeed":
        bucket = np.minimum(DEEPSPEED_REDUCE_BUCKET_ELEMENTS, dense + expert)
        terms["reduce_buckets"] = np.where(grid.zero_stage >= 1, DEEPSPEED_REDUCE_BUCKETS * BF16_BYTES * bucket, 0.0)
    return terms
