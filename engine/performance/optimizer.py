"""The optimizer step: AdamW over the parameters this GPU owns (its ZeRO shard when the
optimizer state is sharded, ZeRO >= 1), memory-bound at the achievable HBM bandwidth."""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import OPTIMIZER_BYTES_PER_PARAM
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..plans import PlanGrid


def optimizer_time(cluster: Cluster, grid: PlanGrid, dense_params: np.ndarray, expert_params: np.ndarray,
                   assume: PerformanceAssumptions) -> np.ndarray:
    sharded = grid.zero_stage >= 1
    dense = np.where(sharded, dense_params / (grid.dp * grid.cp), dense_params)
    expert = np.where(sharded, expert_params / grid.expert_dp, expert_params)
    hbm = cluster.gpu.hbm_bandwidth_gbs * 1e9 * assume.hbm_efficiency
    return (dense + expert) * OPTIMIZER_BYTES_PER_PARAM / hbm
