"""The calibration transfer check: calibrate on the smallest run of a family, predict the rest.

A family is the shipped runs that share source, model, GPU, precision, framework and mode
(the same software on the same hardware) measured at two or more GPU counts. Its smallest run
(fewest GPUs, then shortest sequence, then file order) plays the user's one measured run: a
CalibrationProfile is fitted on it alone, and every other run of the family is predicted with
and without it. `shardwise validate --profile` prints the result; docs/performance.md reports it.

Families are split like the engine's groups: CRC32 of the family key mod 3 == 0 is held out
(benchmarks/fit_error_bands.py derives the calibrated error band from the other families and
checks its coverage on these).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache

from ..assumptions.performance import DEFAULT_ASSUMPTIONS, PerformanceAssumptions
from .fit_profile import Measurement, fit_scales, predicted_tokens_per_gpu
from .folds import HOLDOUT_FOLD, fold_of
from .predict import run_assumptions
from .runs import CalibrationRun, used_runs


def family_key(run: CalibrationRun) -> str:
    return (f"{run.source} | {run.model.name} | {run.cluster.gpu.id} | {run.setup.precision} | "
            f"{run.host_framework} | {run.setup.mode}")


def family_held_out(key: str) -> bool:
    return fold_of(key) == HOLDOUT_FOLD


def measurement(run: CalibrationRun, base: PerformanceAssumptions = DEFAULT_ASSUMPTIONS) -> Measurement:
    """The run as a user would measure it, predicted with `base` (the engine's constants, or ones
    refitted without the run's family: benchmarks/leave_family_out.py)."""
    return Measurement(model=run.model, cluster=run.cluster, setup=run.setup, strategy=run.strategy,
                       tokens_per_s_per_gpu=run.measured_tokens_per_gpu, peak_gib=run.measured_memory_gib,
                       assumptions=run_assumptions(run, base))


@dataclass(frozen=True)
class TransferRow:
    family: str
    key: str
    num_gpus: int
    measured: float
    uncalibrated: float
    calibrated: float
    held_out: bool

    @property
    def error_before(self) -> float:
        return self.uncalibrated / self.measured - 1.0

    @property
    def error_after(self) -> float:
        return self.calibrated / self.measured - 1.0


@dataclass(frozen=True)
class FamilyTransfer:
    family: str
    anchor: str  # key of the run calibrated on
    anchor_gpus: int
    compute_scale: float
    comm_scale: float
    held_out: bool
    rows: tuple[TransferRow, ...]


def families(runs: list[CalibrationRun] | None = None) -> dict[str, list[CalibrationRun]]:
    """Families measured at two or more GPU counts."""
    out: dict[str, list[CalibrationRun]] = defaultdict(list)
    for r in runs if runs is not None else used_runs():
        out[family_key(r)].append(r)
    return {k: v for k, v in sorted(out.items()) if len({r.cluster.num_gpus for r in v}) >= 2}


def _smallest(runs: list[CalibrationRun]) -> CalibrationRun:
    return min(runs, key=lambda r: (r.cluster.num_gpus, r.setup.seq_len, r.key))


def transfer_family(key: str, runs: list[CalibrationRun], base: PerformanceAssumptions = DEFAULT_ASSUMPTIONS,
                    fit_comm: bool = True) -> FamilyTransfer:
    """Calibrate on the family's smallest run and predict the others, both from `base`.
    fit_comm=False fits the compute scale alone even when the anchor crosses nodes."""
    anchor = _smallest(runs)
    a = measurement(anchor, base)
    fit = fit_scales([a], fit_comm=fit_comm)
    network = anchor.cluster.network.id if (a.crosses_nodes and fit_comm) else None
    rows = []
    for r in runs:
        if r is anchor:
            continue
        m = measurement(r, base)
        comm = fit.comm_scale if (network and m.crosses_nodes and r.cluster.network.id == network) else 1.0
        rows.append(TransferRow(family=key, key=r.key, num_gpus=r.cluster.num_gpus, measured=r.measured_tokens_per_gpu,
                                uncalibrated=predicted_tokens_per_gpu(m),
                                calibrated=predicted_tokens_per_gpu(m, fit.compute_scale, comm),
                                held_out=family_held_out(key)))
    return FamilyTransfer(family=key, anchor=anchor.key, anchor_gpus=anchor.cluster.num_gpus,
                          compute_scale=fit.compute_scale, comm_scale=fit.comm_scale if network else 1.0,
                          held_out=family_held_out(key), rows=tuple(rows))


@lru_cache(maxsize=1)
def transfer_all() -> tuple[FamilyTransfer, ...]:
    return tuple(transfer_family(k, v) for k, v in families().items())


OLDER_RELEASE_STATUS = "excluded: same configuration measured with a newer release"


@lru_cache(maxsize=1)
def transfer_older_releases() -> tuple[FamilyTransfer, ...]:
    """The situation a profile is for — software the engine was not calibrated on: Megatron-Bridge
    rows measured with an older container release than the one scored (not used by the fit or the
    bands), grouped by family and release, calibrated on the smallest run of each (fewest GPUs,
    then file order) and predicting the release's other configurations."""
    from .runs import load_runs

    out: dict[str, list[CalibrationRun]] = defaultdict(list)
    for r in load_runs():
        if r.status == OLDER_RELEASE_STATUS:
            out[f"{family_key(r)} | {r.release}"].append(r)
    families_ = []
    for key, runs in sorted(out.items()):
        # Rows repeating the anchor's configuration (Bridge lists some plans under two tasks) would
        # test nothing: the predicted runs must be other plans or scales.
        anchor = _smallest(runs)
        others = [r for r in runs if r is anchor or r.config != anchor.config]
        if len(others) >= 2:
            families_.append(transfer_family(key, others))
    return tuple(families_)


def hindsight_family(runs: list[CalibrationRun], base: PerformanceAssumptions = DEFAULT_ASSUMPTIONS
                     ) -> list[tuple[float, float, float]]:
    """The ceiling of any cluster-level calibration: scales fitted on *every* run of the family
    (the runs predicted included), as (measured, uncalibrated, calibrated) per run."""
    ms = [measurement(r, base) for r in runs]
    fit = fit_scales(ms)
    return [(m.tokens_per_s_per_gpu, predicted_tokens_per_gpu(m),
             predicted_tokens_per_gpu(m, fit.compute_scale, fit.comm_scale if m.crosses_nodes else 1.0)) for m in ms]
