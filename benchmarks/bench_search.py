"""Wall time and plans/s of the full search (`recommend`), for 8, 64, 1,024 and 16,384 GPUs.

    python benchmarks/bench_search.py              # Llama-3.1-405B on H100s (the issue's case)
    python benchmarks/bench_search.py --model deepseek-v3 --gpu h100 --repeat 3

Each row is the best of --repeat runs of recommend(top_k=5) (enumeration, validity, memory for
every valid plan, step time for every fitting plan, full evaluate() of the top 5). When nothing
fits, the time includes the nothing-fits probes (minimum GPU count, LoRA/QLoRA, larger GPU).
plans/s = plans searched / wall time. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import time

from shardwise.engine.inputs import build_cluster, resolve_model
from shardwise.engine.search import recommend
from shardwise.engine.training import TrainingSetup


def bench(model_name: str, gpu: str, counts: list[int], seq_len: int, global_batch: int, repeat: int) -> None:
    model = resolve_model(model_name)
    setup = TrainingSetup(seq_len=seq_len, global_batch=global_batch)
    print(f"{model.name}, {gpu}, seq {seq_len}, global batch {global_batch} sequences, best of {repeat}")
    print(f"{'GPUs':>7} {'searched':>9} {'valid':>8} {'fitting':>8} {'wall ms':>9} {'plans/s':>11}  best plan")
    for n in counts:
        cluster = build_cluster(gpu, n)
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            r = recommend(model, cluster, setup, top_k=5)
            best = min(best, time.perf_counter() - start)
        if r.plans:
            s = r.plans[0].strategy
            note = (f"TP{s.tp} PP{s.pp} VPP{s.vpp} CP{s.cp} EP{s.ep} DP{s.dp} ZeRO{s.zero_stage} mb{s.micro_batch} "
                    f"{s.recompute}, {r.plans[0].throughput.tokens_per_s_per_gpu:,.0f} tok/s/GPU")
        else:
            note = f"nothing fits (probes included); min GPUs {r.nothing_fits.min_gpus}"
        print(f"{n:>7,} {r.searched:>9,} {r.valid:>8,} {r.fitting:>8,} {best * 1e3:>9.1f} {r.searched / best:>11,.0f}  {note}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="llama-3.1-405b")
    p.add_argument("--gpu", default="h100-sxm")
    p.add_argument("--gpus", default="8,64,1024,16384")
    p.add_argument("--seq-len", type=int, default=8192)
    p.add_argument("--global-batch", type=int, default=2048, help="sequences (2048 x 8K = Llama 3's 16M tokens)")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    bench(a.model, a.gpu, [int(x) for x in a.gpus.split(",")], a.seq_len, a.global_batch, a.repeat)


if __name__ == "__main__":
    main()
