"""A band challenger's seen figures, the shipped method beside it (engine/assumptions/error_bands.py; --beside names
others): band methods that take judged external sets as items (band_methods.EXTERNAL_SETS_IN_BANDS: v8 on sets 1-7,
session 12's v9 and v10 on sets 1-8, session 13's v11 and v12 on sets 1-9; docs/performance.md, "Protocol for session
11/12/13" and their "seen checks" sections). NONE of these figures is a judge: the calibration runs and the method's
external sets have all been seen, and those sets are among the method's own items. From the engine and out-of-fold
file on PYTHONPATH.

    python benchmarks/band_seen.py --method v11 cross-fitted       # calibration runs, CV+: coverage and interval score
    python benchmarks/band_seen.py --method v11 in-sample          # the method's sets under it (in-sample) and beside it
    python benchmarks/band_seen.py --method v11 leave-one-set-out  # built without set k, scored on set k, k = its sets
    python benchmarks/band_seen.py --method v12 leave-one-set-out --beside v3 v10   # v3 and v10 beside v12
    python benchmarks/band_seen.py --method v8 leave-one-set-out --sets 3 4 5 6 7 --beside v3   # session 11's diagnostic

A method beside the challenger that holds external sets itself (v10: sets 1-8) is built without set k too in
leave-one-set-out, so every column scores set k against bands that never saw it; one that holds none (v3) is the
same in every row.

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

from shardwise.engine.assumptions.error_bands import THROUGHPUT_BAND_METHOD  # noqa: E402
from shardwise.engine.calibration.band_methods import DESCRIPTIONS, EXTERNAL_SETS_IN_BANDS  # noqa: E402
from shardwise.engine.calibration.band_statistics import TOTAL, interval_score  # noqa: E402
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS  # noqa: E402
from shardwise.engine.calibration.external_check import share  # noqa: E402
from shardwise.engine.calibration.external_items import external_items  # noqa: E402
from shardwise.engine.calibration.intervals import throughput_band  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.report import build_report  # noqa: E402
from shardwise.engine.calibration.runs import load_runs  # noqa: E402

SHIPPED = THROUGHPUT_BAND_METHOD  # beside the challenger unless --beside says otherwise


def _pct(lo: float, hi: float) -> str:
    return f"{np.expm1(lo):+6.1%} .. {np.expm1(hi):+6.1%}"


def _cov(c: dict) -> str:
    return f"{c['inside']}/{c['runs']} ({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%})"


def _sets(method: str) -> str:
    sets = EXTERNAL_SETS_IN_BANDS[method]
    return f"{sets[0]}-{sets[-1]}"


def items_by_set(method: str, cache: dict | None = None) -> dict[int, list]:
    """Each of the method's external sets' items (external_items.py: used runs, the engine's residuals, external
    groups); `cache` (set -> items) spares predicting a set twice for two methods."""
    cache = {} if cache is None else cache
    for n in EXTERNAL_SETS_IN_BANDS.get(method, ()):
        if n not in cache:
            cache[n] = external_items(JUDGED_EXTERNAL_SETS[n]())
    return {n: cache[n] for n in EXTERNAL_SETS_IN_BANDS.get(method, ())}


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


def _methods(method: str, beside) -> tuple[str, ...]:
    """The methods printed, those beside first, the challenger last (once)."""
    return tuple(m for m in beside if m != method) + (method,)


def cross_fitted(oof_units, method: str, sets=None, beside=(SHIPPED,)) -> None:
    methods = _methods(method, beside)
    print(f"SEEN, not a judge: cross-fitted (CV+) on the calibration runs; {method}'s external items (sets "
          f"{_sets(method)}) are in every fold's bands and never checked")
    by_method = {}
    for m in methods:
        bands, cv = throughput_bands(oof_units, m)
        score, _, by = cross_fitted_score(oof_units, m)
        n, c = sum(v[0] for v in cv.counts.values()), sum(v[1] for v in cv.counts.values())
        lo, hi = cv.ci[TOTAL]
        print(f"{m}: inside {c}/{n} ({c / n:.1%}, CI {lo:.0%}-{hi:.0%}), interval score {score:.4f}; by fold "
              + ", ".join(f"{f} {k}/{mm}" for f, (mm, k) in cv.by_fold.items()))
        by_method[m] = (bands, by)
    names = " | ".join(methods)
    print(f"by the run's own most specific regime: runs, inside {names}, interval score {names}")
    for key in by_method[methods[0]][1]:
        cells = [by_method[m][1][key] for m in methods]
        print(f"  {key:<26} {cells[0][0]:>4}  " + " | ".join(f"{c[1]:>4}" for c in cells) + "  "
              + " | ".join(f"{c[2]:.3f}" for c in cells))
    print(f"bands (all runs; a method counts the external runs of its sets too): {names} (runs)")
    for key in sorted(set().union(*(by_method[m][0] for m in methods))):
        cells = [f"{_pct(*b[key][:2])} ({b[key][2]})" if key in b else "(none)" for b in (by_method[m][0] for m in methods)]
        print(f"  {key:<26} " + " | ".join(f"{c:<30}" for c in cells).rstrip())


def _in_sample_mark(method: str, n: int) -> str:
    return " [in-sample]" if n in EXTERNAL_SETS_IN_BANDS.get(method, ()) else ""


def in_sample(oof_units, method: str, sets=None, beside=(SHIPPED,)) -> None:
    methods = _methods(method, beside)
    print(f"SEEN, not a judge: external sets {_sets(method)} are IN-SAMPLE under {method} (its items); beside it "
          + ", ".join(f"{m} (its items: sets {_sets(m)})" if m in EXTERNAL_SETS_IN_BANDS else f"{m} (no external items)"
                      for m in methods[:-1]))
    tables = {m: method_bands(oof_units, m) for m in methods}
    pooled = {m: [] for m in tables}
    for n in EXTERNAL_SETS_IN_BANDS[method]:
        parts = []
        for m, bands in tables.items():
            s = score_runs(JUDGED_EXTERNAL_SETS[n](), bands, f"set {n} | ")
            pooled[m].append(s)
            parts.append(f"{m}{_in_sample_mark(m, n)} {_cov(s['coverage'])}, interval score {s['interval_score']:.4f}")
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


def leave_one_set_out(oof_units, method: str, sets=None, beside=(SHIPPED,)) -> None:
    sets = tuple(sets or EXTERNAL_SETS_IN_BANDS[method])
    methods = _methods(method, beside)
    print(f"SEEN, not a judge: {method} built without set k (out-of-fold items + the other sets of {_sets(method)}), "
          f"scored on set k's used runs; beside it "
          + ", ".join(f"{m} built without set k too (its items: sets {_sets(m)})" if m in EXTERNAL_SETS_IN_BANDS
                      else f"{m} as it is (no external items)" for m in methods[:-1]))
    cache: dict[int, list] = {}
    by_set = {m: items_by_set(m, cache) for m in methods}
    label = {m: f"{m} without the set" if m in EXTERNAL_SETS_IN_BANDS else m for m in methods}
    fixed = {m: method_bands(oof_units, m) for m in methods if m not in EXTERNAL_SETS_IN_BANDS}
    pooled = {label[m]: [] for m in methods}
    for k in sets:
        runs = JUDGED_EXTERNAL_SETS[k]()
        parts = []
        for m in methods:
            bands = fixed[m] if m in fixed else method_without(oof_units, m, by_set[m], k)
            s = score_runs(runs, bands, f"set {k} | ")
            pooled[label[m]].append(s)
            parts.append(f"{m}{' without set ' + str(k) if m not in fixed else ''} {_cov(s['coverage'])}, "
                         f"interval score {s['interval_score']:.4f}")
        print(f"set {k}: " + "; ".join(parts))
    _pooled_line(f"sets {', '.join(map(str, sets))} pooled (each set's groups its own)", pooled)


CHECKS = {"cross-fitted": cross_fitted, "in-sample": in_sample, "leave-one-set-out": leave_one_set_out}


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("--method", required=True, choices=sorted(EXTERNAL_SETS_IN_BANDS),
                    help="a band method that takes judged external sets as items (band_methods.EXTERNAL_SETS_IN_BANDS)")
    ap.add_argument("check", choices=tuple(CHECKS))
    ap.add_argument("--sets", type=int, nargs="+",
                    help="leave-one-set-out: the sets to leave out in turn (default: every set of the method)")
    ap.add_argument("--beside", nargs="+", choices=sorted(DESCRIPTIONS), default=[SHIPPED],
                    help=f"band methods printed beside the challenger (default: the shipped one, {SHIPPED})")
    args = ap.parse_args(argv)
    if args.sets and not set(args.sets) <= set(EXTERNAL_SETS_IN_BANDS[args.method]):
        ap.error(f"--sets: {args.method} holds sets {EXTERNAL_SETS_IN_BANDS[args.method]} only")
    return args


def main(argv=None) -> None:
    args = parse(argv)
    oof_units = out_of_fold_unit_items(build_report(with_memory=False), {r.key: r for r in load_runs()})
    CHECKS[args.check](oof_units, args.method, args.sets, tuple(args.beside))


if __name__ == "__main__":
    main()
