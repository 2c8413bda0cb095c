"""Tensor-parallel communication (Shoeybi et al. 2019; with sequence parallelism, Korthikanti
et al. 2022): per layer and micro-batch, the forward pass does 2 all-reduces of the layer's
activations (b·s/cp·h elements) — or, with SP, 2 all-gathers + 2 reduce-scatters, the same
bytes on the wire — and the backward pass the same again. Full recompute repeats the forward's.
The first stage's embedding and the last stage's logit layer add one each.

Overlap hides a fraction f (tp_overlap_for) of the collectives behind the GEMMs they feed or follow.
In the backward of full training those are the data-gradient and the weight-gradient GEMMs; with a
frozen base (LoRA/QLoRA) only the data-gradient ones run, half the backward's GEMM time, so the
backward can hide only that share of what full training hides:

    exposed per layer = (1 − f)·(n_fwd + n_recompute)·t  +  (1 − f·s)·n_bwd·t,
    s = 1 (full) or FROZEN_BACKWARD_GEMM_SHARE = 1/2 (frozen base),

t one all-reduce-equivalent. Full training is unchanged (s = 1).
"""

from __future__ import annotations

import numpy as np

from ..assumptions.compute import ACTIVATION_BYTES, FROZEN_BACKWARD_GEMM_SHARE
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
    forward_count = ALL_REDUCES_PER_LAYER_FWD + np.where(grid.recompute == RECOMPUTE_FULL, ALL_REDUCES_PER_LAYER_FWD, 0)
    # Overlap (Transformer Engine userbuffers, torchtitan async TP) works over NVLink only.
    overlap = np.where(links.crosses_nodes, 0.0, assume.tp_overlap_for(setup.framework))
    # A frozen base's backward has only its data-gradient GEMMs to hide behind (module docstring).
    backward_share = 1.0 if setup.mode == "full" else FROZEN_BACKWARD_GEMM_SHARE
    exposed_layer = (1.0 - overlap) * forward_count + (1.0 - overlap * backward_share) * ALL_REDUCES_PER_LAYER_BWD
    return exposed_layer * one, (1.0 - overlap) * 2 * one
