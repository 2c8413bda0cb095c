"""Statistics of the error bands on clustered runs: cluster-weighted quantiles and cluster-bootstrap CIs.

The calibration runs come in clusters (a group = model × cluster × problem, or a transfer-check
family) whose plans share most of their error, and a few clusters hold most of the runs (the
Playbook sweep: 11 groups, 430 fitted runs). A band is meant for a new scenario — a new cluster —
so each cluster counts once: every run is weighted 1 / (runs in its cluster) (band method v2).
`conformal_levels` (band method v3, session 6) reads the ends at split-conformal levels for K
clusters instead; it over-covers on the calibration runs (docs/performance.md) and ships since
session 10 for the throughput bands (its judge, external sets 6 and 7, gave it a lower interval
score than v5). The uncertainty of a coverage figure is that of the few clusters behind
it, estimated by resampling clusters.
Used by benchmarks/fit_error_bands.py and the freshness test of error_bands.py; pure functions, no I/O.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np

from ..assumptions.compute import gpu_generation
from .regimes import regime_keys, stack_of
from .runs import CalibrationRun

BOOTSTRAP_REPLICATES = 2000
BOOTSTRAP_SEED = 0  # fixed, so the generated error_bands.py is reproducible
CI_LEVEL = 0.95
TOTAL = "all held-out runs"  # the key of the pooled figure in the generated *_COVERAGE_CI tables
LOWER_Q, UPPER_Q = 0.10, 0.90  # an 80 % band
MIN_RUNS = 15  # a regime needs this many fitted-group runs before it gets its own band
MIN_MEMORY_RUNS = 8  # fewer runs report peak memory (torchtitan: 20, of which 12 in fitted groups)

# An item is (regime keys most specific first, log residual, cluster: the group or family it belongs to).
Item = tuple[list[str], float, str]


def cluster_weights(clusters: Sequence[str]) -> np.ndarray:
    """1 / (runs in the run's cluster): each cluster's runs sum to one."""
    size = Counter(clusters)
    return np.array([1.0 / size[c] for c in clusters])


def weighted_quantile(values: Sequence[float], weights: Sequence[float], q: float) -> float:
    """Midpoint (Hazen) weighted quantile: each value stands at the middle of its share of the total
    weight, and q is interpolated linearly between them (the ends are clamped to the extremes).
    With equal weights this is the textbook (i - 0.5) / n plotting position."""
    v, w = np.asarray(values, float), np.asarray(weights, float)
    if len(v) == 0 or np.any(w <= 0):
        raise ValueError("weighted_quantile needs values with positive weights")
    order = np.argsort(v, kind="stable")
    v, w = v[order], w[order] / w.sum()
    position = np.cumsum(w) - w / 2
    return float(np.interp(q, position, v))


def conformal_levels(lower_q: float, upper_q: float, clusters: int) -> tuple[float, float]:
    """The quantile levels that give a new cluster lower_q..upper_q coverage when K = `clusters`
    exchangeable clusters are behind the band (band method v3, session 6; docs/performance.md).

    Split conformal prediction (Vovk et al. 2005; Lei et al. 2018, JASA) with clusters as the units:
    the next cluster's residual is as likely to rank anywhere among the K + 1, which puts a mass
    1 / (K + 1) beyond each end of the K clusters' pooled distribution (each cluster's runs sharing
    its weight: the "CDF pooling" of Dunn, Wasserman & Ramdas 2023, JASA, whose guarantee is
    asymptotic; groups of plans are not exactly exchangeable, so none holds exactly here). Solving
    K / (K + 1) · F(hi) = upper_q and 1 / (K + 1) + K / (K + 1) · F(lo) = lower_q gives the levels
    below; past 0 or 1 the band reaches the extreme residual. Chosen after seeing v2 under-cover
    (72.0 % cross-fitted); computed, it over-covers (91.8 %): the one-score-per-unit correction
    applied to pooled runs reaches into the within-group tails (nanotron: 13 groups of ~36 runs,
    −32 … +15 %). Shipped for the throughput bands since session 10 (docs/performance.md).
    """
    inflate = (clusters + 1) / clusters
    return max(0.0, 1.0 - (1.0 - lower_q) * inflate), min(1.0, upper_q * inflate)


def cluster_band(values: Sequence[float], clusters: Sequence[str], lower_q: float, upper_q: float,
                 finite_cluster_correction: bool = False) -> tuple[float, float, int]:
    """(lower, upper quantile of values with each cluster counting once, runs): band method v2.
    With `finite_cluster_correction` the levels are `conformal_levels` (v3: the throughput bands since session 10)."""
    w = cluster_weights(clusters)
    if finite_cluster_correction:
        lower_q, upper_q = conformal_levels(lower_q, upper_q, len(set(clusters)))
    return weighted_quantile(values, w, lower_q), weighted_quantile(values, w, upper_q), len(values)


def interval_score(values: Sequence[float], lows: Sequence[float], highs: Sequence[float],
                   clusters: Sequence[str], alpha: float = LOWER_Q + 1 - UPPER_Q) -> float:
    """Mean interval score of central (1 - alpha) bands, each cluster counting once (Gneiting &
    Raftery 2007, JASA 102, eq. 43): width + (2/alpha) × how far a value falls outside. A proper
    scoring rule: lower is better, and a band cannot gain by being set narrower or wider than the
    quantiles it claims."""
    y, lo, hi = (np.asarray(x, float) for x in (values, lows, highs))
    score = (hi - lo) + (2 / alpha) * np.clip(lo - y, 0, None) + (2 / alpha) * np.clip(y - hi, 0, None)
    return float(np.average(score, weights=cluster_weights(clusters)))


def cluster_bootstrap_ci(inside: Sequence[bool], clusters: Sequence[str],
                         replicates: int = BOOTSTRAP_REPLICATES, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile CI of the share of runs inside their band, resampling clusters with replacement
    (each replicate draws as many clusters as there are, keeping all runs of each drawn)."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for ok, c in zip(inside, clusters):
        per[c][0] += 1
        per[c][1] += int(ok)
    runs, hits = (np.array(x, float) for x in zip(*per.values()))
    draws = np.random.default_rng(seed).integers(0, len(runs), size=(replicates, len(runs)))
    share = hits[draws].sum(axis=1) / runs[draws].sum(axis=1)
    alpha = (1 - CI_LEVEL) / 2
    return float(np.quantile(share, alpha)), float(np.quantile(share, 1 - alpha))


def bands_by_level(items: list[Item], min_runs: int = MIN_RUNS, finite_cluster_correction: bool = False
                   ) -> dict[str, tuple[float, float, int]]:
    """Every regime key with >= min_runs runs gets a band, each cluster counting once."""
    pooled: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for keys, value, cluster in items:
        for k in keys:
            pooled[k].append((value, cluster))
    return {k: cluster_band([v for v, _ in p], [c for _, c in p], LOWER_Q, UPPER_Q, finite_cluster_correction)
            for k, p in sorted(pooled.items()) if len(p) >= min_runs}


def regime_of(run: CalibrationRun) -> list[str]:
    """The run's regime keys, most specific first (regimes.py)."""
    return regime_keys(stack_of(run.host_framework), gpu_generation(run.cluster.gpu), run.model.moe is not None)
