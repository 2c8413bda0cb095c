"""Optimizer states (AdamW; master weights where the flavour keeps them) and step temporaries.

States: see layouts.py (Megatron/DeepSpeed 12 bytes/param: fp32 master + m + v; fsdp 8: m + v, the
parameters themselves being fp32). Step temporaries: DeepSpeed upcasts the bf16 gradient partition
to fp32 for the step (all of it at ZeRO-0/1/2, one sub-group of ≤ sub_group_size elements at a time
at ZeRO-3). Megatron's distributed optimizer points the fp32 master's `.grad` at its shard of the
fp32 main-grad buffer, and fused AdamW (TE/Apex FusedAdam, torch `fused=True`) updates in place, so
no other flavour has step temporaries.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import DEEPSPEED_STEP_FP32_GRAD_BYTES, DEEPSPEED_SUB_GROUP_ELEMENTS
from .layouts import adapter_layout, dense_shard_group, expert_shard_group, full_training_layout, sharded
from .rank import Rank


def _trainable(rank: Rank) -> tuple[np.ndarray, np.ndarray]:
    if rank.full_training:
        return rank.params.dense, rank.params.expert
    return rank.adapter_dense, rank.adapter_expert


def optimizer_states(rank: Rank) -> dict[str, np.ndarray]:
    grid = rank.grid
    layout = full_training_layout(rank.setup, grid) if rank.full_training else adapter_layout(rank.setup, grid)
    dense, expert = _trainable(rank)
    stored = layout.optimizer * (sharded(dense, layout.optimizer_sharded, dense_shard_group(grid))
                                 + sharded(expert, layout.optimizer_sharded, expert_shard_group(grid)))
    return {"adam_states": stored}


def optimizer_step_temporaries(rank: Rank) -> np.ndarray:
    if rank.setup.framework != "deepspeed":
        return np.zeros(rank.n)
    grid = rank.grid
    dense, expert = _trainable(rank)
    partition = (sharded(dense, grid.zero_stage >= 1, dense_shard_group(grid))
                 + sharded(expert, grid.zero_stage >= 1, expert_shard_group(grid)))
    partition = np.where(grid.zero_stage >= 3, np.minimum(partition, DEEPSPEED_SUB_GROUP_ELEMENTS), partition)
    return DEEPSPEED_STEP_FP32_GRAD_BYTES * partition
