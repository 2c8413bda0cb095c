"""Error and rank-agreement metrics (no SciPy at run time; tests check them against a hand
example and, where SciPy is installed, against scipy.stats)."""

from __future__ import annotations

import numpy as np


def mape(predicted, measured) -> float:
    """Mean absolute percentage error, as a fraction: mean(|p − m| / m)."""
    p, m = np.asarray(predicted, float), np.asarray(measured, float)
    return float(np.mean(np.abs(p - m) / m))


def average_ranks(values) -> np.ndarray:
    """Ranks 1..n, ties sharing the mean of the ranks they span (as Spearman's rho needs)."""
    v = np.asarray(values, float)
    order = np.argsort(v, kind="mergesort")
    ranks = np.empty(len(v))
    sorted_v = v[order]
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and sorted_v[j + 1] == sorted_v[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(a, b) -> float:
    """Spearman's rho: Pearson correlation of the average ranks."""
    ra, rb = average_ranks(a), average_ranks(b)
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = np.sqrt((ra * ra).sum() * (rb * rb).sum())
    return float((ra * rb).sum() / denom) if denom else float("nan")


def kendall_tau_b(a, b) -> float:
    """Kendall's tau-b: (concordant − discordant) / sqrt((n0 − ties_a)(n0 − ties_b)) over all pairs."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    da = np.sign(a[:, None] - a[None, :])
    db = np.sign(b[:, None] - b[None, :])
    iu = np.triu_indices(len(a), k=1)
    sa, sb = da[iu], db[iu]
    num = float((sa * sb).sum())
    denom = np.sqrt(float((sa != 0).sum()) * float((sb != 0).sum()))
    return num / denom if denom else float("nan")


def ordered_pairs_by_gap(predicted, measured, edges) -> tuple[np.ndarray, np.ndarray]:
    """For every pair of plans, bin the predicted gap (faster / slower − 1) by `edges` (k + 1
    values) and count (pairs, pairs whose predicted order is the measured order). A tie in
    either counts as not ordered as measured."""
    p, m = np.log(np.asarray(predicted, float)), np.asarray(measured, float)
    iu = np.triu_indices(len(p), k=1)
    dp = (p[:, None] - p[None, :])[iu]
    dm = (m[:, None] - m[None, :])[iu]
    bins = np.digitize(np.expm1(np.abs(dp)), edges) - 1
    k = len(edges) - 1
    inside = (bins >= 0) & (bins < k)
    pairs = np.bincount(bins[inside], minlength=k)
    agree = np.bincount(bins[inside], weights=(dp * dm > 0)[inside].astype(float), minlength=k)
    return pairs, agree
