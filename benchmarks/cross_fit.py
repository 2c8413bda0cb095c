"""Out-of-fold predictions for the cross-fitted (CV+) error bands: every used calibration run
predicted by constants fitted without its fold of groups.

    python benchmarks/cross_fit.py            # refit, print the constants and out-of-fold errors
    python benchmarks/cross_fit.py --write    # ... and regenerate engine/calibration/data/out_of_fold_predictions.csv
    python benchmarks/cross_fit.py --cold --maxfev 1500   # a full refit from fit_calibration.py's start

Rerun --write after any change to the engine or to calibrated.py, then benchmarks/fit_error_bands.py
--write (tests/engine/calibration/test_out_of_fold_current.py catches a stale file on fold 0).

Folds: engine/calibration/folds.py (crc32(group) % 3; fold 0 is the official held-out split).
Fold 0 is predicted by the shipped constants (calibrated.py, fitted on folds 1 and 2). Folds 1
and 2 are predicted by constants refitted on the other two folds with fit_calibration.py's
machinery: the same PARAMS, objective (source-weighted mean |log predicted/measured|, weights
from the training runs), Powell's method and tolerances. To keep the command a few minutes long
(one objective evaluation is ~0.4-0.6 s; a full 1,500-evaluation refit ~12 min per fold on a free
core) the default is a WARM start from calibrated.py with a reduced budget (MAXFEV, about one
Powell sweep over the 22 constants). That start has seen the left-out fold, so a constant the
budget does not move far keeps some of that fold in it: the out-of-fold errors are, if anything,
optimistic. --cold starts from fit_calibration.py's start point instead; checked once (cold,
maxfev 1500, 31 min on the shared machine): cross-fitted coverage 553/820 against the warm
start's 554/820 (docs/performance.md, "Error bars").
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_calibration as fc  # noqa: E402

from shardwise.engine.calibration.folds import FOLDS, HOLDOUT_FOLD, fold_of  # noqa: E402
from shardwise.engine.calibration.out_of_fold import FIELDS, OUT_OF_FOLD  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.runs import used_runs  # noqa: E402

MAXFEV = 400  # warm-start budget per refitted fold: about one Powell sweep of the 22 constants


def refit(train, start: dict[str, float], maxfev: int) -> tuple[dict[str, float], float, int]:
    """fit_calibration.py's fit of every PARAMS constant on `train`, from `start`."""
    objective = fc.objective_factory(train)
    res = minimize(objective, fc.to_z(start), method="Powell", options={"maxfev": maxfev, "xtol": 1e-3, "ftol": 1e-5})
    return fc.to_values(res.x), float(res.fun), int(res.nfev)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT_OF_FOLD, help="where --write writes (a check: not the shipped file)")
    ap.add_argument("--maxfev", type=int, default=MAXFEV)
    ap.add_argument("--cold", action="store_true", help="start from fit_calibration.py's start, not calibrated.py")
    args = ap.parse_args(argv)
    t0 = time.time()
    runs = used_runs()
    shipped = fc.current_values()
    start = {name: x for name, x, _, _ in fc.PARAMS} if args.cold else shipped
    how = f"{'cold' if args.cold else 'warm'} start, maxfev {args.maxfev}"
    rows, notes = [], []
    for k in range(FOLDS):
        held = [r for r in runs if fold_of(r.group) == k]
        train = [r for r in runs if fold_of(r.group) != k]
        t = time.time()
        if k == HOLDOUT_FOLD:
            values = shipped
            note = f"fold {k}: the shipped constants (calibrated.py, fitted on the other folds)"
        else:
            values, score, nfev = refit(train, start, args.maxfev)
            note = (f"fold {k}: refitted on folds {sorted({fold_of(r.group) for r in train})} ({len(train)} runs; "
                    f"{how}; {nfev} evaluations; score {score:.4f})")
        # fold 0: the engine's own assumptions (calibrated.py as shipped, e.g. its rounded Blackwell BF16 GEMM)
        preds = predict(held, None if k == HOLDOUT_FOLD else fc.assumptions(values))
        err = np.array([abs(math.log(p.tokens_per_gpu / p.run.measured_tokens_per_gpu)) for p in preds])
        print(f"{note}: {len(held)} runs out of fold, mean |log error| {err.mean():.4f}, "
              f"MAPE {np.mean([abs(p.error) for p in preds]):.1%} ({time.time() - t:.0f} s)")
        if k != HOLDOUT_FOLD:
            span = {name: hi - lo for name, _, lo, hi in fc.PARAMS}
            moved = {n: (shipped[n], v) for n, v in values.items() if abs(v - shipped[n]) > 0.01 * span[n]}
            print("   moved > 1 % of its fit range from calibrated.py: " + (", ".join(f"{n} {a:.4g}->{b:.4g}" for n, (a, b) in moved.items())
                                                        or "none"))
        notes.append(f"# {note}; constants: {json.dumps(values)}")
        rows += [(p.run.key, p.run.group, k, p.run.measured_tokens_per_gpu, p.tokens_per_gpu) for p in preds]
    elapsed = time.time() - t0
    print(f"{len(rows)} out-of-fold predictions in {elapsed:.0f} s")
    if args.write:
        write(rows, notes, how, args.out)
    return 0


def write(rows, notes, how: str, out: Path = OUT_OF_FOLD) -> None:
    order = {r.key: i for i, r in enumerate(used_runs())}
    rows = sorted(rows, key=lambda x: order[x[0]])
    with out.open("w", newline="") as f:
        f.write("# Out-of-fold predictions - GENERATED by `python benchmarks/cross_fit.py --write`, do not edit by hand.\n"
                "# Each used calibration run, predicted (tokens/s per GPU) by constants fitted without its fold of groups\n"
                f"# (engine/calibration/folds.py). Refits: fit_calibration.py's objective and method, {how}.\n")
        f.writelines(n + "\n" for n in notes)
        w = csv.writer(f, lineterminator="\n")
        w.writerow(FIELDS)
        w.writerows((key, group, k, repr(m), repr(p)) for key, group, k, m, p in rows)
    print(f"wrote {out}")


if __name__ == "__main__":
    sys.exit(main())
