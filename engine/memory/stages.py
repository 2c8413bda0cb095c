"""Which layers a pipeline rank holds, and which ranks can be the most loaded.

Layers are cut into PP·VPP chunks of ceil(L / (PP·VPP)) layers, filled in order: rank r holds
chunks r, r + PP, r + 2·PP, … (Megatron's interleaved assignment; VPP = 1 is plain 1F1B). When L
does not divide evenly the early ranks hold full chunks and the last one the remainder — the
heaviest stage has ceil(L/PP) layers, as the issue asks (Megatron and Nanotron allow such uneven
splits). The embedding sits on rank 0, the final norm and output layer on rank PP−1.

Candidates for "most loaded": rank 0 (embedding, most in-flight micro-batches), rank 1 (the most
in-flight micro-batches without the embedding — heavier than rank 0 when the first layers are dense
and later ones MoE) and rank PP−1 (output layer and logits). `memory_per_gpu` evaluates all three and
keeps the heaviest per plan.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model_spec import ModelSpec
from ..plans import PlanGrid


@dataclass(frozen=True)
class StageLoad:
    """What one pipeline rank holds, one element per plan."""

    rank: np.ndarray
    layers: np.ndarray  # transformer layers on this rank, all virtual chunks together
    moe_layers: np.ndarray
    has_embedding: np.ndarray  # bool
    has_output: np.ndarray  # bool: final norm + output layer (+ the loss)

    @property
    def dense_layers(self) -> np.ndarray:
        return self.layers - self.moe_layers


def layers_per_chunk(model: ModelSpec, grid: PlanGrid) -> np.ndarray:
    return -(-model.num_layers // (grid.pp * grid.vpp))


def moe_layers_before(model: ModelSpec, n: np.ndarray) -> np.ndarray:
    """MoE layers among the first n layers: layers k, k+f, k+2f, … after k dense ones."""
    if model.moe is None:
        return np.zeros_like(n)
    k, f = model.moe.first_k_dense_layers, model.moe.layer_frequency
    return (np.maximum(n - k, 0) + f - 1) // f


def stage_load(model: ModelSpec, grid: PlanGrid, rank: np.ndarray) -> StageLoad:
    num_layers = model.num_layers
    chunk = layers_per_chunk(model, grid)
    layers = np.zeros(len(grid), dtype=np.int64)
    moe = np.zeros(len(grid), dtype=np.int64)
    for v in range(int(grid.vpp.max())):
        start = np.minimum((v * grid.pp + rank) * chunk, num_layers)
        end = np.minimum(start + chunk, num_layers)
        held = v < grid.vpp
        layers += np.where(held, end - start, 0)
        moe += np.where(held, moe_layers_before(model, end) - moe_layers_before(model, start), 0)
    return StageLoad(rank=rank, layers=layers, moe_layers=moe, has_embedding=rank == 0,
                     has_output=rank == grid.pp - 1)


def candidate_stages(model: ModelSpec, grid: PlanGrid) -> list[StageLoad]:
    """Ranks 0, PP−1 and, when some plan has PP > 2, rank 1 (a rank listed twice is harmless)."""
    ranks = [np.zeros(len(grid), dtype=np.int64)]
    if (grid.pp > 1).any():
        ranks.append(grid.pp - 1)
    if (grid.pp > 2).any():
        ranks.append(np.minimum(1, grid.pp - 1))
    return [stage_load(model, grid, r) for r in ranks]
