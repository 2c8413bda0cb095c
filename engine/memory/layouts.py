"""Bytes per parameter of weights, gradients and optimizer states, by framework flavour and ZeRO
stage, and the data-parallel group each is sharded over.

Full training with AdamW (bytes per parameter, before sharding):

| flavour   | weights            | gradients              | optimizer (master + m + v) |
|-----------|--------------------|------------------------|----------------------------|
| megatron  | 2 (bf16)           | 4 (fp32 main_grad; 2 with grad_reduce_dtype bf16) | 12              |
| deepspeed | 2 (bf16)           | 2 (bf16)               | 12                         |
| fsdp      | 4 (fp32, sharded)  | 4 (fp32, sharded)      | 8 (m, v; params are fp32)  |
| nanotron  | 2 (bf16)           | 4 (fp32) + 2 (DDP bucket), never sharded | 12             |

Sharding by ZeRO stage: 1 shards the optimizer (Megatron's distributed optimizer: 6 + 12/DP,
`theoretical_memory_usage.py`), 2 also the gradients, 3 also the weights (DeepSpeed ZeRO-3,
Megatron-FSDP `optim_grads_params`). The fsdp flavour is FSDP2, which always shards all three: we
map zero_stage 3 to `reshard_after_forward=True` (ZeRO-3) and 2 (and 1, which FSDP has no analogue
of) to `reshard_after_forward=False` (ZeRO-2-like: the gathered bf16 weights stay from forward to
backward); zero_stage 0 is DDP (torchtitan `apply_ddp`): fp32 weights, fp32 gradients plus DDP's
bucket copy of them (PyTorch DDP, `gradient_as_bucket_view=False` default), fp32 m, v, and
autocast's bf16 weight copies during forward/backward (see gathered.py).

The group: dense weights over DP·CP (Megatron's distributed optimizer uses the DP×CP group,
torchtitan shards FSDP over dp_shard×cp, DeepSpeed-Ulysses over DP×SP), divided by the HSDP
replica count; routed experts over the expert-data-parallel group (TP·CP·DP / (EP·ETP)).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assumptions.memory import (ADAM_MOMENTS, BF16_BYTES, FP32_BYTES, FP32_MASTER_WEIGHTS,
                                  MEGATRON_MAIN_GRAD_BYTES, NANOTRON_DDP_BUCKET_BYTES,
                                  NANOTRON_FP32_GRAD_BUFFER_BYTES)
from ..plans import PlanGrid
from ..training import TrainingSetup


@dataclass(frozen=True)
class StateLayout:
    """Bytes per parameter and whether each state is sharded over data parallelism (per plan)."""

    weights: np.ndarray
    gradients: np.ndarray
    optimizer: np.ndarray
    weights_sharded: np.ndarray
    gradients_sharded: np.ndarray
    optimizer_sharded: np.ndarray


def full_training_layout(setup: TrainingSetup, grid: PlanGrid) -> StateLayout:
    n, zero = len(grid), grid.zero_stage
    adam = ADAM_MOMENTS * FP32_BYTES
    if setup.framework == "fsdp":
        ddp = zero == 0
        grads = np.where(ddp, 2 * FP32_BYTES, FP32_BYTES)  # DDP keeps its buckets as a second copy
        sharded = ~ddp
        return StateLayout(weights=np.full(n, float(FP32_BYTES)), gradients=grads.astype(float),
                           optimizer=np.full(n, float(adam)), weights_sharded=sharded,
                           gradients_sharded=sharded, optimizer_sharded=sharded)
    master_and_moments = FP32_MASTER_WEIGHTS * FP32_BYTES + adam
    if setup.framework == "nanotron":
        # fp32 accumulation buffer of every parameter (kept whole under ZeRO-1) + DDP's bf16 buckets;
        # nanotron has ZeRO-1 only (assumptions/memory.py).
        grads = NANOTRON_FP32_GRAD_BUFFER_BYTES + NANOTRON_DDP_BUCKET_BYTES
        return StateLayout(weights=np.full(n, float(BF16_BYTES)), gradients=np.full(n, float(grads)),
                           optimizer=np.full(n, float(master_and_moments)), weights_sharded=np.zeros(n, bool),
                           gradients_sharded=np.zeros(n, bool), optimizer_sharded=zero >= 1)
    # Megatron's main_grad is fp32 unless the gradients are reduced in bf16 (grad_reduce_in_fp32=False:
    # param_and_grad_buffer.py allocates the grad buffer in the param dtype)
    grad_bytes = BF16_BYTES
    if setup.framework == "megatron" and setup.grad_reduce_dtype == "fp32":
        grad_bytes = MEGATRON_MAIN_GRAD_BYTES
    return StateLayout(weights=np.full(n, float(BF16_BYTES)), gradients=np.full(n, float(grad_bytes)),
                       optimizer=np.full(n, float(master_and_moments)), weights_sharded=zero >= 3,
                       gradients_sharded=zero >= 2, optimizer_sharded=zero >= 1)


def adapter_layout(setup: TrainingSetup, grid: PlanGrid) -> StateLayout:
    """LoRA adapters: fp32 weights and gradients, fp32 m and v (PEFT's default
    `autocast_adapter_dtype=True` upcasts adapters to fp32), no master copy; sharded by stage."""
    n, zero = len(grid), grid.zero_stage
    always = setup.framework == "fsdp"
    return StateLayout(weights=np.full(n, float(FP32_BYTES)), gradients=np.full(n, float(FP32_BYTES)),
                       optimizer=np.full(n, float(ADAM_MOMENTS * FP32_BYTES)),
                       weights_sharded=(zero >= 3) | (always & (zero >= 1)),
                       gradients_sharded=(zero >= 2) | (always & (zero >= 1)),
                       optimizer_sharded=zero >= 1)


def dense_shard_group(grid: PlanGrid) -> np.ndarray:
    return np.maximum(grid.dp * grid.cp / grid.hsdp_replicas, 1.0)


def expert_shard_group(grid: PlanGrid) -> np.ndarray:
    return np.maximum(grid.expert_dp / grid.hsdp_replicas, 1.0)


def sharded(elements: np.ndarray, is_sharded: np.ndarray, group: np.ndarray) -> np.ndarray:
    return np.where(is_sharded, elements / group, elements)
