"""Benchmark: step_time over large PlanGrids (plans evaluated per second).

    pytest benchmarks/bench_step_time.py --benchmark-only
    python benchmarks/bench_step_time.py          # plain wall-clock print
"""

from __future__ import annotations

import time

import numpy as np

from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.performance import step_time
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup


def random_grid(n: int, num_gpus: int, global_batch: int, seed: int = 0) -> PlanGrid:
    rng = np.random.default_rng(seed)
    return PlanGrid.build(num_gpus, global_batch, tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 2, 4, 8, 16], n),
                          vpp=rng.choice([1, 2], n), cp=rng.choice([1, 2], n), micro_batch=rng.choice([1, 2, 4], n),
                          zero_stage=rng.choice([0, 1, 2, 3], n), recompute=rng.choice([0, 1, 2], n))


def scenario(n: int):
    model = get_model("Llama-3.1-405B")
    cluster = build_cluster("h100-sxm", 16384)
    setup = TrainingSetup(seq_len=8192, global_batch=2048)
    return model, cluster, setup, random_grid(n, 16384, 2048)


def test_step_time_100k(benchmark):
    model, cluster, setup, grid = scenario(100_000)
    benchmark(step_time, model, cluster, setup, grid)


def test_step_time_moe_100k(benchmark):
    model = get_model("DeepSeek-V3")
    cluster = build_cluster("h100-sxm", 2048)
    rng = np.random.default_rng(0)
    n = 100_000
    grid = PlanGrid.build(2048, 4096, tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 4, 8, 16], n),
                          ep=rng.choice([8, 16, 32, 64], n), micro_batch=rng.choice([1, 2], n),
                          zero_stage=rng.choice([1, 3], n), recompute=rng.choice([0, 2], n))
    benchmark(step_time, model, cluster, TrainingSetup(seq_len=4096, global_batch=4096), grid)


if __name__ == "__main__":
    for n in (10_000, 100_000, 1_000_000):
        args = scenario(n)
        t0 = time.perf_counter()
        step_time(*args)
        dt = time.perf_counter() - t0
        print(f"{n:>9,} plans: {dt * 1e3:8.1f} ms  ({n / dt:,.0f} plans/s)")
