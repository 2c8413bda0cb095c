"""The engine on the external held-out runs, with band methods v2 to v12 side by side
(engine/calibration/external_check.py computes; protocols: docs/performance.md, "Protocol for session 6" to
"Protocol for session 9"; each set's first run is stored in benchmarks/results/: external_check_first_run.json
(set 1), external_set2_first_run.json … external_set5_first_run.json).

    python benchmarks/external_check.py                  # set 1: print every figure
    python benchmarks/external_check.py --set 2          # set 2 (any judged set: external.JUDGED_EXTERNAL_SETS)
    python benchmarks/external_check.py --json OUT       # ... and write them as JSON
    python benchmarks/external_check.py --pooled 3 4 5   # each method's coverage pooled over these sets' used runs

Uncalibrated: MAPE (pooled, and each group once), the median signed error, by source and regime;
coverage of the 80 % band the product shows (intervals.throughput_band: the regime band, widened
outside the validated range) for band methods v2 (each group once), v3 (band_statistics.
conformal_levels), v4 (a band for a new cluster, new_cluster.py), v5 (v4 on the out-of-fold residuals AND
the runs of sets 1 and 2, external_items.py; shipped in sessions 8-10), v6 and v7 (the same with sets 1-3 and
1-4), v8 (v3's statistic on the out-of-fold residuals AND the runs of sets 1-7; "Protocol for session 11"), v9 and
v10 (v3's and v4's statistic on the out-of-fold residuals AND the runs of sets 1-8; "Protocol for session 12"), v11
and v12 (v4's and v3's statistic on the out-of-fold residuals AND the runs of sets 1-9; "Protocol for session 13"): a set
among a method's items is in-sample for it, not a check (band_methods.EXTERNAL_SETS_IN_BANDS). All
computed here from the same out-of-fold residuals, each with a 95 % CI from resampling groups.
Calibrated: each family of external runs at two or more GPU counts (transfer.families) calibrated
on its smallest run, predicting the rest (transfer.transfer_family): MAPE before and after, their
ratio, and the coverage of the band a profile gets.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_error_bands import calibrated_key, method_bands, out_of_fold_unit_items, seen_external_items  # noqa: E402

from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS, in_sample  # noqa: E402
from shardwise.engine.calibration.band_statistics import bands_by_level  # noqa: E402
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS  # noqa: E402
from shardwise.engine.calibration.external_check import external_check, inside_band, render, share  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.report import build_report  # noqa: E402
from shardwise.engine.calibration.runs import load_runs  # noqa: E402
from shardwise.engine.calibration.transfer import transfer_all  # noqa: E402


def method_tables(methods=None) -> dict[str, dict]:
    """throughput_band's table arguments for each band method reported (`methods`, default every one), each computed
    from the same out-of-fold residuals (not read from the shipped error_bands.py, whichever method that holds); the
    calibrated bands are the shipped (v2) ones except v3's, which applies its levels to the transfer check too (v8's
    are the shipped ones: its protocol judges the throughput bands only; so are v9's-v12's). v5's bands include the
    runs of external sets 1 and 2, v6's of sets 1-3, v7's of sets 1-4, v8's of sets 1-7, v9's and v10's of sets 1-8,
    v11's and v12's of sets 1-9 (band_methods.EXTERNAL_SETS_IN_BANDS)."""
    methods = ("v2", "v3", "v4", *EXTERNAL_SETS_IN_BANDS) if methods is None else tuple(methods)
    runs = {r.key: r for r in load_runs()}
    oof_units = out_of_fold_unit_items(build_report(with_memory=False), runs)
    tables = {m: {"bands": method_bands(oof_units, m, seen_external_items(m) if m in EXTERNAL_SETS_IN_BANDS else None)}
              for m in methods}
    if "v3" in tables:
        tables["v3"]["calibrated_bands"] = bands_by_level(
            [([calibrated_key(runs[r.key])], float(np.log(r.measured / r.calibrated)), f.family)
             for f in transfer_all() if not f.held_out for r in f.rows], finite_cluster_correction=True)
    return tables


def pooled_coverage(tables: dict[str, dict], sets: list[int]) -> dict[str, dict]:
    """Each method's runs inside its band over the used runs of several external sets, with the 95 % CI from
    resampling groups (a group is one set's: the same configuration in two sets is two clusters' runs)."""
    runs = [(n, r) for n in sets for r in JUDGED_EXTERNAL_SETS[n]() if r.used]
    preds = predict([r for _, r in runs])
    groups = [f"set {n} | {r.group}" for n, r in runs]
    out = {}
    for method, table in tables.items():
        out[method] = share([inside_band(r, p.tokens_per_gpu, table) for (_, r), p in zip(runs, preds)], groups)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path)
    ap.add_argument("--set", type=int, choices=sorted(JUDGED_EXTERNAL_SETS), default=1,
                    help="a judged external set: 1 (external_runs.csv), or N (external_runs_N.csv)")
    ap.add_argument("--pooled", type=int, nargs="+", choices=sorted(JUDGED_EXTERNAL_SETS),
                    help="instead: each method's coverage pooled over these external sets")
    args = ap.parse_args()
    if args.pooled:
        for method, c in pooled_coverage(method_tables(), args.pooled).items():
            in_bands = [n for n in args.pooled if in_sample(method, n)]
            print(f"{method}: sets {', '.join(map(str, args.pooled))} pooled: {c['inside']}/{c['runs']} "
                  f"({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%})"
                  + (f" -- set(s) {in_bands} in-sample" if in_bands else ""))
        return
    out = external_check(method_tables(), external_set=args.set)
    print("\n".join(render(out)))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
