"""Micro-batches whose activations a pipeline rank holds at once.

1F1B (Narayanan et al. 2021, PipeDream-Flush): rank r runs PP − r − 1 warm-up forwards and then one
more forward before its first backward, so it holds min(PP − r, m) micro-batches (m = micro-batches
per step). Interleaved 1F1B (Megatron `get_forward_backward_func` → interleaved schedule) warms up
2·(PP − r − 1) + (VPP − 1)·PP model-chunk forwards; with the one in steady state that is
2·(PP − r − 1) + (VPP − 1)·PP + 1 chunk-micro-batches, each chunk being 1/VPP of the rank's layers.
For rank 0 this is PP·(1 + (PP − 1)/(PP·VPP)) micro-batches' worth of its layers — Korthikanti et al.
2022, sec. 4.2.3, and Narayanan et al. 2021, sec. 2.2.
Without pipelining (PP = 1) one micro-batch is in flight.
"""

from __future__ import annotations

import numpy as np

from ..plans import PlanGrid


def inflight_microbatches(grid: PlanGrid, rank: np.ndarray) -> np.ndarray:
    """Micro-batches' worth of this rank's layer activations held at the rank's peak (float)."""
    m = grid.num_microbatches
    plain = np.minimum(grid.pp - rank, m).astype(float)
    chunks = 2 * (grid.pp - rank - 1) + (grid.vpp - 1) * grid.pp + 1
    interleaved = np.minimum(chunks, grid.vpp * m) / grid.vpp
    return np.where(grid.vpp > 1, interleaved, plain)
