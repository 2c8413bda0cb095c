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

PHASES = ("loss", "layer_backward", "embedding_backward", "optimizer_step")
"""Moments of a training step that can be the peak:
- loss: the start of the backward on the last stage — all in-flight activations, logits and loss buffers;
- layer_backward: inside the backward of a layer — activations of the in-flight micro-batches, the
  layer's recomputed tensors and gradient temporaries, ZeRO-3/FSDP gathered weights and unsharded
  gradients;
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
