"""Weights: the parameters a GPU stores (layouts.py), FP8 weight caches, and under LoRA/QLoRA the
frozen base plus the adapters. Gathered (unsharded) copies are phase-dependent: phase_buffers.py."""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import BF16_BYTES, TE_FP8_WEIGHT_CACHE_BYTES
from .layouts import adapter_layout, dense_shard_group, expert_shard_group, full_training_layout, sharded
from .lora import frozen_base_bytes
from .rank import Rank


def frozen_base_sharded(rank: Rank) -> np.ndarray:
    zero = rank.grid.zero_stage
    return (zero >= 1) if rank.setup.framework == "fsdp" else (zero >= 3)


def weights_at_rest(rank: Rank) -> dict[str, np.ndarray]:
    grid, p = rank.grid, rank.params
    dense_group, expert_group = dense_shard_group(grid), expert_shard_group(grid)
    if rank.full_training:
        layout = full_training_layout(rank.setup, grid)
        stored = layout.weights * (sharded(p.dense, layout.weights_sharded, dense_group)
                                   + sharded(p.expert, layout.weights_sharded, expert_group))
        if rank.setup.fp8_param_gather:
            # FP8 primary weights: the GEMM weights exist only as Transformer Engine FP8 tensors (the cache
            # below); their BF16 copy is not kept (Megatron-Core --fp8-param-gather; with MXFP8 the param
            # all-gather reuses the gradient buffer, param_and_grad_buffer.py `reuse_grad_buf_for_mxfp8_param_ag`)
            stored = stored - np.where(grid.zero_stage < 3, BF16_BYTES * p.gemm, 0.0)
        terms = {"parameters": stored}
        if rank.setup.precision == "fp8" and rank.setup.framework == "megatron":
            terms["fp8_weight_cache"] = np.where(grid.zero_stage < 3, TE_FP8_WEIGHT_CACHE_BYTES * p.gemm, 0.0)
        return terms
    base = frozen_base_bytes(rank.setup, p.gemm, p.total)
    base_share = sharded(np.ones(rank.n), frozen_base_sharded(rank), dense_group)
    adapters = adapter_layout(rank.setup, grid)
    adapter_bytes = adapters.weights * (sharded(rank.adapter_dense, adapters.weights_sharded, dense_group)
                                        + sharded(rank.adapter_expert, adapters.weights_sharded, expert_group))
    return {"frozen_base": base * base_share, "lora_adapters": adapter_bytes}
