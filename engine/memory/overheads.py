"""`other`: memory that is not a tensor of the model — CUDA context, NCCL buffers, allocator
fragmentation (constants and sources in assumptions/memory.py). PyTorch's memory trackers do not see
these, so `total − other` is what they report as the peak."""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import (ALLOCATOR_FRAGMENTATION_FRACTION, CUDA_CONTEXT_BYTES,
                                  NCCL_BYTES_PER_COMMUNICATOR)
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from .ep_buffers import deepep_buffer_bytes


def communicators_in_use(model: ModelSpec, grid: PlanGrid) -> np.ndarray:
    """NCCL communicators a rank initialises: one per parallel group of size > 1 that it talks on."""
    groups = [grid.tp, grid.cp, grid.pp, grid.dp * grid.cp]
    if model.moe is not None:
        groups += [grid.ep, grid.etp, grid.expert_dp]
    return sum((g > 1).astype(int) for g in groups)


def other_terms(model: ModelSpec, grid: PlanGrid, tensor_peak: np.ndarray,
                moe_dispatcher: str = "alltoall") -> dict[str, np.ndarray]:
    n = len(grid)
    terms = {
        "cuda_context": np.full(n, float(CUDA_CONTEXT_BYTES)),
        "nccl_buffers": NCCL_BYTES_PER_COMMUNICATOR * communicators_in_use(model, grid).astype(float),
        "allocator_fragmentation": ALLOCATOR_FRAGMENTATION_FRACTION * tensor_peak,
    }
    if model.moe is not None and moe_dispatcher == "deepep":
        terms["deepep_buffers"] = deepep_buffer_bytes(model.hidden_size, grid.ep)
    return terms
