"""Weights: the parameters a GPU stores, plus ZeRO-3/FSDP gathered (unsharded) copies by phase.

Gathered weights, in the compute dtype (bf16), at each phase (see rank.PHASES):
- fsdp, ZeRO-3 (`reshard_after_forward=True`, no PP): at the loss the `[norm, output]` unit, which
  torchtitan does not reshard after forward; in a block's backward that block and the one FSDP2
  prefetches (FSDP_BLOCKS_GATHERED); at the embedding's backward the embedding unit, re-gathered.
- fsdp, ZeRO-1/2 or PP > 1 (torchtitan's default policy does not reshard with PP): every unit stays
  gathered from its forward until its own backward — the whole stage at the loss.
- fsdp, ZeRO-0 (DDP under autocast): autocast's bf16 copies of the weight matrices, kept for backward.
- Megatron-FSDP (megatron, ZeRO-3): per-layer units like FSDP2 (current + prefetched layer).
- DeepSpeed ZeRO-3: the module running plus the prefetch bucket (stage3_prefetch_bucket_size); at the
  loss the output layer and the last layer, which DeepSpeed keeps because it is reused at once
  (its reuse distance is below stage3_max_reuse_distance).
- QLoRA: the NF4 weight being multiplied is dequantised to bf16 (one matrix at a time).
"""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import BF16_BYTES, DEEPSPEED_PREFETCH_BUCKET_ELEMENTS, FSDP_BLOCKS_GATHERED, \
    MEGATRON_FSDP_UNITS_GATHERED, TE_FP8_WEIGHT_CACHE_BYTES
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


def _compute_bytes_per_param(rank: Rank) -> np.ndarray:
    """Bytes per element of a gathered weight: bf16, or the frozen base's own size under LoRA/QLoRA."""
    if rank.full_training:
        return np.full(rank.n, float(BF16_BYTES))
    p = rank.params
    return frozen_base_bytes(rank.setup, p.gemm, p.total) / np.maximum(p.total, 1.0)


def gathered_weights(rank: Rank, phase: str) -> np.ndarray:
    grid, p, framework = rank.grid, rank.params, rank.setup.framework
    zero, n = grid.zero_stage, rank.n
    per_param = _compute_bytes_per_param(rank)
    layer, output, embedding, stage_all = p.largest_layer, p.output, p.embedding, p.total
    none = np.zeros(n)
    if phase == "optimizer_step":
        return none
    if phase == "embedding_backward":
        gathered = np.where((framework == "fsdp") & (zero >= 1) | (zero >= 3), embedding, 0.0)
        return gathered * per_param
    at_loss = phase == "loss"
    if framework == "fsdp":
        never_reshard = (zero <= 2) | (grid.pp > 1)
        whole_stage = stage_all if at_loss else stage_all - output
        per_block = output if at_loss else FSDP_BLOCKS_GATHERED * layer
        ddp_autocast = (p.gemm + output) if at_loss else p.gemm
        gathered = np.where(zero == 0, ddp_autocast, np.where(never_reshard, whole_stage, per_block))
    elif framework == "megatron":
        gathered = np.where(zero >= 3, output if at_loss else MEGATRON_FSDP_UNITS_GATHERED * layer, 0.0)
    else:  # deepspeed
        prefetch = np.minimum(DEEPSPEED_PREFETCH_BUCKET_ELEMENTS, layer)
        gathered = np.where(zero >= 3, (output + layer) if at_loss else (layer + prefetch), 0.0)
    buffers = gathered * per_param
    if rank.setup.mode == "qlora":
        buffers = buffers + BF16_BYTES * p.largest_gemm  # dequantised NF4 weight being multiplied
    return buffers
