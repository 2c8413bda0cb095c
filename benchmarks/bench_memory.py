"""Benchmark: memory_per_gpu over large PlanGrids (plans evaluated per second).

    pytest benchmarks/bench_memory.py --benchmark-only
    python benchmarks/bench_memory.py          # plain wall-clock print, 10^4 – 10^6 plans
"""

from __future__ import annotations

import time

import numpy as np

from shardwise.engine.inputs import build_cluster
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.model_catalog import get_model
from shardwise.engine.plans import PlanGrid
from shardwise.engine.training import TrainingSetup


def random_grid(n: int, num_gpus: int, global_batch: int, moe: bool, seed: int = 0) -> PlanGrid:
    rng = np.random.default_rng(seed)
    columns = dict(tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 2, 4, 8, 16], n), vpp=rng.choice([1, 2], n),
                   cp=rng.choice([1, 2], n), micro_batch=rng.choice([1, 2, 4], n),
                   zero_stage=rng.choice([0, 1, 2, 3], n), recompute=rng.choice([0, 1, 2], n))
    if moe:
        columns.update(ep=rng.choice([8, 16, 32, 64], n), etp=rng.choice([1, 2], n))
    return PlanGrid.build(num_gpus, global_batch, **columns)


def scenario(n: int, model_name: str = "Llama-3.1-405B", framework: str = "megatron"):
    model = get_model(model_name)
    cluster = build_cluster("h100-sxm", 2048)
    setup = TrainingSetup(seq_len=8192, global_batch=2048, framework=framework)
    return model, cluster, setup, random_grid(n, 2048, 2048, moe=model.moe is not None)


def test_memory_dense_100k(benchmark):
    benchmark(memory_per_gpu, *scenario(100_000))


def test_memory_moe_fsdp_100k(benchmark):
    benchmark(memory_per_gpu, *scenario(100_000, "DeepSeek-V3", "fsdp"))


if __name__ == "__main__":
    for name, framework in (("Llama-3.1-405B", "megatron"), ("DeepSeek-V3", "fsdp")):
        for n in (10_000, 100_000, 1_000_000):
            args = scenario(n, name, framework)
            t0 = time.perf_counter()
            memory_per_gpu(*args)
            dt = time.perf_counter() - t0
            print(f"{name:15} {framework:9} {n:>9,} plans: {dt * 1e3:8.1f} ms  ({n / dt:,.0f} plans/s)")
