"""GPT-3 175B on 1,024 A100 80GB: what the engine charges for its ZeRO-3 recommendation, term by term, and how it
compares with published measured A100 runs at that scale (docs/performance.md, "Lead for the next session: ZeRO-3 at
1,024 A100 (session 13, diagnosis only)").

    PYTHONPATH=<dir whose shardwise is this checkout> python benchmarks/zero3_175b_a100.py

Reads only. Nothing is written or fitted and no engine formula, constant or data file changes: every what-if is a
dataclasses.replace of the PerformanceAssumptions or a model_copy of the setup, for that call. Data it reads: the
calibration runs and external sets 1-9 (seen); sets 10 and 11 are never loaded.

Sections:
  1  recommend at the published runs' batch sizes (OPT 2M tokens = 1,024 sequences, GPT-3 / Narayanan Table 2 1,536,
     MT-NLG 1,920, BLOOM 2,048), the best plan and its step
  2  the best plan's ZeRO-3 traffic per GPU: bytes, wire time at the ring's bus bandwidth, the compute window that
     hides it, and what is exposed; what-ifs on the overlap
  3  the engine on published measured A100 layouts of the same model (Narayanan et al. 2021 Table 2, OPT-175B's pace
     from its team's notes, the PyTorch FSDP paper's GPT-175B as a summary states it), and the calibration's A100
     Megatron rows out of fold
  4  the ZeRO-3 runs of the calibration and seen external sets (PP = 1): wire time / compute window, and the error
  5  sensitivity, not a fit: the same rows under a lower FSDP_OVERLAP_FRACTION or a contention cost, and the scenario
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from shardwise.engine.assumptions.compute import gpu_generation
from shardwise.engine.assumptions.network import GRAD_REDUCE_BYTES, PARAM_GATHER_BYTES
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS as BASE
from shardwise.engine.calibration.coverage import extrapolation_warnings
from shardwise.engine.calibration.external import (load_external_runs, load_external_runs_2, load_external_runs_3,
                                                   load_external_runs_4, load_external_runs_5, load_external_runs_6,
                                                   load_external_runs_7, load_external_runs_8, load_external_runs_9)
from shardwise.engine.calibration.out_of_fold import load_out_of_fold
from shardwise.engine.calibration.predict import _grid, predict, run_assumptions
from shardwise.engine.calibration.runs import narayanan_flops_per_token, used_runs
from shardwise.engine.flops import model_flops_per_token
from shardwise.engine.inputs import build_cluster
from shardwise.engine.model_catalog import get_model
from shardwise.engine.performance import step_time
from shardwise.engine.performance.compute import microbatch_compute
from shardwise.engine.performance.dp import _zero3_per_microbatch
from shardwise.engine.performance.step import trainable_params_per_gpu
from shardwise.engine.performance.topology import dp_group
from shardwise.engine.plans import PlanGrid
from shardwise.engine.search import recommend
from shardwise.engine.strategy import Strategy
from shardwise.engine.training import TrainingSetup

SEEN_EXTERNAL = (load_external_runs, load_external_runs_2, load_external_runs_3, load_external_runs_4,
                 load_external_runs_5, load_external_runs_6, load_external_runs_7, load_external_runs_8,
                 load_external_runs_9)  # never 10 or 11
A100_PEAK = 312e12
MODEL = get_model("gpt-3-175b")
# Batch sizes of published 175B-class A100 runs, in 2,048-token sequences: OPT-175B 2M tokens (Zhang et al. 2022),
# GPT-3 3.2M tokens and Narayanan et al. 2021 Table 2 (1,536), MT-NLG 1,920 (Smith et al. 2022), BLOOM 2,048.
BATCHES = (1024, 1536, 1920, 2048)


def zero3_terms(model, cluster, setup, strategy, assume=BASE) -> dict:
    """The ZeRO-3 terms of one plan, as dp.dp_exposed_time prices them (per micro-batch and per step)."""
    grid = PlanGrid.from_strategy(strategy, cluster.num_gpus, setup.global_batch)
    mb = microbatch_compute(model, cluster, setup, grid, assume)
    layers = model.num_layers / grid.pp
    window = layers * (mb.layer_mix(model, "forward") + mb.layer_mix(model, "backward")
                       + mb.layer_mix(model, "recompute"))
    params = trainable_params_per_gpu(model, setup, grid)
    links = dp_group(cluster, grid, assume)
    wire, latency = _zero3_per_microbatch(params.dense, links, layers)
    m = int(grid.num_microbatches[0])
    gathered = float(params.dense[0]) * PARAM_GATHER_BYTES
    return {"microbatches": m, "params_per_gpu": float(params.dense[0]), "gather_gb": gathered / 1e9,
            "step_wire_gb": m * float(params.dense[0]) * (2 * PARAM_GATHER_BYTES + GRAD_REDUCE_BYTES) / 1e9,
            "ring_gbs": float(links.ring_bandwidth[0]) / 1e9, "ring_size": int(links.size[0]),
            "members_per_node": int(links.members_per_node[0]), "wire_s": float(wire[0]),
            "latency_s": float(latency[0]), "window_s": float(window[0]), "ratio": float(wire[0] / window[0])}


def times(model, cluster, setup, strategy, assume=BASE):
    grid = PlanGrid.from_strategy(strategy, cluster.num_gpus, setup.global_batch)
    return step_time(model, cluster, setup, grid, assume), grid


def mfu(model, setup, t, grid, cluster) -> float:
    return float(t.model_flops_per_step[0] / (t.step[0] * cluster.num_gpus * A100_PEAK))


def section_1_and_2() -> None:
    cluster = build_cluster("a100-80gb", 1024)
    print(f"cluster: {cluster.num_gpus} x {cluster.gpu.name}, {cluster.gpus_per_node} per node, network "
          f"{cluster.network.id} ({cluster.network.bandwidth_gbs} GB/s per GPU)")
    for batch in BATCHES:
        setup = TrainingSetup(seq_len=2048, global_batch=batch)
        rec = recommend(MODEL, cluster, setup, top_k=1)
        p = rec.plans[0]
        s, t = p.strategy, p.time
        print(f"\n## batch {batch} sequences ({batch * 2048 / 1e6:.2f}M tokens): best {rec.plans[0].strategy}")
        print(f"   MFU {p.throughput.mfu:.1%}, {p.throughput.model_tflops_per_gpu:.0f} model TFLOP/s/GPU, step "
              f"{t.step_s:.2f} s = compute {t.compute_s:.2f} + TP {t.tp_comm_s * 1e3:.0f} ms + PP bubble "
              f"{t.pp_bubble_s * 1e3:.0f} ms + DP {t.dp_comm_s * 1e3:.0f} ms + optimizer "
              f"{(t.optimizer_s + t.optimizer_phase_s) * 1e3:.0f} ms; warnings: "
              f"{[w.rule for w in p.warnings] or 'none'}")
        if s.zero_stage != 3:
            continue
        strategy = Strategy(tp=s.tp, pp=s.pp, vpp=s.vpp, cp=s.cp, zero_stage=3, micro_batch=s.micro_batch,
                            recompute=s.recompute, sequence_parallel=s.sequence_parallel)
        z = zero3_terms(MODEL, cluster, setup, strategy)
        print(f"   ZeRO-3 per GPU: {z['params_per_gpu'] / 1e9:.2f} B params (its TP shard), gather "
              f"{z['gather_gb']:.1f} GB BF16 twice + reduce-scatter {z['gather_gb'] * 2:.1f} GB FP32 per micro-batch;"
              f" {z['microbatches']} micro-batches: {z['step_wire_gb']:.0f} GB per step")
        print(f"   ring: {z['ring_size']} ranks, {z['members_per_node']} per node, bus bandwidth "
              f"{z['ring_gbs']:.1f} GB/s; wire {z['wire_s']:.2f} s (of which ring latency {z['latency_s'] * 1e3:.0f}"
              f" ms) per micro-batch against a compute window of {z['window_s']:.2f} s: ratio {z['ratio']:.2f}")
        base_t, grid = times(MODEL, cluster, setup, strategy)
        for label, assume, fw in (
                ("shipped (FSDP_OVERLAP_FRACTION 1.0, megatron)", BASE, "megatron"),
                ("framework fsdp (ring latency 0.85 exposed)", BASE, "fsdp"),
                ("FSDP_OVERLAP_FRACTION 0.75", replace(BASE, fsdp_overlap=0.75), "megatron"),
                ("FSDP_OVERLAP_FRACTION 0.5", replace(BASE, fsdp_overlap=0.5), "megatron"),
                ("FSDP_OVERLAP_FRACTION 0 (nothing hidden)", replace(BASE, fsdp_overlap=0.0), "megatron")):
            st = setup.model_copy(update={"framework": fw})
            tt, g = times(MODEL, cluster, st, strategy, assume)
            print(f"   what-if {label:48s} step {float(tt.step[0]):6.2f} s, DP exposed "
                  f"{float(tt.dp_comm[0]) * 1e3:7.0f} ms, MFU {mfu(MODEL, st, tt, g, cluster):.1%}")
        warn = extrapolation_warnings(MODEL, cluster, setup)
        print(f"   extrapolation_warnings: {warn or 'none'}")


def section_3() -> None:
    print("\n## published measured A100 layouts of GPT-3 175B (engine prediction vs the paper's figure)")
    eq3 = narayanan_flops_per_token(MODEL, 2048)
    print(f"   Narayanan eq. 3 FLOPs/token {eq3 / 1e12:.4f} T (full recompute counted); shardwise model FLOPs/token "
          f"{model_flops_per_token(MODEL, 2048) / 1e12:.4f} T")
    # Narayanan et al. 2021, Table 2 (arXiv 2104.04473, Section 5.2): batch 1,536, seq 2,048, Selene (8 x HDR
    # 200 Gb/s per DGX A100 node). ZeRO-3 "without model parallelism" is DeepSpeed; PTD-P is Megatron, model-parallel
    # size 96 (TP 8 x PP 12), micro-batch 1. Both count TFLOP/s with eq. 3 (activation recompute included).
    rows = (("ZeRO-3 (DeepSpeed), DP 384, mb 4", "deepspeed", 384, Strategy(tp=1, pp=1, zero_stage=3, micro_batch=4,
                                                                             recompute="full"), 144.0),
            ("ZeRO-3 (DeepSpeed), DP 768, mb 2", "deepspeed", 768, Strategy(tp=1, pp=1, zero_stage=3, micro_batch=2,
                                                                             recompute="full"), 88.0),
            ("ZeRO-3 (DeepSpeed), DP 1536, mb 1", "deepspeed", 1536, Strategy(tp=1, pp=1, zero_stage=3, micro_batch=1,
                                                                               recompute="full"), 44.0),
            ("PTD-P TP 8 PP 12, 384 GPUs", "megatron", 384, Strategy(tp=8, pp=12, vpp=1, zero_stage=0, micro_batch=1,
                                                                      recompute="full"), 153.0),
            ("PTD-P TP 8 PP 12, 768 GPUs", "megatron", 768, Strategy(tp=8, pp=12, vpp=1, zero_stage=0, micro_batch=1,
                                                                      recompute="full"), 149.0),
            ("PTD-P TP 8 PP 12, 1536 GPUs", "megatron", 1536, Strategy(tp=8, pp=12, vpp=1, zero_stage=0,
                                                                        micro_batch=1, recompute="full"), 141.0))
    # Megatron in 2021 had no TP communication overlap: priced without it, as runs.py prices the calibration's
    # Narayanan rows (tp_comm_overlap False).
    no_tp_overlap = replace(BASE, tp_overlap={**BASE.tp_overlap, "megatron": 0.0})
    for label, fw, gpus, strategy, published in rows:
        cluster = build_cluster("a100-80gb", gpus, network="ib-hdr")
        setup = TrainingSetup(seq_len=2048, global_batch=1536, framework=fw)
        t, grid = times(MODEL, cluster, setup, strategy, no_tp_overlap)
        tokens = 1536 * 2048 / float(t.step[0]) / gpus
        predicted = tokens * eq3 / 1e12
        z = zero3_terms(MODEL, cluster, setup, strategy) if strategy.zero_stage == 3 else None
        extra = (f", ZeRO-3 wire/window {z['ratio']:.2f}, DP exposed {float(t.dp_comm[0]):.1f} s"
                 if z else "")
        print(f"   {label:36s} published {published:5.0f} TFLOP/s (eq. 3), engine {predicted:5.0f} "
              f"({predicted / published - 1:+.0%}), step {float(t.step[0]):6.1f} s{extra}")
    # OPT-175B (Zhang et al. 2022): 992 A100 80GB, FSDP with Megatron TP (MP 8: metaseq#58, 992 shards), global batch
    # 2M tokens (1,024 x 2,048), "up to 147 TFLOP/s per GPU" (FLOP convention not stated in the paper). 992 / 8 =
    # 124 data-parallel ranks; 1,024 sequences do not split evenly over 124, so the engine is run at 1,000 sequences
    # (8 per rank), which keeps the per-GPU work within 3 %.
    # metaseq projects/OPT/chronicles/10_percent_update.md (2021-11-17): "we need 33 days to fully train at this scale
    # with 1024 80GB A100s" (300B tokens, 8x TP, batch 2M). Its implied throughput, in tokens/s per GPU:
    opt_tokens = 300e9 / (33 * 86400) / 1024
    print(f"   OPT-175B (FSDP + TP 8, 992 GPUs, ~2M tokens): published 'up to 147 TFLOP/s per GPU'; the logbook's "
          f"'33 days ... with 1024 80GB A100s' for 300B tokens = {opt_tokens:.1f} tokens/s/GPU = "
          f"{opt_tokens * eq3 / 1e12:.1f} TFLOP/s in eq. 3, {opt_tokens * model_flops_per_token(MODEL, 2048) / 1e12:.1f} "
          f"model TFLOP/s ({opt_tokens * model_flops_per_token(MODEL, 2048) / A100_PEAK:.1%} MFU)")
    cluster = build_cluster("a100-80gb", 992, network="ib-hdr")
    for recompute in ("full",):
        for mbs in (1, 2, 4, 8):
            strategy = Strategy(tp=8, pp=1, zero_stage=3, micro_batch=mbs, recompute=recompute)
            setup = TrainingSetup(seq_len=2048, global_batch=992, framework="fsdp")
            t, grid = times(MODEL, cluster, setup, strategy)
            tokens = 992 * 2048 / float(t.step[0]) / 992
            z = zero3_terms(MODEL, cluster, setup, strategy)
            print(f"     engine TP 8 DP 124 ZeRO-3 mb {mbs} recompute {recompute:4s}: {tokens * eq3 / 1e12:5.0f} TFLOP/s "
                  f"eq. 3, {tokens * model_flops_per_token(MODEL, 2048) / 1e12:5.0f} model TFLOP/s, MFU "
                  f"{mfu(MODEL, setup, t, grid, cluster):.1%}, {tokens:.1f} tokens/s/GPU "
                  f"({tokens / opt_tokens - 1:+.0%} against the logbook's); wire/window {z['ratio']:.2f}")


def fsdp_paper() -> None:
    """Zhao et al. 2023 (PyTorch FSDP, arXiv 2304.11277) as a third-party summary states it: minGPT-175B on 128-512
    A100 80GB, 2 Tb/s RoCE per node, full sharding, "~173 TFLOPS (B=1) and ~186 TFLOPS (B=2)". Neither the sequence
    length nor the FLOP convention is in the summary: priced here at 2,048 tokens with full activation checkpointing
    (the 2022 FSDP blog's 175B runs used it), TP 1, `fsdp`, for orientation only."""
    eq3 = narayanan_flops_per_token(MODEL, 2048)
    print("   Zhao et al. 2023 (FSDP paper, via a summary): minGPT-175B, 128-512 A100 80GB, RoCE 2 Tb/s per node, "
          "~173 (B=1) / ~186 (B=2) TFLOP/s per GPU, convention and sequence length not stated")
    for gpus in (128, 512):
        for b in (1, 2):
            cluster = build_cluster("a100-80gb", gpus, network="roce-200g")
            setup = TrainingSetup(seq_len=2048, global_batch=gpus * b, framework="fsdp")
            strategy = Strategy(tp=1, pp=1, zero_stage=3, micro_batch=b, recompute="full")
            t, grid = times(MODEL, cluster, setup, strategy)
            tokens = b * 2048 / float(t.step[0])
            z = zero3_terms(MODEL, cluster, setup, strategy)
            print(f"     engine {gpus} GPUs B={b}: {tokens * eq3 / 1e12:5.0f} TFLOP/s eq. 3, "
                  f"{tokens * model_flops_per_token(MODEL, 2048) / 1e12:5.0f} model TFLOP/s; wire/window "
                  f"{z['ratio']:.2f}, DP exposed {float(t.dp_comm[0]):.2f} s of step {float(t.step[0]):.2f} s")


def narayanan_table_1() -> None:
    oof = {o.key: o.predicted_tokens_per_gpu / o.measured_tokens_per_gpu - 1 for o in load_out_of_fold()}
    rows = [r for r in used_runs() if r.source in ("megatron-ptdp-2021", "korthikanti-2022")]
    print(f"   calibration A100 Megatron rows (Narayanan 2021 Table 1, Korthikanti 2022; {len(rows)} rows, no ZeRO-3), "
          "out-of-fold error: "
          + ", ".join(f"{r.model_label[:14]} {oof[r.key]:+.1%}" for r in rows if r.key in oof))


def ratio_of(run) -> tuple[float, int]:
    """(ZeRO-3 wire time / compute window per micro-batch, DP degree) of a measured run, as the engine prices it."""
    wire, window = _window_and_wire(run)
    return wire / window, int(_grid([run]).dp[0])


def section_4() -> None:
    print("\n## ZeRO-3 runs measured (calibration + seen external sets 1-9), PP = 1: wire time / compute window")
    oof = {o.key: o.predicted_tokens_per_gpu / o.measured_tokens_per_gpu - 1 for o in load_out_of_fold()}
    rows = []
    for origin, r in zero3_rows():
        ratio, dp = ratio_of(r)
        error = oof.get(r.key, predict([r])[0].error)
        rows.append((gpu_generation(r.cluster.gpu), ratio, dp, r.cluster.num_gpus, r.strategy.tp, r.setup.framework,
                     error, origin, r.key, r.model_label))
    for gen in sorted({x[0] for x in rows}):
        mine = [x for x in rows if x[0] == gen]
        print(f"   {gen}: {len(mine)} runs, GPUs {min(x[3] for x in mine)}-{max(x[3] for x in mine)}, DP "
              f"{min(x[2] for x in mine)}-{max(x[2] for x in mine)}, TP {sorted({x[4] for x in mine})}, frameworks "
              f"{sorted({x[5] for x in mine})}, wire/window max {max(x[1] for x in mine):.2f}")
        for lo, hi in ((0, 0.2), (0.2, 0.5), (0.5, 1.0), (1.0, 9.9)):
            b = [x[6] for x in mine if lo <= x[1] < hi]
            if b:
                print(f"     wire/window {lo:.1f}-{hi:.1f}: {len(b):3d} runs, median error {np.median(b):+.1%}, "
                      f"mean {np.mean(b):+.1%}")
    print("   runs with wire/window >= 0.25 (error: out-of-fold for calibration rows; external rows are seen but not fitted on):")
    for x in sorted(rows, key=lambda x: x[1]):
        if x[1] >= 0.25:
            print(f"     {x[1]:4.2f} {x[0]:9s} {x[3]:4d} GPUs DP {x[2]:3d} TP {x[4]} {x[5]:8s} {x[9][:16]:16s} "
                  f"error {x[6]:+.1%}  {x[7]} {x[8]}")


def zero3_rows() -> list:
    runs = [("calibration", r) for r in used_runs()]
    for i, load in enumerate(SEEN_EXTERNAL, start=1):
        runs += [(f"set {i}", r) for r in load() if r.status == "used"]
    return [(o, r) for o, r in runs if r.strategy.zero_stage == 3 and r.strategy.pp == 1]


def section_5() -> None:
    """Sensitivity, not a fit: two shapes of a ZeRO-3 overlap cost on the same PP = 1 ZeRO-3 rows (in-sample
    errors here, with the shipped constants otherwise), and what each does to the 1,024-GPU recommendation's plan."""
    print("\n## sensitivity (seen rows, shipped constants, no refit): ZeRO-3 PP = 1 rows by wire/window, median error")
    rows = zero3_rows()
    ratios = [ratio_of(r)[0] for _, r in rows]
    bins = ((0, 0.2), (0.2, 0.5), (0.5, 1.0), (1.0, 9.9))
    counts = [sum(lo <= x < hi for x in ratios) for lo, hi in bins]
    print("   bins " + ", ".join(f"{lo:.1f}-{hi:.1f} ({c} runs)" for (lo, hi), c in zip(bins, counts)))
    cluster = build_cluster("a100-80gb", 1024)
    setup = TrainingSetup(seq_len=2048, global_batch=1536)
    plan = Strategy(tp=4, pp=1, zero_stage=3, micro_batch=3, recompute="none")
    z = zero3_terms(MODEL, cluster, setup, plan)

    def report(label, errors, scenario_mfu):
        med = [np.median([e for e, x in zip(errors, ratios) if lo <= x < hi]) for lo, hi in bins]
        mape = np.mean(np.abs(errors))
        print(f"   {label:44s} " + "  ".join(f"{m:+6.1%}" for m in med) + f"   MAPE {mape:5.1%}   scenario plan MFU "
              f"{scenario_mfu:.1%}")

    for f in (1.0, 0.9, 0.75):
        assume = replace(BASE, fsdp_overlap=f)
        errors = [predict([r], assume)[0].error for _, r in rows]
        t, g = times(MODEL, cluster, setup, plan, assume)
        report(f"FSDP_OVERLAP_FRACTION {f}", errors, mfu(MODEL, setup, t, g, cluster))
    # Contention: compute slows by c x the ZeRO-3 traffic it overlaps (NCCL kernels take SMs and HBM bandwidth),
    # step += c x micro-batches x min(wire, window); computed outside the engine for this printout only.
    base = [predict([r])[0] for _, r in rows]
    for c in (0.1, 0.2, 0.3):
        errors = []
        for (_, r), p, x in zip(rows, base, ratios):
            g = _grid([r])
            terms = _window_and_wire(r)
            extra = c * int(g.num_microbatches[0]) * min(terms[0], terms[1])
            errors.append((1 + p.error) * p.step_s / (p.step_s + extra) - 1)
        t, g = times(MODEL, cluster, setup, plan)
        extra = c * z["microbatches"] * min(z["wire_s"], z["window_s"])
        report(f"contention c = {c}", errors, mfu(MODEL, setup, t, g, cluster) * float(t.step[0])
               / (float(t.step[0]) + extra))


def _window_and_wire(run) -> tuple[float, float]:
    g = _grid([run])
    a = run_assumptions(run, BASE)
    mb = microbatch_compute(run.model, run.cluster, run.setup, g, a)
    layers = run.model.num_layers / g.pp
    window = layers * (mb.layer_mix(run.model, "forward") + mb.layer_mix(run.model, "backward")
                       + mb.layer_mix(run.model, "recompute"))
    params = trainable_params_per_gpu(run.model, run.setup, g)
    wire, _ = _zero3_per_microbatch(params.dense, dp_group(run.cluster, g, a), layers)
    return float(wire[0]), float(window[0])


if __name__ == "__main__":
    section_1_and_2()
    section_3()
    fsdp_paper()
    narayanan_table_1()
    section_4()
    section_5()
