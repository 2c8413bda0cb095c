"""Fit a CalibrationProfile to one or more measured runs of the user's own cluster.

The unknowns are x = (log compute_scale, log comm_scale). Each run gives one equation,
log predicted(x) = log measured (tokens/s per GPU). Gauss-Newton with a small ridge
(FIT_RIDGE: minimise Σ r² + ridge·|x|²) so that one run, which cannot identify two scales,
gets the minimum-norm split: each scale moves in proportion to how much of the step its term
is. Runs inside one node carry no information on the network and leave comm_scale at 1. Both
scales are clipped to the bounds in engine/assumptions/calibration_bounds.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..assumptions.calibration_bounds import (COMM_SCALE_BOUNDS, COMPUTE_SCALE_BOUNDS, FIT_ITERATIONS, FIT_RIDGE,
                                              FIT_STEP, MAX_MEASURED_MFU)
from ..assumptions.performance import DEFAULT_ASSUMPTIONS, PerformanceAssumptions
from ..cluster import Cluster
from ..errors import SettingsInputError, ShardwiseInputError
from ..model_spec import ModelSpec
from ..performance import step_time
from ..plans import PlanGrid
from ..strategy import Strategy
from ..training import TrainingSetup
from ..validity import violations
from .profile import CalibrationProfile, MeasuredSummary, scaled_assumptions

GIB = 2**30


@dataclass(frozen=True)
class Measurement:
    """A run as it was measured: the scenario, the plan, and its throughput (tokens/s per GPU)."""

    model: ModelSpec
    cluster: Cluster
    setup: TrainingSetup
    strategy: Strategy
    tokens_per_s_per_gpu: float
    peak_gib: float | None = None
    assumptions: PerformanceAssumptions = field(default=DEFAULT_ASSUMPTIONS)  # the run's software profile

    @property
    def grid(self) -> PlanGrid:
        return PlanGrid.from_strategy(self.strategy, self.cluster.num_gpus, self.setup.global_batch)

    @property
    def crosses_nodes(self) -> bool:
        return self.cluster.num_nodes > 1


def predicted_tokens_per_gpu(m: Measurement, compute_scale: float = 1.0, comm_scale: float = 1.0) -> float:
    grid = m.grid
    assume = scaled_assumptions(m.assumptions, m.cluster, compute_scale, comm_scale)
    t = step_time(m.model, m.cluster, m.setup, grid, assume)
    tokens = float(grid.dp[0] * grid.micro_batch[0] * grid.grad_accum[0]) * m.setup.seq_len
    return tokens / float(t.step[0]) / m.cluster.num_gpus


def tokens_per_step(setup: TrainingSetup) -> int:
    return setup.global_batch * setup.seq_len


def model_tflops_per_gpu(m: Measurement) -> float:
    """Model TFLOP/s per GPU the measured throughput means (the engine's FLOPs per token, README)."""
    grid = m.grid
    t = step_time(m.model, m.cluster, m.setup, grid, m.assumptions)
    tokens = float(grid.dp[0] * grid.micro_batch[0] * grid.grad_accum[0]) * m.setup.seq_len
    return m.tokens_per_s_per_gpu * float(t.model_flops_per_step[0]) / tokens / 1e12


def predicted_peak_gib(m: Measurement) -> float:
    from ..memory import memory_per_gpu

    return float(memory_per_gpu(m.model, m.cluster, m.setup, m.grid).total[0]) / GIB


@dataclass(frozen=True)
class FitResult:
    compute_scale: float
    comm_scale: float
    at_bound: tuple[str, ...]


def fit_scales(runs: list[Measurement], fit_comm: bool = True) -> FitResult:
    """The bounded (compute_scale, comm_scale) that best explain the measured runs
    (fit_comm=False: the compute scale alone, comm_scale stays 1)."""
    lo = np.log([COMPUTE_SCALE_BOUNDS[0], COMM_SCALE_BOUNDS[0]])
    hi = np.log([COMPUTE_SCALE_BOUNDS[1], COMM_SCALE_BOUNDS[1]])
    use_comm = fit_comm and any(r.crosses_nodes for r in runs)
    dims = 2 if use_comm else 1
    measured = np.log([r.tokens_per_s_per_gpu for r in runs])
    x = np.zeros(2)

    def residuals(v: np.ndarray) -> np.ndarray:
        s = np.exp(v)
        return np.log([predicted_tokens_per_gpu(r, s[0], s[1]) for r in runs]) - measured

    for _ in range(FIT_ITERATIONS):
        r = residuals(x)
        jac = np.zeros((len(runs), dims))
        for d in range(dims):
            step = np.zeros(2)
            step[d] = FIT_STEP
            jac[:, d] = (residuals(x + step) - r) / FIT_STEP
        lhs = jac.T @ jac + FIT_RIDGE * np.eye(dims)
        rhs = -(jac.T @ r + FIT_RIDGE * x[:dims])
        delta = np.linalg.solve(lhs, rhs)
        new = x.copy()
        new[:dims] = np.clip(x[:dims] + delta, lo[:dims], hi[:dims])
        if np.max(np.abs(new - x)) < 1e-6:
            x = new
            break
        x = new
    names = ("compute_scale", "comm_scale")
    at_bound = tuple(names[d] for d in range(dims) if np.isclose(x[d], lo[d]) or np.isclose(x[d], hi[d]))
    s = np.exp(x)
    return FitResult(compute_scale=float(s[0]), comm_scale=float(s[1]), at_bound=at_bound)


def _check_runs(runs: list[Measurement]) -> None:
    if not runs:
        raise ShardwiseInputError("calibrate needs at least one measured run")
    for r in runs:
        errors, _ = violations(r.model, r.cluster, r.setup, r.strategy)
        if errors:
            raise ShardwiseInputError(f"the measured plan {r.strategy.label()} is not valid for this scenario "
                                      f"([{errors[0].rule}] {errors[0].message}); describe the run as it ran")
    for r in runs:
        achieved, peak = model_tflops_per_gpu(r), r.cluster.gpu.peak_tflops(r.setup.precision)
        if achieved > MAX_MEASURED_MFU * peak:
            raise SettingsInputError(
                f"the measured {r.tokens_per_s_per_gpu:,.0f} tokens/s per GPU of {r.model.name} would be "
                f"{achieved:,.0f} model TFLOP/s per GPU, {achieved / peak:.0%} MFU of the {r.cluster.gpu.id}'s "
                f"{peak:,.0f} dense {r.setup.precision} TFLOP/s: impossible, more than the GPU can do; check the figure (per GPU, "
                "not per job? tokens, not samples?) and the settings describing the run ({gpus}, {seq_len}, {global_batch})",
                "gpus", "seq_len", "global_batch")
        if r.peak_gib is not None and r.peak_gib > r.cluster.gpu.memory_gib:
            # compared, not fitted, but a peak above the GPU's memory says the run is described wrongly (the GPU)
            raise SettingsInputError(
                f"the measured peak memory {r.peak_gib:.1f} GiB is more than the {r.cluster.gpu.id}'s "
                f"{r.cluster.gpu.memory_gib:g} GiB: is {{gpu}} set to the GPU the run used?", "gpu")
    first = runs[0]
    for r in runs[1:]:
        if (r.cluster.gpu.id, r.setup.precision, r.setup.framework) != (
                first.cluster.gpu.id, first.setup.precision, first.setup.framework):
            raise ShardwiseInputError(
                "all measured runs of one profile must share GPU, precision and framework; got "
                f"{first.cluster.gpu.id}/{first.setup.precision}/{first.setup.framework} and "
                f"{r.cluster.gpu.id}/{r.setup.precision}/{r.setup.framework} (save one profile per combination)")
    networks = {r.cluster.network.id for r in runs if r.crosses_nodes}
    if len(networks) > 1:
        raise ShardwiseInputError(f"measured multi-node runs use different networks ({', '.join(sorted(networks))}); "
                                  "one profile describes one network")


def fit_profile(runs: list[Measurement], with_memory: bool = True) -> CalibrationProfile:
    """Fit, and record each run's prediction before and after (and its peak memory if measured)."""
    _check_runs(runs)
    fit = fit_scales(runs)
    networks = sorted({r.cluster.network.id for r in runs if r.crosses_nodes})
    summaries = []
    for r in runs:
        peak = predicted_peak_gib(r) if (with_memory and r.peak_gib is not None) else None
        summaries.append(MeasuredSummary(
            model=r.model.name, gpus=r.cluster.num_gpus, seq_len=r.setup.seq_len, global_batch=r.setup.global_batch,
            plan=r.strategy.label(),
            measured_tokens_per_s_per_gpu=r.tokens_per_s_per_gpu,
            predicted_before=predicted_tokens_per_gpu(r),
            predicted_after=predicted_tokens_per_gpu(r, fit.compute_scale, fit.comm_scale),
            measured_peak_gib=r.peak_gib, predicted_peak_gib=peak))
    first = runs[0]
    return CalibrationProfile(
        gpu=first.cluster.gpu.id, precision=first.setup.precision, framework=first.setup.framework,
        network=networks[0] if networks else None, compute_scale=fit.compute_scale,
        comm_scale=fit.comm_scale if networks else 1.0, at_bound=list(fit.at_bound), runs=summaries)
