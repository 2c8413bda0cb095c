"""Memory per GPU on the most loaded rank, at the peak of a training step, for a whole PlanGrid.

`memory_per_gpu` evaluates three candidate pipeline ranks (first, second, last — stages.py) at four
moments of the step (rank.PHASES) and keeps, per plan, the heaviest. Its breakdown is that moment's:
- weights: parameters as stored (+ FP8 weight caches; weights.py) and ZeRO-3/FSDP gathered copies
  (phase_buffers.py);
- gradients: stored gradients, reduction buckets (gradients.py), unsharded gradient buffers
  (phase_buffers.py);
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
from .gradients import gradients_at_rest, stored_gradients_present
from .optimizer import optimizer_states, optimizer_step_temporaries
from .overheads import other_terms
from .rank import PHASES, build_rank
from .stage_activations import activation_terms, stage_activations
from .stages import candidate_stages
from .terms import Heaviest, Terms
from .phase_buffers import phase_buffers
from .post_training import post_training_at_rest, post_training_moments
from .weights import weights_at_rest

__all__ = ["memory_per_gpu", "ActivationOptions"]


def memory_per_gpu(model: ModelSpec, cluster: Cluster, setup: TrainingSetup, grid: PlanGrid, *,
                   attention: str = "flash", dropout: bool = False) -> MemoryArrays:
    """Bytes per GPU on the most loaded rank. `attention` ("flash" | "materialised") and `dropout`
    switch the activation model away from the defaults (flash, no dropout)."""
    if attention not in ("flash", "materialised"):
        raise ValueError(f"attention must be 'flash' or 'materialised', not {attention!r}")
    n = len(grid)
    layers = layer_activations(model, setup, grid, ActivationOptions(attention=attention, dropout=dropout))
    heaviest = Heaviest(n)
    post = setup.post_training
    generation = None
    if post is not None and post.generates:
        from ..post_training.rollout import rollout  # the rollout does not depend on the training plan

        generation = rollout(model, cluster, post, setup.global_batch)
    for stage in candidate_stages(model, grid):
        rank = build_rank(model, setup, grid, stage)
        at_rest = Terms()
        for name, value in weights_at_rest(rank).items():
            at_rest.add("weights", name, value)
        for name, value in optimizer_states(rank).items():
            at_rest.add("optimizer", name, value)
        for key, value in post_training_at_rest(rank).values.items():
            at_rest.add(*key.split(".", 1), value)
        stored_gradients = gradients_at_rest(rank)
        acts, one_layer = stage_activations(rank, layers)
        for phase in PHASES:
            moment = Terms(at_rest.values)
            present = stored_gradients_present(rank, phase)
            for name, value in stored_gradients.items():
                moment.add("gradients", name, np.where(present, value, 0.0) if name == "gradients" else value)
            buffers = phase_buffers(rank, phase)
            moment.add("weights", "gathered", buffers.gathered_weights)
            moment.add("gradients", "unsharded_buffers", buffers.gradient_buffers)
            if phase == "optimizer_step":
                moment.add("optimizer", "step_temporaries", optimizer_step_temporaries(rank))
            for name, value in activation_terms(acts, one_layer, phase).items():
                moment.add("activations", name, value)
            heaviest.offer(moment, "policy_training")
        for phase, moment in post_training_moments(rank, at_rest, stored_gradients, generation):
            heaviest.offer(moment, phase)
    peak = heaviest.terms
    tensors = heaviest.total
    other = other_terms(model, grid, tensors, setup.moe_dispatcher)
    details = dict(peak.values)
    details.update({f"other.{k}": v for k, v in other.items()})
    return MemoryArrays(
        weights=peak.category("weights", n), gradients=peak.category("gradients", n),
        optimizer=peak.category("optimizer", n), activations=peak.category("activations", n),
        other=sum(other.values()), details=details,
        peak_phase=heaviest.phase if post is not None else None,
    )
