"""Gradient sync of an input embedding tied to the output layer when PP > 1.

With one pipeline stage the embedding and the LM head are one tensor on one rank. With PP > 1
the embedding lives on the first stage and the LM head on the last: each holds a copy, and after
the backward (and the data-parallel reduction) the two copies' gradients are summed with an
all-reduce between the first and the last stage, per TP shard. Neither framework hides it:
nanotron calls sync_tied_weights_gradients after waiting for the DP all-reduce ("TODO: Put this
in hooks so we can overlap communication", src/nanotron/trainer.py `training_step`;
all_reduce_coalesced over the tie's process group, src/nanotron/parallel/tied_parameters.py);
Megatron-LM all-reduces the word-embedding main_grad over its embedding group in
finalize_model_grads (`_allreduce_word_embedding_grads`, megatron/core/distributed/
finalize_model_grads.py) after the DP sync. Both reduce the gradient in its accumulation format
(fp32 main grads / nanotron's accumulate_grad_in_fp32), the DP wire format here.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.performance import PerformanceAssumptions
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..params import embedding_params
from ..plans import PlanGrid
from ..training import TrainingSetup
from .collectives import all_reduce_time
from .topology import group_links


def tied_embedding_sync_time(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid,
                             grad_bytes: float, assume: PerformanceAssumptions) -> np.ndarray:
    """Exposed seconds per step: all-reduce of the embedding's 1/tp gradient shard between the
    first and the last pipeline stage (2 ranks). They sit on one node only when the whole
    pipeline does (PP outermost, topology.py): the 2-rank group gets a stride of half the
    pipeline's span so it crosses nodes exactly when the PP group does."""
    tied = model.tied_embeddings and setup.mode == "full"
    if not tied:
        return np.zeros(len(grid))
    span = grid.pp * grid.tp * grid.cp * grid.dp  # ranks of one model replica's pipeline
    links = group_links(cluster, np.full(len(grid), 2), np.maximum(span // 2, 1), assume)
    shard = embedding_params(model) / grid.tp * grad_bytes
    return np.where(grid.pp > 1, all_reduce_time(shard, links), 0.0)
