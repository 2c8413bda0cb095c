"""Which band method ships: mean interval scores of the band methods on each check (decision rules in
docs/performance.md, each written before it was computed).

    python benchmarks/band_method_choice.py

Checks: cross-fitted on the shipped runs (each fold's out-of-fold residuals against the bands of the
other folds, engine/calibration/cross_fit.py, as the coverage figure counts them); external sets 1, 2 and 3, uncalibrated, against the band the product shows (intervals.throughput_band,
widening included). All in log(measured / predicted), each group once (band_statistics.interval_score).
Session 6's rule: v2 vs v3, mean of cross-fitted and set 1 (v2 shipped). Session 7's rule: v2 vs v4 on
external set 2 alone (its first run). Session 8's rule: v4 vs v5 on external set 3's first run (v5 shipped); its second rule: v5 vs v6 (v5 with set 3
as items) on external set 4's first run. Session 9's rule: v5 vs v7 (v5 with sets 3 and 4 as items) on
external set 5's first run. v5's bands are estimated on the
runs of sets 1 and 2 (external_items.py), so its figures there are in-sample and marked so; v8 (session 11's
challenger: v3's statistic on the out-of-fold residuals and sets 1-7) is printed beside the others, in-sample on
every set here. Session 11's rule is read by benchmarks/engine_choice.py (v3 vs v8 on the set it judges).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from external_check import method_tables  # noqa: E402
from fit_error_bands import out_of_fold_unit_items, throughput_bands  # noqa: E402

from shardwise.engine.calibration import external  # noqa: E402
from shardwise.engine.calibration.band_methods import in_sample  # noqa: E402
from shardwise.engine.calibration.band_statistics import interval_score  # noqa: E402
from shardwise.engine.calibration.cross_fit import lookup  # noqa: E402
from shardwise.engine.calibration.intervals import throughput_band  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.report import build_report  # noqa: E402
from shardwise.engine.calibration.runs import load_runs  # noqa: E402


def cross_fitted_score(oof_units, method: str) -> tuple[float, float, dict[str, tuple[int, int, float]]]:
    """(mean interval score, coverage) of every run against its fold's bands, and per run's own regime
    (its most specific key, the same rows for every method): (runs, inside, mean interval score)."""
    _, cv = throughput_bands(oof_units, method)
    ys, lows, highs, groups, used = [], [], [], [], []
    for keys, value, group, _, fold in oof_units:
        _, (lo, hi, _) = lookup(cv.bands_by_fold[fold], keys)
        ys.append(value), lows.append(lo), highs.append(hi), groups.append(group), used.append(keys[0])
    hit = [lo <= y <= hi for y, lo, hi in zip(ys, lows, highs)]
    by: dict[str, tuple[int, int, float]] = {}
    for key in sorted(set(used)):
        ix = [i for i, k in enumerate(used) if k == key]
        by[key] = (len(ix), sum(hit[i] for i in ix),
                   interval_score(*([x[i] for i in ix] for x in (ys, lows, highs, groups))))
    return interval_score(ys, lows, highs, groups), float(np.mean(hit)), by


def external_score(runs, tables: dict) -> tuple[float, float]:
    ys, lows, highs = [], [], []
    for r, p in zip(runs, predict(runs)):
        band = throughput_band(r.model, r.cluster, r.setup, **tables)
        ys.append(float(np.log(r.measured_tokens_per_gpu / p.tokens_per_gpu))), lows.append(band.low)
        highs.append(band.high)
    inside = np.mean([lo <= y <= hi for y, lo, hi in zip(ys, lows, highs)])
    return interval_score(ys, lows, highs, [r.group for r in runs]), float(inside)


# The rules that pit a challenger against the shipped method on one external set's first run (docs/performance.md:
# "Protocol for session 8" v4 vs v5 on set 3, judged 21:31 UTC, v5 shipped 2.1776 vs 1.8953, stored in
# benchmarks/results/band_method_choice_session8.txt; its "second judge" v5 vs v6 on set 4; "Protocol for session 9"
# v5 vs v7 on set 5): the challenger ships iff its mean interval score there is lower. (title, shipped, challenger, set)
CHALLENGER_RULES = (("session 8 rule", "v4", "v5", 3), ("session 8 second rule", "v5", "v6", 4),
                    ("session 9 rule", "v5", "v7", 5))


def challenger_rule(title: str, shipped: str, challenger: str, external_set: int, scores: dict) -> str:
    """Which method a rule ships, from the methods' interval scores on its external set (absent: not judged yet)."""
    head = f"{title} ({shipped} vs {challenger}, external set {external_set}'s first run)"
    a, b = scores[shipped].get(f"set {external_set}"), scores[challenger].get(f"set {external_set}")
    if a is None or b is None:
        return f"{head}: not judged yet (set {external_set} has not had its first run)"
    return f"{head}: {challenger if b < a else shipped} ({a:.4f} vs {b:.4f})"


def main() -> None:
    report = build_report(with_memory=False)
    oof_units = out_of_fold_unit_items(report, {r.key: r for r in load_runs()})
    sets = {n: [r for r in load() if r.used] for n, load in external.JUDGED_EXTERNAL_SETS.items()}
    scores: dict[str, dict[str, float]] = {}
    for method, tables in method_tables().items():
        cf, cf_cov, cf_by = cross_fitted_score(oof_units, method)
        scores[method] = {"cross-fitted": cf}
        parts = [f"cross-fitted {cf:.4f} (coverage {cf_cov:.1%})"]
        for n, runs in sets.items():
            s, cov = external_score(runs, tables)
            scores[method][f"set {n}"] = s
            parts.append(f"set {n} {s:.4f} (coverage {cov:.1%}" + (", in-sample)" if in_sample(method, n) else ")"))
        print(f"{method}: interval score " + ", ".join(parts))
        print("  cross-fitted by the run's regime: " + ", ".join(
            f"{k} {inside}/{n} ({inside / n:.0%}) {score:.3f}" for k, (n, inside, score) in cf_by.items()))
    v23 = {m: (scores[m]["cross-fitted"] + scores[m]["set 1"]) / 2 for m in ("v2", "v3")}
    print(f"session 6 rule (v2 vs v3, mean of cross-fitted and set 1): {min(v23, key=v23.get)} "
          f"({v23['v2']:.4f} vs {v23['v3']:.4f})")
    v24 = {m: scores[m]["set 2"] for m in ("v2", "v4")}
    print(f"session 7 rule (v2 vs v4, external set 2): {min(v24, key=v24.get)} ({v24['v2']:.4f} vs {v24['v4']:.4f})")
    for title, shipped, challenger, external_set in CHALLENGER_RULES:
        print(challenger_rule(title, shipped, challenger, external_set, scores))


if __name__ == "__main__":
    main()
