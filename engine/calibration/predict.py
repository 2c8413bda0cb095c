"""Predict calibration runs with the engine: rows sharing model, cluster and setup are
evaluated as one PlanGrid (the same vectorised path the search uses)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace

import numpy as np

from ..assumptions.performance import DEFAULT_ASSUMPTIONS, PerformanceAssumptions
from ..performance import step_time
from ..plans import PlanGrid
from ..strategy import RECOMPUTE_MODES
from .runs import CalibrationRun


@dataclass(frozen=True)
class Prediction:
    run: CalibrationRun
    tokens_per_gpu: float
    step_s: float
    mfu: float

    @property
    def error(self) -> float:
        """Signed relative error of the predicted throughput."""
        return self.tokens_per_gpu / self.run.measured_tokens_per_gpu - 1.0


def _grid(runs: list[CalibrationRun]) -> PlanGrid:
    s = [r.strategy for r in runs]
    first = runs[0]
    return PlanGrid.build(
        first.cluster.num_gpus, first.setup.global_batch,
        tp=[x.tp for x in s], pp=[x.pp for x in s], vpp=[x.vpp for x in s], cp=[x.cp for x in s],
        ep=[x.ep for x in s], etp=[x.etp for x in s], zero_stage=[x.zero_stage for x in s],
        hsdp_replicas=[x.hsdp_replicas for x in s], micro_batch=[x.micro_batch for x in s],
        sequence_parallel=[x.sequence_parallel for x in s],
        recompute=[RECOMPUTE_MODES.index(x.recompute) for x in s])


def run_assumptions(run: CalibrationRun, assume: PerformanceAssumptions) -> PerformanceAssumptions:
    """The engine's assumptions as they apply to this run's software: frameworks that did not
    overlap TP communication, torchao's rowwise FP8 recipe, and nanotron's host overhead for the
    Playbook runs."""
    fw = run.setup.framework
    changes = {}
    if not run.tp_comm_overlap:
        changes["tp_overlap"] = {**assume.tp_overlap, fw: 0.0}
    if run.fp8_rowwise:
        changes["fp8_gemm_efficiency"] = {g: e * assume.fp8_rowwise_factor for g, e in assume.fp8_gemm_efficiency.items()}
    assume = replace(assume, **changes) if changes else assume
    # CUDA graphs need nothing here: the recipe's mode is in run.setup.cuda_graphs, priced as a user's.
    # The run's software may not be one a user can pick (nanotron): use its own profile.
    return assume.running_as(fw, run.host_framework)


def predict(runs: list[CalibrationRun], assumptions: PerformanceAssumptions | None = None) -> list[Prediction]:
    assume = assumptions or DEFAULT_ASSUMPTIONS
    batches: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(runs):
        batches[(id(r.model), r.cluster.model_dump_json(), r.setup.model_dump_json(), r.tp_comm_overlap,
                 r.host_framework, r.fp8_rowwise, r.cuda_graphs)].append(i)
    out: list[Prediction | None] = [None] * len(runs)
    for idx in batches.values():
        group = [runs[i] for i in idx]
        first = group[0]
        grid = _grid(group)
        t = step_time(first.model, first.cluster, first.setup, grid, run_assumptions(first, assume))
        tokens = grid.dp * grid.micro_batch * grid.grad_accum * first.setup.seq_len
        per_gpu = tokens / t.step / first.cluster.num_gpus
        peak = first.cluster.gpu.peak_tflops(first.setup.precision) * 1e12 * first.cluster.num_gpus
        mfu = t.model_flops_per_step / t.step / peak
        for j, i in enumerate(idx):
            out[i] = Prediction(run=runs[i], tokens_per_gpu=float(per_gpu[j]), step_s=float(t.step[j]), mfu=float(mfu[j]))
    return out  # type: ignore[return-value]


def errors(predictions: list[Prediction]) -> np.ndarray:
    return np.array([p.error for p in predictions])
