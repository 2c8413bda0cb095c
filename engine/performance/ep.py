"""Expert-parallel all-to-all (GShard, Lepikhin et al. 2020; Megatron-Core's alltoall token
dispatcher): every MoE layer sends each token's hidden state to its top-k experts' ranks
(dispatch) and brings the results back (combine), in forward and again in backward. Per rank
and micro-batch: (b·s/cp/tp)·top_k·h elements each way.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import ACTIVATION_BYTES
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_FULL, PlanGrid
from .collectives import all_to_all_time
from .topology import ep_group

ALL_TO_ALLS_FWD = 2  # dispatch + combine
ALL_TO_ALLS_BWD = 2


def ep_time_per_moe_layer(model: ModelSpec, cluster: Cluster, grid: PlanGrid, tokens: np.ndarray,
                          assume: PerformanceAssumptions) -> np.ndarray:
    if model.moe is None:
        return np.zeros(len(grid))
    links = ep_group(cluster, grid, assume)
    nbytes = tokens / grid.tp * model.moe.top_k * model.hidden_size * ACTIVATION_BYTES
    one = all_to_all_time(nbytes, links)
    count = ALL_TO_ALLS_FWD + ALL_TO_ALLS_BWD + np.where(grid.recompute == RECOMPUTE_FULL, ALL_TO_ALLS_FWD, 0)
    return (1.0 - assume.ep_overlap) * count * one
