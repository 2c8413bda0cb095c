"""Activation bytes on one pipeline rank at each phase of the step (see rank.PHASES)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assumptions.memory import NANOTRON_SAVED_ACTIVATION_FACTOR
from .activations import LayerActivations
from .logits import final_norm_bytes, loss_buffer_bytes
from .pipeline_inflight import inflight_microbatches
from .rank import Rank


@dataclass(frozen=True)
class StageActivations:
    """Bytes of one rank's activations, computed once and combined per phase."""

    one_microbatch: np.ndarray  # saved tensors of all the rank's layers, one micro-batch
    held: np.ndarray  # the in-flight micro-batches' saved tensors
    rebuilt: np.ndarray  # one layer's tensors rebuilt by recompute in its backward
    temporaries: np.ndarray  # activation gradients inside one layer's backward
    final_norm: np.ndarray  # last stage only
    loss: np.ndarray  # logits and cross-entropy buffers, last stage only


def stage_activations(rank: Rank, layers: LayerActivations) -> tuple[StageActivations, np.ndarray]:
    stage, tokens = rank.stage, layers.tokens
    one_microbatch = tokens * (stage.dense_layers * layers.dense_saved + stage.moe_layers * layers.moe_saved)
    if rank.setup.framework == "nanotron":  # fitted, mechanism not identified (assumptions/memory.py)
        one_microbatch = one_microbatch * NANOTRON_SAVED_ACTIVATION_FACTOR
    rebuilt = np.maximum(np.where(stage.dense_layers > 0, layers.dense_all - layers.dense_saved, 0.0),
                         np.where(stage.moe_layers > 0, layers.moe_all - layers.moe_saved, 0.0))
    base = StageActivations(
        one_microbatch=one_microbatch,
        held=inflight_microbatches(rank.grid, stage.rank) * one_microbatch,
        rebuilt=tokens * rebuilt,
        temporaries=tokens * layers.backward_temporaries,
        final_norm=np.where(stage.has_output, final_norm_bytes(rank.model, rank.setup, rank.grid), 0.0),
        loss=np.where(stage.has_output, loss_buffer_bytes(rank.model, rank.setup, rank.grid), 0.0),
    )
    one_layer = one_microbatch / np.maximum(stage.layers, 1)
    return base, one_layer


def activation_terms(acts: StageActivations, one_layer: np.ndarray, phase: str) -> dict[str, np.ndarray]:
    held, one_mb = acts.held, acts.one_microbatch
    if phase == "optimizer_step":
        return {}
    if phase == "loss":
        return {"layers": held, "final_norm": acts.final_norm, "logits_and_loss": acts.loss}
    if phase in ("embedding_backward", "first_layer_backward_end"):
        return {"layers": np.maximum(held - one_mb, 0.0)}
    if phase == "last_layer_backward_end":
        return {"layers": np.maximum(held - one_layer, 0.0)}
    # inside a layer's MLP backward: the layer rebuilt (recompute) plus its activation gradients
    kept = held if phase == "last_layer_backward" else np.maximum(held - one_mb + one_layer, 0.0)
    return {"layers": kept, "recomputed_layer": acts.rebuilt, "backward_temporaries": acts.temporaries}
