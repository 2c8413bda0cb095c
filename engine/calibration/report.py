"""The validation report: predicted vs measured throughput (and peak memory where measured)
for every shipped calibration run, the error of each row, MAPE overall / per source / on the
held-out groups, and rank agreement of plans within each model/cluster group."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from ..assumptions.performance import PerformanceAssumptions
from ..plans import PlanGrid
from .coverage import GAP_EDGES
from .metrics import kendall_tau_b, mape, ordered_pairs_by_gap, spearman
from .predict import predict
from .runs import ALLOCATED_MEMORY_SOURCES, CalibrationRun, load_runs

GIB = 2**30
MIN_GROUP_FOR_RANKING = 4  # plans needed in a group before its ranking is scored


class _R(BaseModel):
    model_config = ConfigDict(frozen=True)


class RowResult(_R):
    key: str
    source: str
    model: str
    gpu: str
    num_gpus: int
    plan: str
    precision: str
    measured_tokens_per_gpu: float
    predicted_tokens_per_gpu: float
    error: float = Field(description="predicted / measured − 1")
    throughput_basis: str
    measured_memory_gib: float | None = None
    predicted_memory_gib: float | None = None
    memory_error: float | None = None
    group: str
    holdout: bool


class GroupRanking(_R):
    group: str
    plans: int
    spearman: float
    kendall: float
    top1_regret: float | None = Field(
        default=None, description="1 − measured throughput of the plan the model ranks first (highest predicted "
                                  "throughput among the plans it predicts to fit, as `recommend` picks) / the best "
                                  "measured throughput in the group; None when it predicts none to fit")
    top1_plan: str | None = None
    best_plan: str | None = None


class GapAgreement(_R):
    """Pairs of plans in one model/cluster group whose predicted throughputs differ by a gap in
    [gap_from, gap_to), and how many of them the model orders as measured."""

    gap_from: float
    gap_to: float | None = Field(description="None: no upper bound")
    pairs: int
    ordered_as_measured: float = Field(description="share of those pairs, 0-1")


class SourceSummary(_R):
    source: str
    rows: int
    mape: float
    median_abs_error: float
    within_15pct: float = Field(description="share of rows with |error| <= 15 %")
    memory_rows: int = 0
    memory_mape: float | None = None


class ValidationReport(_R):
    rows: list[RowResult]
    sources: list[SourceSummary]
    groups: list[GroupRanking]
    mape: float
    mape_fitted: float
    mape_holdout: float
    median_abs_error: float
    p90_abs_error: float
    mean_spearman: float | None
    mean_kendall: float | None
    weighted_spearman: float | None = Field(default=None, description="mean weighted by plans per group")
    weighted_kendall: float | None = None
    weighted_top1_regret: float | None = Field(default=None, description="top-1 regret, mean weighted by plans per group")
    memory_mape: float | None
    excluded: dict[str, int]
    order_by_gap: list[GapAgreement] = Field(default_factory=list,
                                             description="pairwise ordering accuracy by predicted gap")


def _memory_gib(run: CalibrationRun) -> float | None:
    """Predicted peak memory per GPU from the memory model (None if it is unavailable)."""
    try:
        from ..memory import memory_per_gpu
    except ImportError:  # pragma: no cover - the memory model ships with the engine
        return None
    grid = PlanGrid.from_strategy(run.strategy, run.cluster.num_gpus, run.setup.global_batch)
    mem = memory_per_gpu(run.model, run.cluster, run.setup, grid)
    if run.source in ALLOCATED_MEMORY_SOURCES:  # the source measured allocated tensors only
        return float(mem.total[0] - mem.other[0]) / GIB
    return float(mem.total[0]) / GIB


def _predicted_to_fit(run: CalibrationRun) -> bool:
    """Whether `recommend` would consider the run's plan: predicted peak within the GPU's memory less
    the search's default headroom."""
    from ..memory import memory_per_gpu
    from ..search import DEFAULT_HEADROOM
    grid = PlanGrid.from_strategy(run.strategy, run.cluster.num_gpus, run.setup.global_batch)
    total = float(memory_per_gpu(run.model, run.cluster, run.setup, grid).total[0])
    return total <= run.cluster.gpu.memory_gib * GIB * (1.0 - DEFAULT_HEADROOM)


def top1_regret(predicted, measured, fits) -> tuple[float | None, int | None]:
    """(1 − measured[first] / max(measured), first): `first` is the plan with the highest predicted
    throughput among those predicted to fit; (None, None) if none is."""
    candidates = [i for i, ok in enumerate(fits) if ok]
    if not candidates:
        return None, None
    first = max(candidates, key=lambda i: predicted[i])
    return 1.0 - measured[first] / max(measured), first


def _summary(source: str, rows: list[RowResult]) -> SourceSummary:
    e = np.array([abs(r.error) for r in rows])
    mem = [abs(r.memory_error) for r in rows if r.memory_error is not None]
    return SourceSummary(source=source, rows=len(rows), mape=float(e.mean()), median_abs_error=float(np.median(e)),
                         within_15pct=float(np.mean(e <= 0.15)), memory_rows=len(mem),
                         memory_mape=float(np.mean(mem)) if mem else None)


def build_report(source: str | None = None, assumptions: PerformanceAssumptions | None = None,
                 with_memory: bool = True) -> ValidationReport:
    runs = load_runs()
    used = [r for r in runs if r.used and (source is None or r.source == source)]
    preds = predict(used, assumptions)
    rows = []
    for p in preds:
        r = p.run
        mem_pred = _memory_gib(r) if with_memory and r.measured_memory_gib is not None else None
        mem_err = (mem_pred / r.measured_memory_gib - 1) if mem_pred is not None else None
        rows.append(RowResult(
            key=r.key, source=r.source, model=r.model.name, gpu=r.cluster.gpu.id, num_gpus=r.cluster.num_gpus,
            plan=r.strategy.label() + (f" CP{r.strategy.cp}" if r.strategy.cp > 1 else ""),
            precision=r.setup.precision, measured_tokens_per_gpu=r.measured_tokens_per_gpu,
            predicted_tokens_per_gpu=p.tokens_per_gpu, error=p.error, throughput_basis=r.throughput_basis,
            measured_memory_gib=r.measured_memory_gib, predicted_memory_gib=mem_pred, memory_error=mem_err,
            group=r.group, holdout=r.holdout))

    fits_by_key = {p.run.key: _predicted_to_fit(p.run) for p in preds}
    by_source: dict[str, list[RowResult]] = defaultdict(list)
    by_group: dict[str, list[RowResult]] = defaultdict(list)
    for row in rows:
        by_source[row.source].append(row)
        by_group[row.group].append(row)
    groups = []
    for g, members in sorted(by_group.items()):
        if len(members) < MIN_GROUP_FOR_RANKING:
            continue
        meas = [m.measured_tokens_per_gpu for m in members]
        pred = [m.predicted_tokens_per_gpu for m in members]
        if len(set(meas)) < 2 or len(set(np.round(pred, 6))) < 2:
            continue  # nothing to rank, or the plans differ only in what the model does not see
        fits = [fits_by_key[m.key] for m in members]
        regret, first = top1_regret(pred, meas, fits)
        groups.append(GroupRanking(group=g, plans=len(members), spearman=spearman(pred, meas),
                                   kendall=kendall_tau_b(pred, meas), top1_regret=regret,
                                   top1_plan=None if first is None else members[first].plan,
                                   best_plan=members[int(np.argmax(meas))].plan))
    pairs = np.zeros(len(GAP_EDGES) - 1)
    agree = np.zeros(len(GAP_EDGES) - 1)
    for members in by_group.values():
        n, a = ordered_pairs_by_gap([m.predicted_tokens_per_gpu for m in members],
                                    [m.measured_tokens_per_gpu for m in members], GAP_EDGES)
        pairs, agree = pairs + n, agree + a
    order_by_gap = [GapAgreement(gap_from=lo, gap_to=None if np.isinf(hi) else hi, pairs=int(n),
                                 ordered_as_measured=float(a / n))
                    for lo, hi, n, a in zip(GAP_EDGES[:-1], GAP_EDGES[1:], pairs, agree) if n]
    errs = np.array([abs(r.error) for r in rows])
    fitted = [abs(r.error) for r in rows if not r.holdout]
    held = [abs(r.error) for r in rows if r.holdout]
    mem = [abs(r.memory_error) for r in rows if r.memory_error is not None]
    excluded: dict[str, int] = defaultdict(int)
    for r in runs:
        if not r.used and (source is None or r.source == source):
            excluded[r.status.removeprefix("excluded: ")] += 1
    return ValidationReport(
        rows=rows,
        sources=[_summary(s, rs) for s, rs in sorted(by_source.items())],
        groups=groups,
        mape=float(errs.mean()) if len(errs) else float("nan"),
        mape_fitted=float(np.mean(fitted)) if fitted else float("nan"),
        mape_holdout=float(np.mean(held)) if held else float("nan"),
        median_abs_error=float(np.median(errs)) if len(errs) else float("nan"),
        p90_abs_error=float(np.quantile(errs, 0.9)) if len(errs) else float("nan"),
        mean_spearman=float(np.mean([g.spearman for g in groups])) if groups else None,
        mean_kendall=float(np.mean([g.kendall for g in groups])) if groups else None,
        weighted_spearman=_weighted([g.spearman for g in groups], [g.plans for g in groups]),
        weighted_kendall=_weighted([g.kendall for g in groups], [g.plans for g in groups]),
        weighted_top1_regret=_weighted([g.top1_regret for g in groups if g.top1_regret is not None],
                                       [g.plans for g in groups if g.top1_regret is not None]),
        memory_mape=float(np.mean(mem)) if mem else None,
        excluded=dict(sorted(excluded.items(), key=lambda kv: -kv[1])),
        order_by_gap=order_by_gap,
    )


def _weighted(values: list[float], weights: list[int]) -> float | None:
    return float(np.average(values, weights=weights)) if values else None


def mape_of(rows: list[RowResult]) -> float:
    return mape([r.predicted_tokens_per_gpu for r in rows], [r.measured_tokens_per_gpu for r in rows])
