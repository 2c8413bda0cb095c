"""Activation bytes on one pipeline rank at each phase of the step (see rank.PHASES)."""

from __future__ import annotations

import numpy as np

from .activations import LayerActivations, backward_gradient_temporaries_per_token, tokens_per_microbatch
from .logits import final_norm_bytes, loss_buffer_bytes
from .pipeline_inflight import inflight_microbatches
from .rank import Rank


def activation_terms(rank: Rank, layers: LayerActivations, phase: str) -> dict[str, np.ndarray]:
    model, setup, grid, stage = rank.model, rank.setup, rank.grid, rank.stage
    if phase == "optimizer_step":
        return {}
    tokens = tokens_per_microbatch(setup, grid)
    one_microbatch = tokens * (stage.dense_layers * layers.dense_saved + stage.moe_layers * layers.moe_saved)
    held = inflight_microbatches(grid, stage.rank) * one_microbatch
    if phase == "loss":
        return {
            "layers": held,
            "final_norm": np.where(stage.has_output, final_norm_bytes(model, setup, grid), 0.0),
            "logits_and_loss": np.where(stage.has_output, loss_buffer_bytes(model, setup, grid), 0.0),
        }
    if phase == "embedding_backward":
        return {"layers": np.maximum(held - one_microbatch, 0.0)}
    # layer_backward: one layer rebuilt (recompute) plus the activation gradients of its backward
    rebuilt = np.maximum(np.where(stage.dense_layers > 0, layers.dense_all - layers.dense_saved, 0.0),
                         np.where(stage.moe_layers > 0, layers.moe_all - layers.moe_saved, 0.0))
    return {
        "layers": held,
        "recomputed_layer": tokens * rebuilt,
        "backward_temporaries": tokens * backward_gradient_temporaries_per_token(model, grid),
    }
