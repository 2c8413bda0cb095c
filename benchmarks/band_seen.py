"""A band challenger's seen figures, v3 (shipped) beside it: band methods that take judged external sets as items
(band_methods.EXTERNAL_SETS_IN_BANDS: v8 on sets 1-7, session 12's v9 and v10 on sets 1-8; docs/performance.md,
"Protocol for session 11/12" and their "seen checks" sections). NONE of these figures is a judge: the calibration runs
and the method's external sets have all been seen, and those sets are among the method's own items. From the engine
and out-of-fold file on PYTHONPATH.

    python benchmarks/band_seen.py --method v9 cross-fitted       # calibration runs, CV+: coverage and interval score
    python benchmarks/band_seen.py --method v9 in-sample          # the method's sets under it (in-sample) and v3
    python benchmarks/band_seen.py --method v9 leave-one-set-out  # built without set k, scored on set k, k = its sets
    python benchmarks/band_seen.py --method v8 leave-one-set-out --sets 3 4 5 6 7   # session 11's v8 diagnostic

Interval score: Gneiting & Raftery 2007, eq. 43, log(measured / predicted), each group once
(band_statistics.interval_score); external runs against the band the product shows (intervals.throughput_band,
widening outside the validated range included), as the protocols' judges read it.
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

SHIPPED = "v3"


def _pct(lo: float, hi: float) -> str:
    return f"{np.expm1(lo):+6.1%} .. {np.expm1(hi):+6.1%}"


def _cov(c: dict) -> str:
    return f"{c['inside']}/{c['runs']} ({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%})"


def _sets(method: str) -> str:
    sets = EXTERNAL_SETS_IN_BANDS[method]
    return f"{sets[0]}-{sets[-1]}"


def items_by_set(method: str) -> dict[int, list]:
    """Each of the method's external sets' items (external_items.py: used runs, the engine's residuals, external groups)."""
    return {n: external_items(JUDGED_EXTERNAL_SETS[n]()) for n in EXTERNAL_SETS_IN_BANDS[method]}


def method_without(oof_units, method: str, by_set: dict, left_out) -> dict:
    """The method's bands with one external set's items left out (the other sets' and every out-of-fold item kept)."""
    return method_bands(oof_units, method, [x for n, xs in by_set.items() if n != left_out for x in xs])


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


def cross_fitted(oof_units, method: str, sets=None) -> None:
    print(f"SEEN, not a judge: cross-fitted (CV+) on the calibration runs; {method}'s external items (sets "
          f"{_sets(method)}) are in every fold's bands and never checked")
    by_method = {}
    for m in (SHIPPED, method):
        bands, cv = throughput_bands(oof_units, m)
        score, _, by = cross_fitted_score(oof_units, m)
        n, c = sum(v[0] for v in cv.counts.values()), sum(v[1] for v in cv.counts.values())
        lo, hi = cv.ci[TOTAL]
        print(f"{m}: inside {c}/{n} ({c / n:.1%}, CI {lo:.0%}-{hi:.0%}), interval score {score:.4f}; by fold "
              + ", ".join(f"{f} {k}/{mm}" for f, (mm, k) in cv.by_fold.items()))
        by_method[m] = (bands, by)
    print(f"by the run's own most specific regime: runs, inside {SHIPPED} | {method}, interval score {SHIPPED} | {method}")
    (b_a, by_a), (b_b, by_b) = by_method[SHIPPED], by_method[method]
    for key in by_a:
        (n, i_a, s_a), (_, i_b, s_b) = by_a[key], by_b[key]
        print(f"  {key:<26} {n:>4}  {i_a:>4} | {i_b:<4} {s_a:.3f} | {s_b:.3f}")
    print(f"bands (all runs; {method} counts the external runs of sets {_sets(method)} too): {SHIPPED} | {method} (runs)")
    for key in sorted(set(b_a) | set(b_b)):
        left = f"{_pct(*b_a[key][:2])} ({b_a[key][2]})" if key in b_a else "(none)"
        right = f"{_pct(*b_b[key][:2])} ({b_b[key][2]})" if key in b_b else "(none)"
        print(f"  {key:<26} {left:<30} | {right}")


def in_sample(oof_units, method: str, sets=None) -> None:
    print(f"SEEN, not a judge: external sets {_sets(method)} are IN-SAMPLE under {method} (its items); seen (not in its "
          f"items) under {SHIPPED}")
    tables = {m: method_bands(oof_units, m) for m in (SHIPPED, method)}
    pooled = {m: [] for m in tables}
    for n in EXTERNAL_SETS_IN_BANDS[method]:
        parts = []
        for m, bands in tables.items():
            s = score_runs(JUDGED_EXTERNAL_SETS[n](), bands, f"set {n} | ")
            pooled[m].append(s)
            parts.append(f"{m} {_cov(s['coverage'])}, interval score {s['interval_score']:.4f}")
        print(f"set {n}: " + "; ".join(parts))
    _pooled_line(f"sets {_sets(method)} pooled (each set's groups its own)", pooled)


def _pooled_line(title: str, pooled: dict) -> None:
    parts = []
    for m, scores in pooled.items():
        cat = {k: [x for s in scores for x in s[k]] for k in ("ys", "lows", "highs", "groups")}
        inside = [lo <= y <= hi for y, lo, hi in zip(cat["ys"], cat["lows"], cat["highs"])]
        parts.append(f"{m} {_cov(share(inside, cat['groups']))}, interval score "
                     f"{interval_score(cat['ys'], cat['lows'], cat['highs'], cat['groups']):.4f}")
    print(f"{title}: " + "; ".join(parts))


def leave_one_set_out(oof_units, method: str, sets=None) -> None:
    sets = tuple(sets or EXTERNAL_SETS_IN_BANDS[method])
    print(f"SEEN, not a judge: {method} built without set k (out-of-fold items + the other sets of {_sets(method)}), "
          f"scored on set k's used runs; {SHIPPED} beside it ({SHIPPED} never holds an external set)")
    by_set = items_by_set(method)
    shipped = method_bands(oof_units, SHIPPED)
    without = f"{method} without the set"
    pooled = {SHIPPED: [], without: []}
    for k in sets:
        runs = JUDGED_EXTERNAL_SETS[k]()
        s_a = score_runs(runs, shipped, f"set {k} | ")
        s_b = score_runs(runs, method_without(oof_units, method, by_set, k), f"set {k} | ")
        pooled[SHIPPED].append(s_a), pooled[without].append(s_b)
        print(f"set {k}: {SHIPPED} {_cov(s_a['coverage'])}, interval score {s_a['interval_score']:.4f}; "
              f"{method} without set {k} {_cov(s_b['coverage'])}, interval score {s_b['interval_score']:.4f}")
    _pooled_line(f"sets {', '.join(map(str, sets))} pooled (each set's groups its own)", pooled)


CHECKS = {"cross-fitted": cross_fitted, "in-sample": in_sample, "leave-one-set-out": leave_one_set_out}


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", required=True, choices=sorted(EXTERNAL_SETS_IN_BANDS),
                    help="a band method that takes judged external sets as items (band_methods.EXTERNAL_SETS_IN_BANDS)")
    ap.add_argument("check", choices=tuple(CHECKS))
    ap.add_argument("--sets", type=int, nargs="+",
                    help="leave-one-set-out: the sets to leave out in turn (default: every set of the method)")
    args = ap.parse_args(argv)
    if args.sets and not set(args.sets) <= set(EXTERNAL_SETS_IN_BANDS[args.method]):
        ap.error(f"--sets: {args.method} holds sets {EXTERNAL_SETS_IN_BANDS[args.method]} only")
    return args


def main(argv=None) -> None:
    args = parse(argv)
    oof_units = out_of_fold_unit_items(build_report(with_memory=False), {r.key: r for r in load_runs()})
    CHECKS[args.check](oof_units, args.method, args.sets)


if __name__ == "__main__":
    main()
