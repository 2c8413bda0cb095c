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
        groups.append(GroupRanking(group=g, plans=len(members), spearman=spearman(pred, meas),
                                   kendall=kendall_tau_b(pred, meas)))
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
        memory_mape=float(np.mean(mem)) if mem else None,
        excluded=dict(sorted(excluded.items(), key=lambda kv: -kv[1])),
        order_by_gap=order_by_gap,
    )


def _weighted(values: list[float], weights: list[int]) -> float | None:
    return float(np.average(values, weights=weights)) if values else None


def mape_of(rows: list[RowResult]) -> float:
    return mape([r.predicted_tokens_per_gpu for r in rows], [r.measured_tokens_per_gpu for r in rows])
