"""What the engine charges on set 5's Llama 3.1 8B full-training rows (MLPerf v5.1, Blackwell, CP 2 and TP 2 x CP 4)
and set 4's Hopper Llama 2 70B LoRA at TP 4 x CP 2, term by term, under whichever engine `shardwise` imports
(the shipped engine by pointing PYTHONPATH at a directory whose `shardwise` is main; E10 at branch kernelcost):

    PYTHONPATH=<dir with shardwise -> engine> python benchmarks/e10_8b_terms.py

Reads only (sets 4 and 5, seen; nothing written). Each term is measured by switching one assumption off:
"big-kernel fixed" = step - step(KERNEL_FIXED_S = 0) (GEMMs, attention, the ring's attention kernels), "small-kernel
fixed" = step - step(SMALL_KERNEL_FIXED_S = 0) (E10 only; the shipped engine has one fixed cost, so its column is
"-"), "memory-bound bytes" = step - step(HBM 1000x faster); "... total" columns are the collective with no overlap.
Then the two-layout fits (docs/performance.md, "what E10 leaves uncharged on the 8B full fine-tuning rows"):
for two runs of one recipe on one GPU, measured step = b x (predicted step without fixed costs) + k x (kernels
the engine counts) + c, solved for (b, k) with c = 0, and for (b, c) with k fixed.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from shardwise.engine.assumptions.compute import ATTENTION_BACKWARD_TIME_RATIO
from shardwise.engine.assumptions.performance import DEFAULT_ASSUMPTIONS as BASE
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.predict import _grid, predict, run_assumptions
from shardwise.engine.performance import step_time

HAS_SMALL = hasattr(BASE, "small_kernel_fixed_s")  # E10 splits the fixed cost; the shipped engine does not


def times(run, assume):
    return step_time(run.model, run.cluster, run.setup, _grid([run]), run_assumptions(run, assume))


def ms(x) -> float:
    return float(np.asarray(x).ravel()[0]) * 1e3


def breakdown(run) -> dict:
    t = times(run, BASE)
    step = ms(t.step)
    pred = predict([run])[0]
    out = {"measured": step * pred.tokens_per_gpu / run.measured_tokens_per_gpu, "predicted": step}
    out["big-kernel fixed"] = step - ms(times(run, replace(BASE, kernel_fixed_s=0.0)).step)
    out["small-kernel fixed"] = None
    if HAS_SMALL:
        out["small-kernel fixed"] = step - ms(times(run, replace(BASE, small_kernel_fixed_s=0.0)).step)
    out["memory-bound bytes"] = step - ms(times(run, replace(BASE, hbm_efficiency=BASE.hbm_efficiency * 1000)).step)
    out["attention fwd+bwd"] = ms(t.details["attention_s"]) * (1 + ATTENTION_BACKWARD_TIME_RATIO)  # forward only
    for name in ("compute", "tp_comm", "cp_comm", "dp_comm", "optimizer"):
        out[name] = ms(getattr(t, name))
    out["tp total"] = ms(times(run, replace(BASE, tp_overlap={k: 0.0 for k in BASE.tp_overlap})).tp_comm)
    out["cp total"] = ms(times(run, replace(BASE, cp_overlap=0.0)).cp_comm)
    out["dp total"] = ms(times(run, replace(BASE, dp_overlap={k: 0.0 for k in BASE.dp_overlap})).dp_comm)
    fixed = out["big-kernel fixed"] + (out["small-kernel fixed"] or 0.0)
    out["kernels"] = (out["big-kernel fixed"] / (BASE.kernel_fixed_s * 1e3)
                      + ((out["small-kernel fixed"] or 0.0) / (BASE.small_kernel_fixed_s * 1e3) if HAS_SMALL else 0.0))
    out["without fixed"] = step - fixed
    return out


def label(run) -> str:
    s = run.strategy
    return f"{run.source} {run.model.name} {run.cluster.gpu.name[:20]} x{run.cluster.num_gpus} TP{s.tp} CP{s.cp}"


def rows() -> list:
    picked, seen = [], set()
    for number, keep in ((5, lambda r: r.model.name.startswith("Llama-3.1-8B") and r.strategy.cp > 1),
                         (4, lambda r: r.setup.mode == "lora" and r.strategy.tp == 4 and r.strategy.cp == 2)):
        for run in JUDGED_EXTERNAL_SETS[number]():
            key = (run.cluster.gpu.name, run.cluster.num_gpus, run.strategy.tp, run.strategy.cp) if run.used else None
            if key and keep(run) and key not in seen:
                seen.add(key)
                picked.append(run)
    return picked


def two_layout_fit(a: dict, b: dict) -> str:
    (m1, r1, k1), (m2, r2, k2) = [(x["measured"], x["without fixed"], x["kernels"]) for x in (a, b)]
    scale, per_kernel = np.linalg.solve([[r1, k1], [r2, k2]], [m1, m2])
    text = f"b = {scale:.2f}, k = {per_kernel * 1e3:.1f} us per kernel"
    for k in (4e-3, 6e-3):  # ms per kernel
        s2, c = np.linalg.solve([[r1, 1.0], [r2, 1.0]], [m1 - k * k1, m2 - k * k2])
        text += f"; with k = {k * 1e3:.0f} us: b = {s2:.2f}, c = {c:.1f} ms per step"
    return text


def main() -> None:
    print(f"engine: {'E10 (split fixed cost)' if HAS_SMALL else 'shipped (one fixed cost)'}; ms per optimizer step")
    found = {}
    for run in rows():
        x = breakdown(run)
        found[(run.model.name, run.cluster.gpu.name, run.strategy.tp)] = x
        print(f"\n{label(run)}: measured {x['measured']:.1f}, predicted {x['predicted']:.1f} "
              f"({x['predicted'] / x['measured'] - 1:+.1%} step, "
              f"i.e. throughput {x['measured'] / x['predicted'] - 1:+.1%})")
        print("  " + ", ".join(f"{k} {v:.2f}" for k, v in x.items()
                               if k not in ("measured", "predicted") and v is not None))
    print("\nTwo-layout fits (same recipe and GPU):")
    v51 = [(gpu, found.get(("Llama-3.1-8B", gpu, 1)), found.get(("Llama-3.1-8B", gpu, 2)))
           for gpu in sorted({g for (_, g, _) in found})]
    for gpu, cp2, tp2cp4 in v51:
        if cp2 and tp2cp4:
            print(f"  8B {gpu[:20]}: TP1 CP2 vs TP2 CP4: {two_layout_fit(cp2, tp2cp4)}")
    lora = [r for r in JUDGED_EXTERNAL_SETS[5]() if r.used and r.source == "mlperf-training-v5.0"
            and "GB200" in r.cluster.gpu.name and r.cluster.num_gpus in (8, 72)]
    if len(lora) == 2:
        a, b = sorted(lora, key=lambda r: r.strategy.cp)
        print(f"  70B LoRA GB200 v5.0 NVIDIA: CP1 x8 vs CP8 x72: {two_layout_fit(breakdown(a), breakdown(b))}")


if __name__ == "__main__":
    main()
