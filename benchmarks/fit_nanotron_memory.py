"""Fit nanotron's one memory constant, NANOTRON_SAVED_ACTIVATION_FACTOR, on the Ultra-Scale
Playbook sweep's measured peaks, and print the memory error before and after.

    python benchmarks/fit_nanotron_memory.py

Offline dev tool. The sweep reports torch.cuda.max_memory_allocated, so the comparison is with
the model's tensor peak (total − other: no CUDA context, NCCL buffers or fragmentation). The
factor minimises the mean |relative error| of the groups not held out (CalibrationRun.holdout) on a 0.1 then 0.01 grid; write the value printed into
engine/assumptions/memory.py by hand (it is one number, with its comment there).
"""

from __future__ import annotations

import importlib

import numpy as np

from shardwise.engine.calibration.runs import used_runs
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.plans import PlanGrid

GIB = 2**30


def errors(runs, factor: float) -> np.ndarray:
    importlib.import_module("shardwise.engine.memory.stage_activations").NANOTRON_SAVED_ACTIVATION_FACTOR = factor
    out = []
    for r in runs:
        grid = PlanGrid.from_strategy(r.strategy, r.cluster.num_gpus, r.setup.global_batch)
        m = memory_per_gpu(r.model, r.cluster, r.setup, grid)
        out.append((float(m.total[0]) - float(m.other[0])) / GIB / r.measured_memory_gib - 1.0)
    return np.array(out)


def main() -> int:
    runs = [r for r in used_runs("playbook-sweep") if r.measured_memory_gib]
    fit = [r for r in runs if not r.holdout]  # the held-out groups are only scored
    held = [r for r in runs if r.holdout]
    before = errors(runs, 1.0)
    best = 1.0
    for step in (0.1, 0.01):  # coarse, then fine around the coarse best
        grid = np.round(np.arange(max(1.0, best - 10 * step), best + 10.5 * step, step), 2)
        scores = [float(np.mean(np.abs(errors(fit, f)))) for f in grid]
        best = float(grid[int(np.argmin(scores))])
    after = errors(runs, best)
    print(f"{len(runs)} runs; factor 1.00: MAPE {100 * np.mean(np.abs(before)):.1f}% (bias {100 * before.mean():+.1f}%)")
    print(f"fitted factor {best:.2f}: MAPE {100 * np.mean(np.abs(after)):.1f}% (bias {100 * after.mean():+.1f}%), "
          f"within 15 %: {100 * np.mean(np.abs(after) <= 0.15):.0f}%; held-out groups ({len(held)} runs): "
          f"MAPE {100 * np.mean(np.abs(errors(held, best))):.1f}%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
