"""Everything the per-category formulas need about one candidate pipeline rank."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..training import TrainingSetup
from .lora import adapter_params_on_rank
from .params_on_rank import RankParams, rank_params
from .stages import StageLoad

PHASES = ("loss", "last_layer_backward", "last_layer_backward_end", "first_layer_backward",
          "first_layer_backward_end", "embedding_backward", "optimizer_step")
"""Moments of a training step that can be the peak, on one pipeline rank:
- loss: the start of the backward on the last stage — all in-flight activations, logits and loss buffers;
- last_layer_backward: inside the MLP backward of the rank's last layer (the first one back-propagated)
  — all in-flight activations, the layer's recomputed tensors and activation gradients, gathered
  weights and the gradient buffers then alive;
- last_layer_backward_end: that layer's gradients complete and its activations freed, not yet reduced;
- first_layer_backward(_end): the same for the rank's first layer (the last back-propagated), when the
  micro-batch's other activations are gone but FSDP has prefetched the embedding;
- embedding_backward: the end of a micro-batch's backward on the first stage — the embedding's
  gradient (and, for FSDP, its gathered weights and reduce-scatter buffer);
- optimizer_step: no activations; the optimizer's temporaries.
"""


@dataclass(frozen=True)
class Rank:
    model: ModelSpec
    setup: TrainingSetup
    grid: PlanGrid
    stage: StageLoad
    params: RankParams
    adapter_dense: np.ndarray  # LoRA adapter elements (0 in full training)
    adapter_expert: np.ndarray

    @property
    def n(self) -> int:
        return len(self.grid)

    @property
    def full_training(self) -> bool:
        return self.setup.mode == "full"


def build_rank(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid, stage: StageLoad) -> Rank:
    params = rank_params(model, grid, stage)
    if setup.mode == "full":
        zeros = np.zeros(len(grid))
        adapters = (zeros, zeros)
    else:
        adapters = adapter_params_on_rank(model, setup, grid, stage)
    return Rank(model=model, setup=setup, grid=grid, stage=stage, params=params,
                adapter_dense=adapters[0], adapter_expert=adapters[1])
