"""Session 10's gate figures for engine candidate E10 on the SEEN external sets 1-5 (never 6 or 7): MAPE over
each set's used runs and pooled over sets 1-5 (each run once; and each group once), and set 5's LoRA runs at
CP >= 8 (median signed error). Runs on whichever engine `shardwise` imports, so the shipped engine is measured
by pointing PYTHONPATH at a directory whose `shardwise` is main:

    PYTHONPATH=<dir with shardwise -> worktree> python benchmarks/e10_gate.py
"""

from __future__ import annotations

import numpy as np

from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.external_check import mape_each_group_once
from shardwise.engine.calibration.predict import predict

SEEN_SETS = (1, 2, 3, 4, 5)  # the gate's sets; 6 and 7 are the judge and are never loaded here


def main() -> None:
    pooled_err, pooled_groups = [], []
    for n in SEEN_SETS:
        assert n in JUDGED_EXTERNAL_SETS and n <= 5
        runs = [r for r in JUDGED_EXTERNAL_SETS[n]() if r.used]
        errors = [p.error for p in predict(runs)]
        groups = [f"set {n} | {r.group}" for r in runs]
        pooled_err += errors
        pooled_groups += groups
        print(f"set {n}: {len(runs)} used runs, MAPE {np.mean(np.abs(errors)):.1%}, "
              f"each group once {mape_each_group_once(errors, groups):.1%}, median {np.median(errors):+.1%}")
        if n == 5:
            lora = [(r, e) for r, e in zip(runs, errors) if r.setup.mode == "lora"]
            cp8 = [e for r, e in lora if r.strategy.cp >= 8]
            rest = [e for r, e in zip(runs, errors) if r.setup.mode != "lora"]
            print(f"  set 5 LoRA CP>=8: {len(cp8)} runs, median {np.median(cp8):+.1%}, MAPE {np.mean(np.abs(cp8)):.1%}")
            print(f"  set 5 LoRA all: {len(lora)} runs, median {np.median([e for _, e in lora]):+.1%}, "
                  f"MAPE {np.mean(np.abs([e for _, e in lora])):.1%}")
            print(f"  set 5 other than LoRA: {len(rest)} runs, MAPE {np.mean(np.abs(rest)):.1%}")
    print(f"sets 1-5 pooled: {len(pooled_err)} used runs, MAPE {np.mean(np.abs(pooled_err)):.2%}, "
          f"each group once {mape_each_group_once(pooled_err, pooled_groups):.2%}")


if __name__ == "__main__":
    main()
