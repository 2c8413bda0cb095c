"""Pipeline parallelism: stage times, the 1F1B / interleaved bubble, and point-to-point sends.

1F1B (Narayanan et al. 2021, section 2.2): with p stages and m micro-batches the pipeline
runs m + p − 1 slots of the slowest stage's micro-batch time, so the bubble is
(p − 1)/m of the useful time; interleaving v virtual stages per rank shrinks it to
(p − 1)/(m·v). Stages are as slow as their slowest member: the layer split rounds up
(ceil(L/p) layers) and the last stage also carries the logit layer and the loss.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import ACTIVATION_BYTES
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from .collectives import p2p_time
from .topology import pp_group


def bubble_fraction(pp: np.ndarray, num_microbatches: np.ndarray, vpp: np.ndarray) -> np.ndarray:
    """Idle share relative to the useful time: (p − 1) / (m · v)."""
    return (pp - 1) / (num_microbatches * vpp)


def busiest_stage_layers(num_layers: int, pp: np.ndarray, last_stage_extra: np.ndarray, balance: bool) -> np.ndarray:
    """Work on the busiest stage, in layer-equivalents, when the last stage also carries
    `last_stage_extra` layer-equivalents (logit layer + loss).

    Even split (Megatron default): ceil(L/p) + extra. Balanced split: the other stages take k
    layers each and the last one L − (p−1)·k, with k the integer nearest (L + extra)/p that
    minimises max(k, L − (p−1)·k + extra)."""
    L = float(num_layers)
    pp = np.asarray(pp, dtype=np.float64)
    even = np.ceil(L / pp) + last_stage_extra
    if not balance:
        return even
    k1 = np.floor((L + last_stage_extra) / pp)
    best = even
    for k in (k1, k1 + 1):
        last = np.maximum(L - (pp - 1) * k, 0.0)
        cand = np.maximum(k, last + last_stage_extra)
        best = np.minimum(best, np.where(k >= 1, cand, np.inf))
    return np.where(pp > 1, best, L + last_stage_extra)


def pipeline_time(per_mb_avg: np.ndarray, per_mb_busiest: np.ndarray, grid: PlanGrid) -> np.ndarray:
    """Wall time of all micro-batches through the pipeline: the busiest stage sets the pace
    for m micro-batches, and fill + drain cost (p − 1)/v more of its slots."""
    m = grid.num_microbatches
    return np.where(grid.pp > 1, (m + (grid.pp - 1) / grid.vpp) * per_mb_busiest, m * per_mb_avg)


def pipeline_time_uneven(per_mb_avg: np.ndarray, per_mb_busiest: np.ndarray, all_stages: np.ndarray,
                         grid: PlanGrid) -> np.ndarray:
    """1F1B wall time when the stages differ: a flow shop of m identical micro-batches through
    stages of times t_r takes sum(t_r) + (m − 1)·max(t_r) — the fill and drain pass through
    every stage once at its own pace, not at the busiest one's. `all_stages`: sum(t_r) for one
    micro-batch (forward + backward through the whole model), never less than p average stages
    (the host floor is paid on every stage)."""
    m = grid.num_microbatches
    fill = np.maximum(all_stages, grid.pp * per_mb_avg)
    return np.where(grid.pp > 1, (m - 1) * per_mb_busiest + fill, m * per_mb_avg)


def pp_p2p_time(model: ModelSpec, cluster: Cluster, grid: PlanGrid, tokens: np.ndarray,
                assume: PerformanceAssumptions) -> np.ndarray:
    """Exposed send/receive time per step on one rank: activations forward and their gradients
    backward at each of its v virtual-stage boundaries, for every micro-batch. With SP the
    tensor sent is the rank's 1/tp sequence shard (Megatron scatter-gather optimisation)."""
    links = pp_group(cluster, grid, assume)
    shard = np.where(grid.sp, grid.tp, 1)
    one = p2p_time(tokens * model.hidden_size * ACTIVATION_BYTES / shard, links)
    sends = 2 * grid.vpp * grid.num_microbatches
    hidden = np.where(grid.vpp > 1, assume.pp_overlap_interleaved, assume.pp_overlap_1f1b)
    return np.where(grid.pp > 1, (1.0 - hidden) * sends * one, 0.0)
