"""Band challenger v8's seen figures (docs/performance.md, "Protocol for session 11" and "Session 11: band challenger
v8 (seen checks)"). NONE of them is a judge: the calibration runs and external sets 1-7 have all been seen, and sets
1-7 are among v8's own items. Every figure is v3 (shipped) beside v8, from the engine and out-of-fold file on
PYTHONPATH.

    python benchmarks/band_v8_seen.py cross-fitted       # calibration runs, CV+: coverage and interval score
    python benchmarks/band_v8_seen.py in-sample          # sets 1-7 under v8 (in-sample) and v3
    python benchmarks/band_v8_seen.py leave-one-set-out  # v8 built without set k, scored on set k, k = 3..7

Interval score: Gneiting & Raftery 2007, eq. 43, log(measured / predicted), each group once
(band_statistics.interval_score); external runs against the band the product shows (intervals.throughput_band,
widening outside the validated range included), as the protocol's judge reads it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from band_method_choice import cross_fitted_score  # noqa: E402
from fit_error_bands import method_bands, out_of_fold_unit_items, throughput_bands  # noqa: E402

from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS  # noqa: E402
from shardwise.engine.calibration.band_statistics import TOTAL, interval_score  # noqa: E402
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS  # noqa: E402
from shardwise.engine.calibration.external_check import share  # noqa: E402
from shardwise.engine.calibration.external_items import external_items  # noqa: E402
from shardwise.engine.calibration.intervals import throughput_band  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.report import build_report  # noqa: E402
from shardwise.engine.calibration.runs import load_runs  # noqa: E402

V8_SETS = EXTERNAL_SETS_IN_BANDS["v8"]
LEAVE_OUT_SETS = (3, 4, 5, 6, 7)  # the brief's diagnostic: sets 1-2 hold most of the external runs, kept in always


def _pct(lo: float, hi: float) -> str:
    return f"{np.expm1(lo):+6.1%} .. {np.expm1(hi):+6.1%}"


def _cov(c: dict) -> str:
    return f"{c['inside']}/{c['runs']} ({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%})"


def items_by_set() -> dict[int, list]:
    """Each of v8's external sets' items (external_items.py: used runs, the engine's residuals, external groups)."""
    return {n: external_items(JUDGED_EXTERNAL_SETS[n]()) for n in V8_SETS}


def v8_without(oof_units, by_set: dict[int, list], left_out: int) -> dict:
    """v8's bands with one external set's items left out (the other sets' and every out-of-fold item kept)."""
    return method_bands(oof_units, "v8", [x for n, xs in by_set.items() if n != left_out for x in xs])


def score_runs(runs, bands: dict, group_prefix: str = "") -> dict:
    """Coverage and mean interval score of used runs against the band the product shows with these bands."""
    used = [r for r in runs if r.used]
    ys, lows, highs, inside, groups = [], [], [], [], []
    for r, p in zip(used, predict(used)):
        b = throughput_band(r.model, r.cluster, r.setup, bands=bands)
        y = float(np.log(r.measured_tokens_per_gpu / p.tokens_per_gpu))
        ys.append(y), lows.append(b.low), highs.append(b.high), inside.append(b.low <= y <= b.high)
        groups.append(group_prefix + r.group)
    return {"coverage": share(inside, groups), "interval_score": interval_score(ys, lows, highs, groups),
            "ys": ys, "lows": lows, "highs": highs, "groups": groups}


def cross_fitted(oof_units) -> None:
    print("SEEN, not a judge: cross-fitted (CV+) on the calibration runs; v8's external items are in every fold's "
          "bands and never checked")
    by_method = {}
    for method in ("v3", "v8"):
        bands, cv = throughput_bands(oof_units, method)
        score, _, by = cross_fitted_score(oof_units, method)
        n, c = sum(v[0] for v in cv.counts.values()), sum(v[1] for v in cv.counts.values())
        lo, hi = cv.ci[TOTAL]
        print(f"{method}: inside {c}/{n} ({c / n:.1%}, CI {lo:.0%}-{hi:.0%}), interval score {score:.4f}; by fold "
              + ", ".join(f"{f} {k}/{m}" for f, (m, k) in cv.by_fold.items()))
        by_method[method] = (bands, by)
    print("by the run's own most specific regime: runs, inside v3 | v8, interval score v3 | v8")
    (b3, by3), (b8, by8) = by_method["v3"], by_method["v8"]
    for key in by3:
        (n, i3, s3), (_, i8, s8) = by3[key], by8[key]
        print(f"  {key:<26} {n:>4}  {i3:>4} | {i8:<4} {s3:.3f} | {s8:.3f}")
    print("bands (all runs; v8 counts the external runs of sets 1-7 too): v3 | v8 (runs)")
    for key in sorted(set(b3) | set(b8)):
        left = f"{_pct(*b3[key][:2])} ({b3[key][2]})" if key in b3 else "(none)"
        right = f"{_pct(*b8[key][:2])} ({b8[key][2]})" if key in b8 else "(none)"
        print(f"  {key:<26} {left:<30} | {right}")


def in_sample(oof_units) -> None:
    print("SEEN, not a judge: external sets 1-7 are IN-SAMPLE under v8 (its items); seen (not in its items) under v3")
    tables = {m: method_bands(oof_units, m) for m in ("v3", "v8")}
    pooled = {m: [] for m in tables}
    for n in V8_SETS:
        parts = []
        for m, bands in tables.items():
            s = score_runs(JUDGED_EXTERNAL_SETS[n](), bands, f"set {n} | ")
            pooled[m].append(s)
            parts.append(f"{m} {_cov(s['coverage'])}, interval score {s['interval_score']:.4f}")
        print(f"set {n}: " + "; ".join(parts))
    _pooled_line("sets 1-7 pooled (each set's groups its own)", pooled)


def _pooled_line(title: str, pooled: dict) -> None:
    parts = []
    for m, scores in pooled.items():
        cat = {k: [x for s in scores for x in s[k]] for k in ("ys", "lows", "highs", "groups")}
        inside = [lo <= y <= hi for y, lo, hi in zip(cat["ys"], cat["lows"], cat["highs"])]
        parts.append(f"{m} {_cov(share(inside, cat['groups']))}, interval score "
                     f"{interval_score(cat['ys'], cat['lows'], cat['highs'], cat['groups']):.4f}")
    print(f"{title}: " + "; ".join(parts))


def leave_one_set_out(oof_units) -> None:
    print("SEEN, not a judge: v8 built without set k (out-of-fold items + the other sets of 1-7), scored on set k's "
          "used runs; v3 beside it (v3 never holds an external set)")
    by_set = items_by_set()
    v3 = method_bands(oof_units, "v3")
    pooled = {"v3": [], "v8 without the set": []}
    for k in LEAVE_OUT_SETS:
        runs = JUDGED_EXTERNAL_SETS[k]()
        s3 = score_runs(runs, v3, f"set {k} | ")
        s8 = score_runs(runs, v8_without(oof_units, by_set, k), f"set {k} | ")
        pooled["v3"].append(s3), pooled["v8 without the set"].append(s8)
        print(f"set {k}: v3 {_cov(s3['coverage'])}, interval score {s3['interval_score']:.4f}; "
              f"v8 without set {k} {_cov(s8['coverage'])}, interval score {s8['interval_score']:.4f}")
    _pooled_line("sets 3-7 pooled (each set's groups its own)", pooled)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("check", choices=("cross-fitted", "in-sample", "leave-one-set-out"))
    args = ap.parse_args()
    oof_units = out_of_fold_unit_items(build_report(with_memory=False), {r.key: r for r in load_runs()})
    checks = {"cross-fitted": cross_fitted, "in-sample": in_sample, "leave-one-set-out": leave_one_set_out}
    checks[args.check](oof_units)


if __name__ == "__main__":
    main()
