"""Leave-family-out transfer check: refit the engine's constants without each family, then
calibrate on the family's smallest run and predict its other runs.

    python benchmarks/leave_family_out.py            # refit, print per family and pooled
    python benchmarks/leave_family_out.py --write    # ... and regenerate engine/calibration/data/leave_family_out.csv
    python benchmarks/leave_family_out.py --only "llm-foundry | MPT-13b"   # families whose key starts so (timing)

Offline dev tool (needs scipy). Deterministic: warm start from engine/assumptions/calibrated.py,
Powell's method, fixed evaluation budget, the same objective as benchmarks/fit_calibration.py
(source-weighted mean |log predicted/measured| over the runs whose group is not held out), with
the family's runs removed from it.

A RESTRICTED refit: a full 21-constant Powell refit costs ~0.35 s per evaluation × ~1,500
evaluations ≈ 9 min per family on one core (28 families: > 4 h). Only the constants the family's
predictions depend on can carry its bias, so those are refitted: each constant is raised 10 %
(SENSITIVITY_STEP) and kept if some run of the family moves by more than SENSITIVITY_MIN in log
throughput, at most MAX_FREE of them (largest effect first); the others stay at calibrated.py.
In practice: the GPU generation's GEMM / FP8 GEMM and attention efficiency, the PyTorch GEMM
factor, the fixed per-kernel cost, and where they matter the network, TP overlap, MoE host time
and nanotron's host/ZeRO-1 terms. The objective is evaluated on the training runs whose
prediction depends on a refitted constant (the others add a constant). Checked once against a
full refit (--full, Playbook 1B, 630 evaluations): the same before/after ratio (docs/performance.md).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fit_calibration as fc  # noqa: E402

from shardwise.engine.calibration.leave_family_out import FIELDS, RESULTS, leave_family_out, row_of  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.runs import used_runs  # noqa: E402
from shardwise.engine.calibration.transfer import (family_key, families, hindsight_family,  # noqa: E402
                                                   transfer_family)

SENSITIVITY_STEP = 1.1  # each constant × 1.1 (× 0.9 where 1.1 would pass its fit bound)
SENSITIVITY_MIN = 0.01  # a family "depends on" a constant that moves one of its runs > 1 % (log)
MAX_FREE = 6
MAXFEV_PER_CONSTANT = 25  # Powell evaluations per refitted constant (warm start: about one sweep; measured: one
# family of 3 constants took 120 evaluations, 62 s, and moved them < 0.2 %)


def _log_pred(runs, values) -> np.ndarray:
    return np.log([p.tokens_per_gpu for p in predict(runs, fc.assumptions(values))])


def sensitivities(runs, values) -> dict[str, np.ndarray]:
    """|Δ log predicted| per run when each constant is raised 10 %."""
    base = _log_pred(runs, values)
    out = {}
    for name, _, lo, hi in fc.PARAMS:
        v = dict(values)
        up = values[name] * SENSITIVITY_STEP
        v[name] = up if (lo <= up <= hi and values[name] > 0) else (values[name] / SENSITIVITY_STEP or 0.1 * (hi - lo))
        out[name] = np.abs(_log_pred(runs, v) - base)
    return out


class Refitter:
    def __init__(self, pool, everything, maxfev_per_constant: int):
        self.start = fc.current_values()
        self.maxfev_per_constant = maxfev_per_constant
        self.index = {id(r): i for i, r in enumerate(everything)}
        t = time.time()
        self.sens = sensitivities(everything, self.start)
        print(f"sensitivities of {len(everything)} runs to {len(fc.PARAMS)} constants: {time.time() - t:.0f} s")
        self.refit_by_family: dict[str, dict[str, float]] = {}

    full = False  # --full: every constant (the check of the restriction on one family)

    def free_constants(self, family_runs) -> list[str]:
        if self.full:
            return [p[0] for p in fc.PARAMS]
        idx = [self.index[id(r)] for r in family_runs]
        effect = {name: float(s[idx].max()) for name, s in self.sens.items()}
        names = [n for n in sorted(effect, key=lambda n: -effect[n]) if effect[n] > SENSITIVITY_MIN]
        return names[:MAX_FREE]

    def __call__(self, key, train, family_runs):
        free = self.free_constants(family_runs)
        counts = Counter(r.source for r in train)
        affected = [r for r in train if any(self.sens[n][self.index[id(r)]] > 1e-9 for n in free)]
        weights = np.array([1 / math.sqrt(counts[r.source]) for r in affected])
        weights /= sum(1 / math.sqrt(counts[r.source]) for r in train)  # the full objective's normalisation
        measured = np.log([r.measured_tokens_per_gpu for r in affected])
        params = [p for p in fc.PARAMS if p[0] in free]

        def values_of(z):
            return {**self.start, **fc.to_values(z, params)}

        def objective(z):
            return float(np.sum(weights * np.abs(_log_pred(affected, values_of(z)) - measured)))

        z0 = fc.to_z(self.start, params)
        t = time.time()
        res = minimize(objective, z0, method="Powell",
                       options={"maxfev": self.maxfev_per_constant * len(free), "xtol": 1e-3, "ftol": 1e-5})
        v = values_of(res.x)
        moved = ", ".join(f"{n} {self.start[n]:.4g}->{v[n]:.4g}" for n in free)
        self.refit_by_family[key] = {n: v[n] for n in free}
        print(f"  refit {len(free)} constants on {len(affected)}/{len(train)} runs, {res.nfev} evaluations, "
              f"{time.time() - t:.0f} s: {moved}")
        return fc.assumptions(v)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--only", help="families whose key starts with this (for timing; not with --write)")
    ap.add_argument("--maxfev-per-constant", type=int, default=MAXFEV_PER_CONSTANT)
    ap.add_argument("--full", action="store_true", help="refit all 21 constants (slow: use with --only)")
    args = ap.parse_args(argv)
    runs = used_runs()
    pool = [r for r in runs if not r.holdout]
    fams = families(runs)
    if args.only:
        fams = {k: v for k, v in fams.items() if k.startswith(args.only)}
    if args.full and (args.write or not args.only):
        ap.error("--full is a check on one family: use it with --only and without --write")
    refitter = Refitter(pool, runs, args.maxfev_per_constant)
    refitter.full = args.full
    base_by_family = {}

    def refit(key, train):
        print(key)
        base_by_family[key] = refitter(key, train, fams[key])
        return base_by_family[key]

    lofo = leave_family_out(fams, pool, refit, family_key)
    compute_only = [transfer_family(f.family, fams[f.family], base_by_family[f.family], fit_comm=False) for f in lofo]
    rows = []
    for f, c in zip(lofo, compute_only):
        runs_f = fams[f.family]
        hindsight = hindsight_family(runs_f, base_by_family[f.family])
        ceiling = [abs(after / m - 1) for r, (m, _, after) in zip(runs_f, hindsight) if r.key != f.anchor]
        rows.append(row_of(f, refitter.refit_by_family[f.family], c, ceiling))
    n = sum(r["runs"] for r in rows)
    for r in rows:
        print(f"{r['family'][:70]:<71}{r['runs']:>4} x{float(r['compute_scale']):.3f} "
              f"{float(r['mape_before']):7.1%} -> {float(r['mape_after']):6.1%}")
    for attr in ("mape_before", "mape_after", "mape_after_compute_only", "mape_hindsight"):
        pooled = sum(float(r[attr]) * r["runs"] for r in rows) / n
        fam = sum(float(r[attr]) for r in rows) / len(rows)
        print(f"{attr}: pooled over {n} runs {pooled:.2%}, per family ({len(rows)}) {fam:.2%}")
    if args.write:
        if args.only:
            ap.error("--write needs every family (drop --only)")
        with open(RESULTS, "w", newline="") as fh:
            fh.write("# GENERATED by benchmarks/leave_family_out.py --write, do not edit by hand\n")
            fh.write(",".join(FIELDS) + "\n")
            for r in rows:
                fh.write(",".join(f'"{r[f]}"' if f == "family" else str(r[f]) for f in FIELDS) + "\n")
        print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
