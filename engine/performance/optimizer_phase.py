"""The optimizer phase of full training in the Megatron family: the work Megatron runs once per
optimizer step outside the forward-backward and beside AdamW's own bytes (optimizer.py), exposed.

    t = [(P_local − P_owned) · g  +  [FP8] · P_local · q] / (HBM bandwidth · HBM efficiency)  +  c

P_local: trainable parameters on this GPU (its TP/PP chunk, experts by EP·ETP); P_owned: its ZeRO
shard of them (= P_local without a distributed optimizer). g: bytes per main-gradient element
(FP32 4 or BF16 2, the reduce dtype of the grad buffer): zero_grad_buffer clears the whole local
buffer, of which optimizer.py's AdamW bytes already zero the owned shard. q: FP8 re-quantisation
of every local weight after the update (compute.FP8_REQUANT_BYTES_PER_PARAM). c: the fitted
per-step constant (compute.OPTIMIZER_PHASE_FIXED_S: norm all-reduce latency, per-tensor launches).
Only full training (LoRA/QLoRA freeze the base: no main gradients, tiny adapters) and only the
frameworks that have a constant (the Megatron family).
"""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import FP8_REQUANT_BYTES_PER_PARAM
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..plans import PlanGrid
from ..training import TrainingSetup
from .dp import ShardedParams


def optimizer_phase_time(cluster: Cluster, setup: TrainingSetup, grid: PlanGrid, params: ShardedParams,
                         grad_bytes: float, assume: PerformanceAssumptions) -> np.ndarray:
    """Seconds per optimizer step, one per plan (0 where the phase does not apply)."""
    if setup.mode != "full" or not assume.has_optimizer_phase(setup.framework):
        return np.zeros(len(grid))
    sharded = grid.zero_stage >= 1
    local = params.dense + params.expert
    owned = (np.where(sharded, params.dense / (grid.dp * grid.cp), params.dense)
             + np.where(sharded, params.expert / grid.expert_dp, params.expert))
    requant = FP8_REQUANT_BYTES_PER_PARAM if setup.precision == "fp8" else 0.0
    hbm = cluster.gpu.hbm_bandwidth_gbs * 1e9 * assume.hbm_efficiency
    return ((local - owned) * grad_bytes + local * requant) / hbm + assume.optimizer_phase_fixed_for(setup.framework)
