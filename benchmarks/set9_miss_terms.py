"""What the engine charges on external set 9's three misses, term by term, and what-ifs that replace one
assumption, setup field or cluster link for one run (docs/performance.md, "Lead for the next session: set 9's
misses (session 13, diagnosis only)").

    PYTHONPATH=<dir whose shardwise is this checkout> python benchmarks/set9_miss_terms.py

Reads only: set 9 (seen since session 12's first run), external sets 1-8 and the calibration runs. Set 10 is never
loaded. Nothing is written, nothing is fitted, no engine formula or constant changes: every what-if is a
dataclasses.replace of the PerformanceAssumptions, or a model_copy of the run's setup or cluster, for that call.

Breakdown columns (ms per optimizer step, the engine's prediction with the shipped constants):
  measured      the run's step: predicted step x predicted tokens/s / measured tokens/s
  attention     the attention core, forward + backward (2.5x) + its recompute under full recompute
  GEMM          step - step(BF16 and FP8 GEMM efficiency x1000): the GEMMs' compute-bound time, all passes
  bytes         step - step(HBM x1000): memory-bound work (norms, activations, permutation, casts)
  fixed         step - step(no per-kernel fixed costs)
  MoE host      step - step(MoE host time 0): the dropless MoE layer's exposed host time
  TP/EP/DP      exposed (total with no overlap); optimizer = AdamW bytes; phase = Megatron's optimizer phase
Terms can overlap (a removed GEMM can uncover a hidden collective), so the columns need not add up to the step.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from shardwise.engine.assumptions.compute import ATTENTION_BACKWARD_TIME_RATIO
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS as BASE
from shardwise.engine.assumptions.performance import PerformanceAssumptions
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.out_of_fold import load_out_of_fold
from shardwise.engine.calibration.predict import _grid, predict, run_assumptions
from shardwise.engine.calibration.runs import used_runs
from shardwise.engine.hardware_catalog import get_network
from shardwise.engine.performance import step_time

SEEN_SETS = (1, 2, 3, 4, 5, 6, 7, 8, 9)  # never 10: it has had no first run
MISSES = {"distflashattn-2023": "DistFlashAttn's Megatron-LM baseline",
          "gh:pytorch/torchtitan#1690": "torchtitan#1690",
          "gh:nvidia-nemo/megatron-bridge#5123": "Megatron-Bridge#5123"}
# Calibration rows of the same GPU, plan and release measured eager and with torch.compile (torchtitan's Dec 2024
# benchmark file, Llama 3.1 8B FSDP on 8 and 128 H100 96GB): measured_runs.csv 218/219 and 221/222.
COMPILE_PAIRS = (("measured_runs.csv:218", "measured_runs.csv:219"), ("measured_runs.csv:221", "measured_runs.csv:222"))
BRIDGE_FP8_SIBLING = "measured_runs.csv:329"  # Qwen3-30B-A3B, 16 H100, EP 16, FP8, 26.06: the same layout


def ms(x) -> float:
    return float(np.asarray(x).ravel()[0]) * 1e3


def times(run, assume: PerformanceAssumptions = BASE):
    return step_time(run.model, run.cluster, run.setup, _grid([run]), run_assumptions(run, assume))


def error(run, assume: PerformanceAssumptions = BASE) -> float:
    return predict([run], assume)[0].error


def with_setup(run, **update):
    return replace(run, setup=run.setup.model_copy(update=update))


def breakdown(run) -> dict:
    t = times(run)
    step = ms(t.step)
    out = {"measured": step * (1.0 + error(run)), "predicted": step}  # tokens per step are fixed
    recompute_attention = 1.0 if run.strategy.recompute == "full" else 0.0
    out["attention"] = ms(t.details["attention_s"]) * (1 + ATTENTION_BACKWARD_TIME_RATIO + recompute_attention)
    fast_gemms = replace(BASE, gemm_efficiency={k: v * 1e3 for k, v in BASE.gemm_efficiency.items()},
                         fp8_gemm_efficiency={k: v * 1e3 for k, v in BASE.fp8_gemm_efficiency.items()})
    out["GEMM"] = step - ms(times(run, fast_gemms).step)
    out["bytes"] = step - ms(times(run, replace(BASE, hbm_efficiency=BASE.hbm_efficiency * 1e3)).step)
    out["fixed"] = step - ms(times(run, replace(BASE, kernel_fixed_s=0.0, small_kernel_fixed_s=0.0)).step)
    out["MoE host"] = step - ms(times(run, replace(BASE, moe_host_time_per_expert_fwd=0.0)).step)
    out["compute"] = ms(t.compute)
    no_overlap = replace(BASE, tp_overlap={k: 0.0 for k in BASE.tp_overlap},
                         dp_overlap={k: 0.0 for k in BASE.dp_overlap}, dp_overlap_zero1={},
                         fsdp_overlap=0.0, ep_overlap=0.0)
    flat = times(with_setup(run, moe_a2a_overlap=False), no_overlap)
    for name in ("tp_comm", "ep_comm", "dp_comm"):
        out[name] = f"{ms(getattr(t, name)):.0f} ({ms(getattr(flat, name)):.0f})"
    out["optimizer"] = ms(t.optimizer)
    out["phase"] = ms(t.optimizer_phase)
    return out


def label(run) -> str:
    s = run.strategy
    extra = f" CP{s.cp}" if s.cp > 1 else ""
    return (f"{run.model.name} {run.cluster.gpu.id} x{run.cluster.num_gpus} TP{s.tp}{extra} EP{s.ep} "
            f"mb{s.micro_batch} seq {run.setup.seq_len} {run.setup.precision} {run.strategy.recompute}")


def print_breakdowns(runs) -> None:
    cols = ("measured", "predicted", "compute", "attention", "GEMM", "bytes", "fixed", "MoE host",
            "tp_comm", "ep_comm", "dp_comm", "optimizer", "phase")
    print("| run | " + " | ".join(cols) + " | error (tokens/s) |")
    print("|---|" + "---|" * (len(cols) + 1))
    for run in runs:
        b = breakdown(run)
        cells = [b[c] if isinstance(b[c], str) else f"{b[c]:,.0f}" for c in cols]
        print(f"| {MISSES.get(run.source, run.source)}: {label(run)} | " + " | ".join(cells)
              + f" | {error(run):+.1%} |")


def solve(run, make, lo: float, hi: float) -> float:
    """The value x in [lo, hi] at which the prediction with make(x) matches the measured throughput (bisection;
    the error must change sign over the interval, else nan)."""
    def f(x: float) -> float:
        return error(run, make(x))

    a, b = f(lo), f(hi)
    if np.sign(a) == np.sign(b):
        return float("nan")
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        m = f(mid)
        if np.sign(m) == np.sign(a):
            lo, a = mid, m
        else:
            hi = mid
    return 0.5 * (lo + hi)


def ampere_attention(x: float) -> PerformanceAssumptions:
    return replace(BASE, attention_efficiency={**BASE.attention_efficiency, "ampere": x})


def distflashattn_whatifs(runs) -> None:
    print("\n## 1. DistFlashAttn's Megatron-LM baseline (LLaMA-7B, TP 8, 8 A100)")
    print(f"shipped A100 attention efficiency {BASE.attention_efficiency['ampere']:.4f}")
    implied = []
    for run in runs:
        x = solve(run, ampere_attention, 0.2, 0.95)
        implied.append(x)
        sel = with_setup(run)
        sel = replace(sel, strategy=run.strategy.model_copy(update={"recompute": "selective"}))
        x_sel = solve(sel, ampere_attention, 0.05, 0.95)
        b = breakdown(run)
        print(f"  seq {run.setup.seq_len:7d}: error {error(run):+.1%}; attention {b['attention'] / b['predicted']:.0%} "
              f"of the predicted step; implied A100 attention efficiency {x:.3f} (full recompute), "
              f"{x_sel:.3f} (if selective: no attention recompute); TP overlap 0.85 instead of none: "
              f"{error(replace(run, tp_comm_overlap=True)):+.1%}")
    mean = float(np.mean(implied))
    print(f"  one efficiency for the three lengths, their mean {mean:.3f}: errors "
          + ", ".join(f"{error(r, ampere_attention(mean)):+.1%}" for r in runs))
    print(f"  without causal halving the implied efficiency would double: {2 * mean:.2f} of peak (impossible)")


def a100_attention_moves(value: float) -> None:
    """Median signed error of every seen A100 run, shipped vs A100 attention efficiency `value`, by source."""
    print(f"\n  Seen A100 runs with the A100 attention efficiency at {value:.2f} (all A100 runs, no other change):")
    oof = {o.key: o.predicted_tokens_per_gpu for o in load_out_of_fold()}
    groups: dict[str, list[tuple[float, float]]] = {}
    cal = [r for r in used_runs() if r.key in oof and r.cluster.gpu.id.startswith("a100")]
    for run, old, new in zip(cal, predict(cal), predict(cal, ampere_attention(value))):
        before = oof[run.key] / run.measured_tokens_per_gpu - 1
        after = oof[run.key] * new.tokens_per_gpu / old.tokens_per_gpu / run.measured_tokens_per_gpu - 1
        groups.setdefault(f"calibration (OOF) {run.source}", []).append((before, after))
    for number in SEEN_SETS:
        ext = [r for r in JUDGED_EXTERNAL_SETS[number]() if r.used and r.cluster.gpu.id.startswith("a100")]
        for run, old, new in zip(ext, predict(ext), predict(ext, ampere_attention(value))):
            groups.setdefault(f"set {number} {run.source}", []).append((old.error, new.error))
    for name, pairs in sorted(groups.items()):
        b, a = np.array(pairs).T
        print(f"    {name[:70]:70s} {len(pairs):3d} runs: median {np.median(b):+.1%} -> {np.median(a):+.1%}, "
              f"MAPE {np.mean(np.abs(b)):.1%} -> {np.mean(np.abs(a)):.1%}")


def with_link(run, intra_id: str | None = None, gpus_per_node: int | None = None, network_id: str | None = None):
    gpu = run.cluster.gpu.model_copy(update={"intra_node": get_network(intra_id)}) if intra_id else run.cluster.gpu
    update = {"gpu": gpu}
    if gpus_per_node:
        update["gpus_per_node"] = gpus_per_node
    if network_id:
        update["network"] = get_network(network_id)
    return replace(run, cluster=run.cluster.model_copy(update=update))


def eager(factor: float) -> PerformanceAssumptions:
    """Compute slowed by `factor` (GEMMs, attention and memory-bound work; fixed costs kept): torch.compile off."""
    return replace(BASE, pytorch_gemm_factor=BASE.pytorch_gemm_factor / factor,
                   attention_efficiency={k: v / factor for k, v in BASE.attention_efficiency.items()},
                   hbm_efficiency=BASE.hbm_efficiency / factor)


def torchtitan_whatifs(runs) -> None:
    print("\n## 2. torchtitan#1690 (Qwen3-32B, H100 96GB 500 W)")
    cal = {r.key: r for r in used_runs()}
    factors = []
    for eager_key, compiled_key in COMPILE_PAIRS:
        e, c = cal[eager_key], cal[compiled_key]
        factors.append(c.measured_tokens_per_gpu / e.measured_tokens_per_gpu)
        print(f"  compile pair {eager_key}/{compiled_key.split(':')[1]} ({e.cluster.num_gpus} GPUs): measured "
              f"{e.measured_tokens_per_gpu:.0f} eager, {c.measured_tokens_per_gpu:.0f} compiled (x{factors[-1]:.3f}); "
              f"engine errors {error(e):+.1%} / {error(c):+.1%} (one prediction for both)")
    factor = float(np.mean(factors))
    nvlink = BASE.bandwidth_fraction["nvlink"]
    for run in runs:
        tp = run.strategy.tp
        line = f"  {label(run)}: error {error(run):+.1%}"
        if tp == 1:
            print(line + "; (compiled run)")
            continue
        line += f"; eager x{factor:.3f}: {error(run, eager(factor)):+.1%}"
        x = solve(run, lambda f: replace(eager(factor), bandwidth_fraction={**BASE.bandwidth_fraction, "nvlink": f}),
                  0.02, nvlink)
        line += (f"; then the NVLink fraction that matches: {x:.3f} (shipped {nvlink:.3f}, "
                 f"TP busbw {x * 450:.0f} GB/s vs {nvlink * 450:.0f})")
        line += f"; whole node on PCIe Gen5: {error(with_link(run, 'pcie5')):+.1%}"
        line += (f"; NVLink-bridge pairs (fast domain 2, PCIe Gen5 between pairs): "
                 f"{error(with_link(run, gpus_per_node=2, network_id='pcie5')):+.1%}")
        print(line)
    run8 = next(r for r in runs if r.strategy.tp == 1)
    print(f"  8-GPU FSDP run on PCIe Gen5 (whole node): {error(with_link(run8, 'pcie5')):+.1%}; "
          f"in NVLink pairs: {error(with_link(run8, gpus_per_node=2, network_id='pcie5')):+.1%}")


def bridge_whatifs(runs) -> None:
    print("\n## 3. Megatron-Bridge#5123 (Qwen3-30B-A3B, 16 H100, EP 16, BF16, HybridEP)")
    run = runs[0]
    step = breakdown(run)["predicted"]
    bf16 = with_setup(run, grad_reduce_dtype="bf16")
    print(f"  parsed setup: dispatcher {run.setup.moe_dispatcher}, a2a overlap {run.setup.moe_a2a_overlap}, "
          f"graphs {run.setup.cuda_graphs}, gradient reduction {run.setup.grad_reduce_dtype}")
    print(f"  BF16 gradient reduction: {error(bf16):+.1%} (step {ms(times(bf16).step) - step:+.1f} ms)")
    for name, r in (("alltoall dispatcher", with_setup(run, moe_dispatcher="alltoall")),
                    ("no EP-A2A overlap", with_setup(run, moe_a2a_overlap=False)),
                    ("alltoall, no overlap", with_setup(run, moe_dispatcher="alltoall", moe_a2a_overlap=False))):
        print(f"  {name}: {error(r):+.1%} (step {ms(times(r).step) - step:+.1f} ms)")
    no_host = replace(BASE, moe_host_time_per_expert_fwd=0.0)
    print(f"  MoE host time 0 (as if captured or sync-free): {error(run, no_host):+.1%}; "
          f"with BF16 reduction too: {error(bf16, no_host):+.1%}")
    x = solve(run, lambda us: replace(BASE, moe_host_time_per_expert_fwd=us * 1e-6), 0.0,
              BASE.moe_host_time_per_expert_fwd * 1e6)
    print(f"  MoE host time per local expert that matches: {x:.0f} us (shipped "
          f"{BASE.moe_host_time_per_expert_fwd * 1e6:.0f} us)")
    sib = next(r for r in used_runs() if r.key == BRIDGE_FP8_SIBLING)
    oof = {o.key: o.predicted_tokens_per_gpu for o in load_out_of_fold()}[sib.key]
    print(f"  FP8 sibling {sib.key} ({sib.release}): measured {sib.measured_tokens_per_gpu:.0f}, engine "
          f"{error(sib):+.1%} (OOF {oof / sib.measured_tokens_per_gpu - 1:+.1%}), setup dispatcher "
          f"{sib.setup.moe_dispatcher}, overlap {sib.setup.moe_a2a_overlap}, graphs {sib.setup.cuda_graphs}; "
          f"#5123 measured {run.measured_tokens_per_gpu:.0f} "
          f"(x{run.measured_tokens_per_gpu / sib.measured_tokens_per_gpu:.2f})")
    print_breakdowns([sib])


def main() -> None:
    runs = [r for r in JUDGED_EXTERNAL_SETS[9]() if r.used and r.source in MISSES]
    print("# Set 9's misses, term by term (engine output on seen rows; ms per optimizer step)\n")
    print_breakdowns(runs)
    distflashattn_whatifs([r for r in runs if r.source == "distflashattn-2023"])
    a100_attention_moves(0.54)
    torchtitan_whatifs([r for r in runs if r.source == "gh:pytorch/torchtitan#1690"])
    bridge_whatifs([r for r in runs if r.source == "gh:nvidia-nemo/megatron-bridge#5123"])


if __name__ == "__main__":
    main()
