"""Which band method ships: the mean interval score of v2 and v3 over the two checks
(decision rule in docs/performance.md, written before this was computed).

    python benchmarks/band_method_choice.py

Check 1, cross-fitted on the shipped runs: each fold's out-of-fold residuals against the bands of
the other folds (engine/calibration/cross_fit.py), as the coverage figure counts them. Check 2, the
external held-out runs, uncalibrated: the band the product shows (intervals.throughput_band,
widening included). Both in log(measured / predicted), each group once
(band_statistics.interval_score); the two checks weigh equally.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from external_check import v3_tables  # noqa: E402
from fit_error_bands import out_of_fold_items  # noqa: E402

from shardwise.engine.calibration.band_statistics import interval_score  # noqa: E402
from shardwise.engine.calibration.cross_fit import cross_fitted_coverage, lookup  # noqa: E402
from shardwise.engine.calibration.external import load_external_runs  # noqa: E402
from shardwise.engine.calibration.intervals import throughput_band  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.report import build_report  # noqa: E402
from shardwise.engine.calibration.runs import load_runs  # noqa: E402


def cross_fitted_score(oof, v3: bool) -> tuple[float, float]:
    """(mean interval score, coverage) of every run against its fold's bands."""
    cv = cross_fitted_coverage(oof, v3=v3)
    ys, lows, highs, groups = [], [], [], []
    for keys, value, group, fold in oof:
        _, (lo, hi, _) = lookup(cv.bands_by_fold[fold], keys)
        ys.append(value), lows.append(lo), highs.append(hi), groups.append(group)
    inside = np.mean([lo <= y <= hi for y, lo, hi in zip(ys, lows, highs)])
    return interval_score(ys, lows, highs, groups), float(inside)


def external_score(tables: dict) -> tuple[float, float]:
    runs = [r for r in load_external_runs() if r.used]
    ys, lows, highs = [], [], []
    for r, p in zip(runs, predict(runs)):
        band = throughput_band(r.model, r.cluster, r.setup, **tables)
        ys.append(float(np.log(r.measured_tokens_per_gpu / p.tokens_per_gpu))), lows.append(band.low)
        highs.append(band.high)
    inside = np.mean([lo <= y <= hi for y, lo, hi in zip(ys, lows, highs)])
    return interval_score(ys, lows, highs, [r.group for r in runs]), float(inside)


def main() -> None:
    report = build_report(with_memory=False)
    oof = out_of_fold_items(report, {r.key: r for r in load_runs()})
    tp3, cal3 = v3_tables()
    total = {}
    for method, v3, tables in (("v2", False, {}), ("v3", True, {"bands": tp3, "calibrated_bands": cal3})):
        cf, cf_cov = cross_fitted_score(oof, v3)
        ex, ex_cov = external_score(tables)
        total[method] = (cf + ex) / 2
        print(f"{method}: interval score cross-fitted {cf:.4f} (coverage {cf_cov:.1%}), external {ex:.4f} "
              f"(coverage {ex_cov:.1%}); mean {total[method]:.4f}")
    print(f"lower mean interval score: {min(total, key=total.get)}")


if __name__ == "__main__":
    main()
