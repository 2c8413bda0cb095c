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


EARLY_PHASES = ("loss", "last_layer_backward", "last_layer_backward_end")


def stored_gradients_present(rank: Rank, phase: str) -> np.ndarray:
    """Whether the stored gradients exist at this phase.

    Megatron's main-grad buffer and DeepSpeed ZeRO-2/3's flat gradient partition are allocated once
    and kept. Elsewhere (`.grad` tensors, FSDP2's sharded gradients) `zero_grad(set_to_none=True)`
    frees them after each step, and the first micro-batch recreates them during its backward: before
    the backward has reached the first layers (the early phases) they exist only if an earlier
    micro-batch of the step made them — gradient accumulation > 1.
    """
    grid = rank.grid
    if phase not in EARLY_PHASES:
        return np.ones(rank.n, dtype=bool)
    framework = rank.setup.framework
    if framework in ("megatron", "nanotron"):  # main-grad buffer / fp32 accumulation buffer
        persistent = np.ones(rank.n, dtype=bool)
    elif framework == "deepspeed":
        persistent = grid.zero_stage >= 2
    else:
        persistent = np.zeros(rank.n, dtype=bool)
    return persistent | (grid.grad_accum > 1)
