"""Context-parallel ring attention (Liu et al. 2023; Megatron-Core/Transformer Engine):
each of the cp−1 ring steps passes this rank's K and V chunk (b·s/cp tokens, the rank's TP
share of KV heads) to the next rank, overlapped with the attention on the chunk in hand.
Backward passes K/V again plus their gradients (twice the bytes). Only what the attention
compute cannot hide is exposed. The ring also costs kernels: each extra step launches its own
attention and merges the partial result (CP_KERNELS_PER_EXTRA_RING_STEP: one attention kernel at
KERNEL_FIXED_S, two small corrections at SMALL_KERNEL_FIXED_S), which no overlap hides.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import (ACTIVATION_BYTES, ATTENTION_BACKWARD_TIME_RATIO,
                                   CP_ATTENTION_KERNELS_PER_EXTRA_RING_STEP, CP_SMALL_KERNELS_PER_EXTRA_RING_STEP)
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..flops import attention_dims
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_NONE, PlanGrid
from .collectives import p2p_time
from .topology import cp_group


def kv_chunk_bytes(model: ModelSpec, grid: PlanGrid, tokens: np.ndarray) -> np.ndarray:
    heads, d_qk, d_v = attention_dims(model)
    if model.mla is not None:  # MLA exchanges the up-projected per-head K and V
        per_token = heads * (d_qk + d_v)
    else:
        per_token = model.kv_heads * (d_qk + d_v)
    return tokens * per_token * ACTIVATION_BYTES / np.minimum(grid.tp, model.kv_heads if model.mla is None else heads)


def cp_time_per_layer(model: ModelSpec, cluster: Cluster, grid: PlanGrid, tokens: np.ndarray,
                      attention_forward: np.ndarray, assume: PerformanceAssumptions) -> np.ndarray:
    links = cp_group(cluster, grid, assume)
    step = p2p_time(kv_chunk_bytes(model, grid, tokens), links)
    steps = grid.cp - 1
    # per direction: the extra attention kernel at the large-kernel cost, its corrections at the small one
    ring_kernels = steps * (CP_ATTENTION_KERNELS_PER_EXTRA_RING_STEP * assume.kernel_fixed_s
                            + CP_SMALL_KERNELS_PER_EXTRA_RING_STEP * assume.small_kernel_fixed_s)
    fwd = np.maximum(0.0, steps * step - assume.cp_overlap * attention_forward) + ring_kernels
    bwd = (np.maximum(0.0, 2 * steps * step - assume.cp_overlap * ATTENTION_BACKWARD_TIME_RATIO * attention_forward)
           + ring_kernels)
    again = np.where(grid.recompute != RECOMPUTE_NONE, fwd, 0.0)
    return np.where(grid.cp > 1, fwd + bwd + again, 0.0)
