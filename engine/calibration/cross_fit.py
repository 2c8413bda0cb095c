"""Coverage of the 80 % bands, counted on runs no band and no constant has seen: cross-fitted (CV+).

Barber, Candès, Ramdas & Tibshirani (2021), "Predictive inference with the jackknife+", Ann.
Statist. 49(1); CV+ is their K-fold variant. Here K = 3 folds of groups (folds.py) and the
residuals are out-of-fold (out_of_fold.py: each run predicted by constants fitted without its
fold). For each fold k, the bands are taken on the OTHER folds' residuals and applied to fold k's;
pooled over the folds, every run is held out exactly once. The shipped bands
(engine/assumptions/error_bands.py) use the residuals of every fold.
Pure functions, no I/O; benchmarks/fit_error_bands.py feeds them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .band_statistics import MIN_RUNS, TOTAL, Item, bands_by_level, cluster_bootstrap_ci

# (regime keys most specific first, log residual, cluster, fold)
FoldItem = tuple[list[str], float, str, int]
Bands = dict[str, tuple[float, float, int]]


def lookup(bands: Bands, keys: list[str]) -> tuple[str, tuple[float, float, int]]:
    """The most specific regime of `keys` that has a band."""
    for k in keys:
        if k in bands:
            return k, bands[k]
    raise KeyError(keys)


def inside_by_regime(bands: Bands, items: list[Item]) -> dict[str, list[tuple[bool, str]]]:
    """Per regime band used: (run inside it, cluster) for each item."""
    hits: dict[str, list[tuple[bool, str]]] = defaultdict(list)
    for keys, value, cluster in items:
        k, (lo, hi, _) = lookup(bands, keys)
        hits[k].append((lo <= value <= hi, cluster))
    return hits


def summarise(hits: dict[str, list[tuple[bool, str]]]) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[float, float]]]:
    """Per regime (runs, runs inside), and the cluster-bootstrap 95 % CI of each share plus the
    pooled one under TOTAL."""
    counts = {k: (len(h), sum(ok for ok, _ in h)) for k, h in sorted(hits.items())}
    ci = {k: cluster_bootstrap_ci([ok for ok, _ in h], [c for _, c in h]) for k, h in sorted(hits.items())}
    every = [x for h in hits.values() for x in h]
    if every:
        ci[TOTAL] = cluster_bootstrap_ci([ok for ok, _ in every], [c for _, c in every])
    return counts, ci


def coverage(bands: Bands, items: list[Item]) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[float, float]]]:
    """Held-out items against fixed bands: per regime used, (runs, inside) and the CIs."""
    return summarise(inside_by_regime(bands, items))


@dataclass(frozen=True)
class CrossFitCoverage:
    counts: dict[str, tuple[int, int]]  # per regime band used: (runs, inside), pooled over the folds
    ci: dict[str, tuple[float, float]]  # cluster-bootstrap 95 % CI per regime and pooled (TOTAL)
    by_fold: dict[int, tuple[int, int]]  # fold -> (runs, inside)
    bands_by_fold: dict[int, Bands]  # fold -> the bands its runs were checked against (other folds only)


def fold_bands(items: list[FoldItem], fold: int, min_runs: int = MIN_RUNS, v3: bool = False) -> Bands:
    """The bands fold `fold` is checked against: taken on the other folds' residuals only
    (v3: band_statistics.conformal_levels, reported only)."""
    return bands_by_level([(keys, v, c) for keys, v, c, f in items if f != fold], min_runs, v3)


def cross_fitted_coverage(items: list[FoldItem], min_runs: int = MIN_RUNS, v3: bool = False,
                          bands_for_fold: Callable[[int], Bands] | None = None) -> CrossFitCoverage:
    """CV+ coverage: each fold's runs against the bands of the other folds, pooled over the folds.
    `bands_for_fold(fold)` replaces fold_bands (another band method, e.g. new_cluster.py's v4; it
    must use the other folds' runs only)."""
    hits: dict[str, list[tuple[bool, str]]] = defaultdict(list)
    by_fold, bands_by_fold = {}, {}
    for fold in sorted({f for *_, f in items}):
        bands = bands_by_fold[fold] = (bands_for_fold(fold) if bands_for_fold is not None
                                       else fold_bands(items, fold, min_runs, v3))
        fold_hits = inside_by_regime(bands, [(keys, v, c) for keys, v, c, f in items if f == fold])
        for k, h in fold_hits.items():
            hits[k] += h
        every = [ok for h in fold_hits.values() for ok, _ in h]
        by_fold[fold] = (len(every), int(np.sum(every)))
    counts, ci = summarise(hits)
    return CrossFitCoverage(counts, ci, by_fold, bands_by_fold)
