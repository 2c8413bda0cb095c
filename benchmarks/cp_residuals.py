"""Throughput residuals by context parallelism, tokens per GPU and the engine's fixed per-kernel share:
the calibration runs (out-of-fold predictions) and external sets 1-5 (the engine as it is now).

    python benchmarks/cp_residuals.py            # print the tables
    python benchmarks/cp_residuals.py --runs     # ... and every CP > 1 run

Reads only (no engine change, nothing written). The question it answers (docs/performance.md, "Lead for the
next session: context-parallel compute at few tokens per GPU"): does the engine under-predict runs where few
tokens per GPU make its fixed per-kernel cost (KERNEL_FIXED_S, paid by every kernel whatever its size, and the
extra ring kernels of context parallelism) a large share of the step?

Columns: error = predicted / measured - 1 (negative: the run is faster than predicted); calibration runs use
their out-of-fold prediction (data/out_of_fold_predictions.csv); external runs the engine's prediction with
the shipped constants. "tokens/GPU/mb" is micro-batch x sequence / CP, the M of every GEMM the GPU runs.
"fixed share" is 1 - step(KERNEL_FIXED_S = 0) / step(shipped), both with the shipped constants: how much of the
predicted step the fixed per-kernel cost makes.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import replace

import numpy as np

from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.out_of_fold import load_out_of_fold
from shardwise.engine.calibration.predict import predict
from shardwise.engine.calibration.runs import used_runs

NO_FIXED_COST = replace(DEFAULT_ASSUMPTIONS, kernel_fixed_s=0.0, small_kernel_fixed_s=0.0)  # both fixed costs (E10)
TOKEN_BINS = ((0, 1024, "<= 1,024"), (1024, 4096, "1,025-4,096"), (4096, 1e12, "> 4,096"))
SHARE_BINS = ((0.0, 0.10, "< 10 %"), (0.10, 0.20, "10-20 %"), (0.20, 0.35, "20-35 %"), (0.35, 1.0, ">= 35 %"))


def tokens_per_gpu_per_microbatch(run) -> float:
    return run.strategy.micro_batch * run.setup.seq_len / run.strategy.cp


def rows_of(runs, predicted: list[float]) -> list[dict]:
    """One row per run: its plan's CP and tokens, the engine's fixed-cost share, and its error."""
    shipped = predict(runs)
    no_fixed = predict(runs, NO_FIXED_COST)
    out = []
    for run, pred, s, z in zip(runs, predicted, shipped, no_fixed):
        out.append({"run": run, "cp": run.strategy.cp, "tokens": tokens_per_gpu_per_microbatch(run),
                    "fixed_share": 1.0 - z.step_s / s.step_s,
                    "error": pred / run.measured_tokens_per_gpu - 1.0})
    return out


def calibration_rows() -> list[dict]:
    oof = {o.key: o.predicted_tokens_per_gpu for o in load_out_of_fold()}
    runs = [r for r in used_runs() if r.key in oof]
    return rows_of(runs, [oof[r.key] for r in runs])


def external_rows(number: int) -> list[dict]:
    runs = [r for r in JUDGED_EXTERNAL_SETS[number]() if r.used]
    return rows_of(runs, [p.tokens_per_gpu for p in predict(runs)])


def cell(rows: list[dict]) -> str:
    if not rows:
        return "-"
    e = np.array([r["error"] for r in rows])
    return f"{len(rows)}: {np.median(e):+.1%}"


def table(title: str, datasets: dict[str, list[dict]], key, bins) -> None:
    print(f"\n{title} (cells: runs: median error)")
    print("| " + " | ".join(["bin"] + list(datasets)) + " |")
    print("|" + "---|" * (len(datasets) + 1))
    for label, test in bins:
        print("| " + " | ".join([label] + [cell([r for r in rows if test(key(r))]) for rows in datasets.values()]) + " |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", action="store_true", help="also list every CP > 1 run")
    args = ap.parse_args()
    datasets = {"calibration (OOF)": calibration_rows()}
    for n in sorted(JUDGED_EXTERNAL_SETS):
        datasets[f"set {n}"] = external_rows(n)

    cp_bins = [("CP 1", lambda v: v == 1), ("CP 2", lambda v: v == 2), ("CP 4", lambda v: v == 4),
               ("CP >= 8", lambda v: v >= 8)]
    table("By context parallelism", datasets, lambda r: r["cp"], cp_bins)
    tok_bins = [(label, (lambda lo, hi: lambda v: lo < v <= hi)(lo, hi)) for lo, hi, label in TOKEN_BINS]
    table("By tokens per GPU per micro-batch (micro-batch x sequence / CP)", datasets, lambda r: r["tokens"], tok_bins)
    share_bins = [(label, (lambda lo, hi: lambda v: lo <= v < hi)(lo, hi)) for lo, hi, label in SHARE_BINS]
    table("By the engine's fixed per-kernel share of the predicted step", datasets, lambda r: r["fixed_share"],
          share_bins)
    megatron = {k: [r for r in rows if r["run"].setup.framework == "megatron"] for k, rows in datasets.items()}
    table("Megatron-family runs only, by fixed per-kernel share", megatron, lambda r: r["fixed_share"], share_bins)
    mode_bins = [("full", lambda v: v == "full"), ("LoRA / QLoRA", lambda v: v in ("lora", "qlora"))]
    table("Megatron-family runs only, by training mode", megatron, lambda r: r["run"].setup.mode, mode_bins)

    if args.runs:
        print("\nEvery CP > 1 run")
        groups = defaultdict(list)
        for name, rows in datasets.items():
            for r in rows:
                if r["cp"] > 1:
                    run = r["run"]
                    s = run.strategy
                    groups[(name, run.source, run.model_label, run.cluster.gpu.id, s.tp, s.cp, r["tokens"])].append(r)
        for (name, source, model, gpu, tp, cp, tokens), rows in sorted(groups.items(), key=lambda kv: str(kv[0])):
            e = np.array([r["error"] for r in rows])
            share = np.median([r["fixed_share"] for r in rows])
            print(f"  {name:18s} {source[:34]:34s} {model[:20]:20s} {gpu:9s} TP {tp} CP {cp} tokens {tokens:6.0f} "
                  f"fixed {share:5.1%}  runs {len(rows):3d}  median error {np.median(e):+.1%}")


if __name__ == "__main__":
    main()
