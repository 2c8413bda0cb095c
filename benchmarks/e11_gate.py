"""Session 11's gate figures for engine candidate E11 on the SEEN external sets 1-7 (8 too since its first run, as
session 12's loader-reading check uses it: --sets 1 2 3 4 5 6 7 8; never a later set): MAPE over each
set's used runs and pooled over the chosen sets (each run once; and each group once), and the rows session 10's
diagnosis named: LoRA at CP >= 8 in sets 5 and 7 (median signed error), set 5's Llama 3.1 8B full-training rows
at CP 2 and at TP 2 x CP 4, set 4's Hopper LoRA at TP 4 x CP 2. Runs on whichever engine `shardwise` imports,
so the shipped engine is measured from main's directory (its `shardwise` is main), read-only:

    PYTHONPATH=<dir with shardwise -> worktree> python benchmarks/e11_gate.py            # sets 1-8
    cd /work/main && PYTHONDONTWRITEBYTECODE=1 python <worktree>/benchmarks/e11_gate.py  # the shipped engine
    ... --sets 1 2 3 4 5                                                                 # E10's gate sets
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.external_check import mape_each_group_once
from shardwise.engine.calibration.predict import predict

SEEN_SETS = (1, 2, 3, 4, 5, 6, 7, 8)  # set 8 seen since its first run (session 11); later sets are never loaded here


def median_line(label: str, errors: list[float]) -> str:
    if not errors:
        return f"  {label}: no runs"
    return f"  {label}: {len(errors)} runs, median {np.median(errors):+.1%}, MAPE {np.mean(np.abs(errors)):.1%}"


def named_rows(n: int, runs, errors) -> list[str]:
    """The rows session 10's diagnosis named, in set n."""
    pairs = list(zip(runs, errors))
    lines = []
    if n in (5, 7):
        lora_cp8 = [e for r, e in pairs if r.setup.mode == "lora" and r.strategy.cp >= 8]
        lines.append(median_line(f"set {n} LoRA CP>=8", lora_cp8))
    if n == 5:
        eight_b = [(r, e) for r, e in pairs if r.model.name.startswith("Llama-3.1-8B") and r.setup.mode == "full"]
        for tp, cp, name in ((1, 2, "CP 2 (TP 1)"), (2, 4, "TP 2 x CP 4")):
            lines.append(median_line(f"set 5 8B full {name}",
                                     [e for r, e in eight_b if r.strategy.tp == tp and r.strategy.cp == cp]))
        lines.append(median_line("set 5 LoRA all", [e for r, e in pairs if r.setup.mode == "lora"]))
        lines.append(median_line("set 5 other than LoRA", [e for r, e in pairs if r.setup.mode != "lora"]))
    if n == 4:
        lines.append(median_line("set 4 LoRA TP 4 x CP 2", [e for r, e in pairs if r.setup.mode == "lora"
                                                            and r.strategy.tp == 4 and r.strategy.cp == 2]))
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", nargs="+", type=int, default=list(SEEN_SETS), choices=SEEN_SETS)
    args = ap.parse_args(argv)
    pooled_err, pooled_groups = [], []
    for n in args.sets:
        runs = [r for r in JUDGED_EXTERNAL_SETS[n]() if r.used]
        errors = [p.error for p in predict(runs)]
        groups = [f"set {n} | {r.group}" for r in runs]
        pooled_err += errors
        pooled_groups += groups
        print(f"set {n}: {len(runs)} used runs, MAPE {np.mean(np.abs(errors)):.1%}, "
              f"each group once {mape_each_group_once(errors, groups):.1%}, median {np.median(errors):+.1%}")
        for line in named_rows(n, runs, errors):
            print(line)
    print(f"sets {','.join(map(str, args.sets))} pooled: {len(pooled_err)} used runs, MAPE {np.mean(np.abs(pooled_err)):.2%}, "
          f"each group once {mape_each_group_once(pooled_err, pooled_groups):.2%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
