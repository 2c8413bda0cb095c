"""Band method v4: an 80 % band for a run on a cluster the calibration data has never seen.

A user's cluster is a new *source*: its own network tuning, drivers, kernels and framework release
put all its runs at one level, and that level is one draw from the spread of sources — not the level
of the few sources that happen to fill a regime (v2 centres Megatron dense on Hopper on +6 % because
the Megatron-LM README's H100 runs sit at +8.5 %; docs/performance.md, "Protocol for session 7").
So a regime's residuals are split in two (a two-level random-effects reading, e.g. Gelman & Hill
2007, ch. 12, estimated by medians instead of variances because the residuals have heavy tails):

    residual = source offset (one per source unit) + the run's deviation from its source

A *source unit* is one publication or benchmark file on one GPU type (source_unit). The band is
the 10th–90th percentile of every sum (deviation of a regime run) + (offset of a source unit):
the regime's deviations each group once (v2's weights), every unit's offset once.
Band method v5 is this statistic on more items: the out-of-fold residuals plus the seen external runs'
(external_items.py). Pure functions, no I/O; benchmarks/fit_error_bands.py --v4/--v5 and the cross-fit use them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from .band_statistics import LOWER_Q, MIN_RUNS, UPPER_Q, cluster_weights, weighted_quantile
from .runs import CalibrationRun, short_source

# (regime keys most specific first, log residual, cluster (group), source unit)
UnitItem = tuple[list[str], float, str, str]


def source_unit(run: CalibrationRun) -> str:
    """One team's cluster and software: the publication (short_source) on one GPU type."""
    return f"{short_source(run.source)}@{run.cluster.gpu.id}"


def source_offsets(values: Sequence[float], clusters: Sequence[str], units: Sequence[str]) -> dict[str, float]:
    """Each unit's median residual, each of its groups counting once."""
    by: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for v, c, u in zip(values, clusters, units):
        by[u].append((v, c))
    return {u: weighted_quantile([v for v, _ in p], cluster_weights([c for _, c in p]), 0.5)
            for u, p in sorted(by.items())}


def new_cluster_band(values: Sequence[float], clusters: Sequence[str], units: Sequence[str],
                     offsets: dict[str, float], lower_q: float = LOWER_Q, upper_q: float = UPPER_Q
                     ) -> tuple[float, float, int]:
    """(lower, upper, runs): percentiles of (value − its unit's offset) + (any unit's offset)."""
    deviations = np.array([v - offsets[u] for v, u in zip(values, units)])
    w_dev = cluster_weights(clusters)
    shifts = np.array(list(offsets.values()))
    sums = (deviations[:, None] + shifts[None, :]).ravel()
    weights = (w_dev[:, None] * np.full(len(shifts), 1.0 / len(shifts))[None, :]).ravel()
    return weighted_quantile(sums, weights, lower_q), weighted_quantile(sums, weights, upper_q), len(values)


def new_cluster_bands_by_level(items: list[UnitItem], min_runs: int = MIN_RUNS) -> dict[str, tuple[float, float, int]]:
    """Every regime key with >= min_runs runs gets a v4 band; the offsets come from all items."""
    offsets = source_offsets([v for _, v, _, _ in items], [c for _, _, c, _ in items], [u for *_, u in items])
    pooled: dict[str, list[tuple[float, str, str]]] = defaultdict(list)
    for keys, value, cluster, unit in items:
        for k in keys:
            pooled[k].append((value, cluster, unit))
    return {k: new_cluster_band([v for v, _, _ in p], [c for _, c, _ in p], [u for *_, u in p], offsets)
            for k, p in sorted(pooled.items()) if len(p) >= min_runs}


def fold_new_cluster_bands(items: list[tuple[list[str], float, str, str, int]], fold: int,
                           min_runs: int = MIN_RUNS, always: Sequence[UnitItem] = ()
                           ) -> dict[str, tuple[float, float, int]]:
    """The v4 bands fold `fold` is checked against: deviations AND source offsets from the other
    folds only (items: keys, residual, group, unit, fold), plus `always`: items in no fold, in every
    fold's bands and never checked (band method v5: the seen external runs, external_items.py)."""
    return new_cluster_bands_by_level([(k, v, c, u) for k, v, c, u, f in items if f != fold] + list(always),
                                      min_runs)
