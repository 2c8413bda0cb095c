"""Tensor-parallel communication (Shoeybi et al. 2019; with sequence parallelism, Korthikanti
et al. 2022): per layer and micro-batch, the forward pass does 2 all-reduces of the layer's
activations (b·s/cp·h elements) — or, with SP, 2 all-gathers + 2 reduce-scatters, the same
bytes on the wire — and the backward pass the same again. Full recompute repeats the forward's.
The first stage's embedding and the last stage's logit layer add one each.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import ACTIVATION_BYTES
from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_FULL, PlanGrid
from ..training import TrainingSetup
from .collectives import all_reduce_time
from .topology import tp_group

ALL_REDUCES_PER_LAYER_FWD = 2
ALL_REDUCES_PER_LAYER_BWD = 2


def tp_time_per_layer(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid,
                      tokens: np.ndarray, assume: PerformanceAssumptions) -> tuple[np.ndarray, np.ndarray]:
    """(exposed seconds per layer per micro-batch, exposed seconds for embedding + logits per micro-batch)."""
    links = tp_group(cluster, grid, assume)
    one = all_reduce_time(tokens * model.hidden_size * ACTIVATION_BYTES, links)
    count = ALL_REDUCES_PER_LAYER_FWD + ALL_REDUCES_PER_LAYER_BWD + np.where(
        grid.recompute == RECOMPUTE_FULL, ALL_REDUCES_PER_LAYER_FWD, 0)
    # Overlap (Transformer Engine userbuffers, torchtitan async TP) works over NVLink only.
    exposed = 1.0 - np.where(links.crosses_nodes, 0.0, assume.tp_overlap_for(setup.framework))
    return exposed * count * one, exposed * 2 * one
