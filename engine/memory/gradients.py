"""Gradients: the stored gradients (see layouts.py), reduction buckets, and the unsharded gradient
buffers that exist only at some phases.

- DeepSpeed ZeRO-1/2/3 keep a bf16 reduction bucket of reduce_bucket_size elements (or fewer, if the
  rank has fewer trainable parameters).
- FSDP2 (fsdp, ZeRO ≥ 1): a block's backward produces its unsharded bf16 gradients; `foreach_reduce`
  copies them into an fp32 reduce-scatter input of the block's full size (reduce_dtype=fp32) —
  2 + 4 bytes per element of the block, then only the fp32 shard is kept.
- Megatron with ZeRO-2/3 (Megatron-FSDP): one layer's fp32 main gradients before the reduce-scatter.
- Eager accumulation (DeepSpeed, DDP): from the second micro-batch a weight's new gradient is a
  temporary of the weight's size before it is added into `.grad`; Megatron's
  gradient_accumulation_fusion writes into main_grad directly. The embedding's gradient is a dense
  temporary of the table in every flavour but FSDP (whose buffers are counted above).
"""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import (BF16_BYTES, DEEPSPEED_REDUCE_BUCKET_ELEMENTS, DEEPSPEED_REDUCE_BUCKETS,
                                  FP32_BYTES, FSDP_REDUCE_SCATTER_INPUTS_IN_FLIGHT, MEGATRON_MAIN_GRAD_BYTES)
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


def gradient_buffers(rank: Rank, phase: str) -> np.ndarray:
    """Unsharded gradients and temporaries alive at this phase (full training only; adapters are tiny)."""
    none = np.zeros(rank.n)
    if not rank.full_training or phase in ("loss", "optimizer_step"):
        return none
    grid, p, framework = rank.grid, rank.params, rank.setup.framework
    zero = grid.zero_stage
    unit = p.largest_layer if phase == "layer_backward" else p.embedding
    if framework == "fsdp":
        fsdp = (BF16_BYTES + FSDP_REDUCE_SCATTER_INPUTS_IN_FLIGHT * FP32_BYTES) * unit
        ddp_accumulation = FP32_BYTES * (p.largest_gemm if phase == "layer_backward" else p.embedding)
        return np.where(zero >= 1, fsdp, ddp_accumulation)
    if framework == "megatron":
        sharded_grads = MEGATRON_MAIN_GRAD_BYTES * unit
        embedding_temp = BF16_BYTES * p.embedding if phase == "embedding_backward" else none
        return np.where(zero >= 2, sharded_grads, embedding_temp)
    # deepspeed: eager accumulation of a new gradient into .grad / the bucket
    return BF16_BYTES * (p.largest_gemm if phase == "layer_backward" else p.embedding)
