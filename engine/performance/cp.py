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
from .collectives import all_to_all_time, p2p_time
from .topology import cp_group


def kv_chunk_bytes(model: ModelSpec, grid: PlanGrid, tokens: np.ndarray) -> np.ndarray:
    heads, d_qk, d_v = attention_dims(model)
    if model.mla is not None:  # MLA exchanges the up-projected per-head K and V
        per_token = heads * (d_qk + d_v)
    else:
        per_token = model.kv_heads * (d_qk + d_v)
    return tokens * per_token * ACTIVATION_BYTES / np.minimum(grid.tp, model.kv_heads if model.mla is None else heads)


def a2a_bytes_per_layer(model: ModelSpec, grid: PlanGrid, tokens: np.ndarray) -> list[np.ndarray]:
    """Bytes one GPU sends into each all-to-all of one layer's forward (Ulysses-style CP, Jacobs et al. 2023,
    "DeepSpeed Ulysses"; Transformer Engine's AttnFuncWithCPAndQKVOA2A): Q, K and V (sequence-sharded ->
    head-sharded) before the attention, the output back after it; the backward's dO, dQ, dK and dV match."""
    heads, d_qk, d_v = attention_dims(model)
    kv = kv_chunk_bytes(model, grid, tokens) / 2  # K or V alone (d_qk = d_v for the models that run a2a)
    q = tokens * heads * d_qk * ACTIVATION_BYTES / grid.tp
    out = tokens * heads * d_v * ACTIVATION_BYTES / grid.tp
    return [q, kv, kv, out]


def cp_time_per_layer(model: ModelSpec, cluster: Cluster, grid: PlanGrid, tokens: np.ndarray,
                      attention_forward: np.ndarray, assume: PerformanceAssumptions,
                      comm_type: str = "p2p") -> np.ndarray:
    """Seconds per layer of CP communication and ring kernels. comm_type 'a2a': four all-to-alls forward and four
    backward, exposed (the attention cannot start before its heads arrive), one un-split attention kernel, no ring.
    Every other type ('p2p', 'a2a+p2p', 'all_gather') is priced as the P2P ring (an approximation for the last two,
    whose group split and gather overlap the engine does not model)."""
    links = cp_group(cluster, grid, assume)
    if comm_type == "a2a":
        fwd = sum(all_to_all_time(b, links) for b in a2a_bytes_per_layer(model, grid, tokens))
        again = np.where(grid.recompute != RECOMPUTE_NONE, fwd, 0.0)
        return np.where(grid.cp > 1, 2 * fwd + again, 0.0)
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
