"""Memory per GPU on the most loaded rank, at the peak of a training step, for a whole PlanGrid.

`memory_per_gpu` evaluates three candidate pipeline ranks (first, second, last — stages.py) at four
moments of the step (rank.PHASES) and keeps, per plan, the heaviest. Its breakdown is that moment's:
- weights: parameters as stored (+ FP8 weight caches) and ZeRO-3/FSDP gathered copies (weights.py);
- gradients: stored gradients, reduction buckets, unsharded gradient buffers (gradients.py);
- optimizer: AdamW moments and master weights, step temporaries (optimizer.py);
- activations: saved tensors of the in-flight micro-batches, the recomputed layer, backward
  temporaries, final norm, logits and loss buffers (activations.py, stage_activations.py, logits.py);
- other: CUDA context, NCCL buffers, allocator fragmentation (overheads.py).
`details` holds the finer terms as "<category>.<term>" → bytes.
"""

from __future__ import annotations

import numpy as np

from ..arrays import MemoryArrays
from ..cluster import Cluster
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..training import TrainingSetup
from .activations import ActivationOptions, layer_activations
from .gradients import gradient_buffers, gradients_at_rest
from .optimizer import optimizer_states, optimizer_step_temporaries
from .overheads import other_terms
from .rank import PHASES, build_rank
from .stage_activations import activation_terms
from .stages import candidate_stages
from .terms import Terms, pick_largest
from .weights import gathered_weights, weights_at_rest

__all__ = ["memory_per_gpu", "ActivationOptions"]


def memory_per_gpu(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid, *,
                   attention: str = "flash", dropout: bool = False) -> MemoryArrays:
    """Bytes per GPU on the most loaded rank. `attention` ("flash" | "materialised") and `dropout`
    switch the activation model away from the defaults (flash, no dropout)."""
    if attention not in ("flash", "materialised"):
        raise ValueError(f"attention must be 'flash' or 'materialised', not {attention!r}")
    n = len(grid)
    layers = layer_activations(model, setup, grid, ActivationOptions(attention=attention, dropout=dropout))
    candidates: list[Terms] = []
    for stage in candidate_stages(model, grid):
        rank = build_rank(model, setup, grid, stage)
        at_rest = Terms()
        for name, value in weights_at_rest(rank).items():
            at_rest.add("weights", name, value)
        for name, value in gradients_at_rest(rank).items():
            at_rest.add("gradients", name, value)
        for name, value in optimizer_states(rank).items():
            at_rest.add("optimizer", name, value)
        for phase in PHASES:
            moment = Terms(dict(at_rest.values))
            moment.add("weights", "gathered", gathered_weights(rank, phase))
            moment.add("gradients", "unsharded_buffers", gradient_buffers(rank, phase))
            moment.add("optimizer", "step_temporaries",
                       optimizer_step_temporaries(rank) if phase == "optimizer_step" else np.zeros(n))
            for name, value in activation_terms(rank, layers, phase).items():
                moment.add("activations", name, value)
            candidates.append(moment)
    peak, _ = pick_largest(candidates, n)
    tensors = peak.total(n)
    other = other_terms(model, grid, tensors)
    details = dict(peak.values)
    details.update({f"other.{k}": v for k, v in other.items()})
    return MemoryArrays(
        weights=peak.category("weights", n), gradients=peak.category("gradients", n),
        optimizer=peak.category("optimizer", n), activations=peak.category("activations", n),
        other=sum(other.values()), details=details,
    )
