"""Derive the 80 % error bands from the calibration residuals and check them on held-out runs.

    python benchmarks/fit_error_bands.py           # print bands and held-out coverage
    python benchmarks/fit_error_bands.py --write   # ... and regenerate engine/assumptions/error_bands.py

Throughput: the 10th and 90th percentiles of log(measured / predicted) tokens/s per GPU, per
regime (engine/calibration/regimes.py), taken on the runs whose group is NOT held out
(CalibrationRun.holdout); coverage is then counted on the held-out groups only, which neither
the engine's constants nor the bands have seen.
Calibrated: the same on the transfer check (engine/calibration/transfer.py: calibrate on the
smallest run of a family, predict the rest), bands from the families not held out, coverage on
the held-out families.
Memory: log(measured / predicted) peak memory on the runs that report it, per framework stack,
same split.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

import numpy as np

from shardwise.engine.assumptions.compute import gpu_generation
from shardwise.engine.calibration.regimes import regime_keys, stack_of
from shardwise.engine.calibration.report import build_report
from shardwise.engine.calibration.runs import used_runs
from shardwise.engine.calibration.transfer import families, hindsight_family, transfer_all

OUT = Path(__file__).resolve().parents[1] / "engine" / "assumptions" / "error_bands.py"
LOWER_Q, UPPER_Q = 0.10, 0.90
MIN_RUNS = 15  # a regime needs this many fitted-group runs before it gets its own band
MIN_MEMORY_RUNS = 8  # fewer runs report peak memory (torchtitan: 20, of which 12 in fitted groups)


def band(values: list[float]) -> tuple[float, float, int]:
    v = np.asarray(values, float)
    return float(np.quantile(v, LOWER_Q)), float(np.quantile(v, UPPER_Q)), len(v)


def bands_by_level(items: list[tuple[list[str], float]], min_runs: int = MIN_RUNS) -> dict[str, tuple[float, float, int]]:
    """items: (regime keys most specific first, log residual). Every key with >= min_runs gets a band."""
    pooled: dict[str, list[float]] = defaultdict(list)
    for keys, value in items:
        for k in keys:
            pooled[k].append(value)
    return {k: band(v) for k, v in sorted(pooled.items()) if len(v) >= min_runs}


def lookup(bands: dict, keys: list[str]) -> tuple[str, tuple[float, float, int]]:
    for k in keys:
        if k in bands:
            return k, bands[k]
    raise KeyError(keys)


def coverage(bands: dict, items: list[tuple[list[str], float]]) -> dict[str, tuple[int, int]]:
    """Per regime used: (held-out runs, runs inside their band)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for keys, value in items:
        k, (lo, hi, _) = lookup(bands, keys)
        out[k][0] += 1
        out[k][1] += int(lo <= value <= hi)
    return {k: (n, c) for k, (n, c) in sorted(out.items())}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    report = build_report(with_memory=True)
    runs = {r.key: r for r in used_runs()}

    def keys(key: str) -> list[str]:
        r = runs[key]
        return regime_keys(stack_of(r.host_framework), gpu_generation(r.cluster.gpu), r.model.moe is not None)

    fitted = [(keys(x.key), float(np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu)))
              for x in report.rows if not x.holdout]
    held = [(keys(x.key), float(np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu)))
            for x in report.rows if x.holdout]
    tp_bands = bands_by_level(fitted)
    tp_cov = coverage(tp_bands, held)

    transfer = transfer_all()
    # A calibrated band per stack and kind, where that stack's fitted families give enough runs
    # (PyTorch-native, nanotron); elsewhere (Megatron: a few Bridge runs; MoE) a calibrated
    # prediction keeps its uncalibrated regime band: no narrowing the data cannot justify.
    def cal_keys(key: str) -> list[str]:
        r = runs[key]
        return [f"calibrated|{stack_of(r.host_framework)}|{'moe' if r.model.moe is not None else 'dense'}"]

    cal_fit = [(cal_keys(r.key), float(np.log(r.measured / r.calibrated))) for f in transfer if not f.held_out
               for r in f.rows]
    cal_band = bands_by_level(cal_fit)
    # Held-out families: their calibrated predictions against the band they would get (the
    # calibrated one, or the regime band where there is none).
    cal_held = []
    for f in transfer:
        if not f.held_out:
            continue
        for r in f.rows:
            value = float(np.log(r.measured / r.calibrated))
            ck = cal_keys(r.key)
            if ck[0] in cal_band:
                cal_held.append((ck, value))
            else:
                regime, _ = lookup(tp_bands, keys(r.key))
                cal_held.append(([f"regime band {regime}"], value))
    combined = {**cal_band, **{k[0]: tp_bands[k[0].removeprefix("regime band ")] for k, _ in cal_held
                               if k[0].startswith("regime band ")}}
    cal_cov = coverage(combined, cal_held)

    def mem_keys(key: str) -> list[str]:
        return [stack_of(runs[key].host_framework)]

    mem_rows = [x for x in report.rows if x.memory_error is not None]
    mem_fit = [(mem_keys(x.key), float(np.log(x.measured_memory_gib / x.predicted_memory_gib)))
               for x in mem_rows if not x.holdout]
    mem_held = [(mem_keys(x.key), float(np.log(x.measured_memory_gib / x.predicted_memory_gib)))
                for x in mem_rows if x.holdout]
    mem_bands = bands_by_level(mem_fit, MIN_MEMORY_RUNS)
    mem_cov = coverage(mem_bands, mem_held)

    for title, b, cov in (("throughput", tp_bands, tp_cov), ("calibrated", cal_band, cal_cov),
                          ("memory", mem_bands, mem_cov)):
        print(f"{title} bands (log measured/predicted, 10th-90th pct, fitted runs):")
        for k, (lo, hi, n) in b.items():
            print(f"  {k:<28} {np.expm1(lo):+6.1%} .. {np.expm1(hi):+6.1%}  n={n}")
        n = sum(v[0] for v in cov.values())
        c = sum(v[1] for v in cov.values())
        print(f"  held-out coverage: {c}/{n} = {c / max(n, 1):.1%}; by regime: " +
              ", ".join(f"{k} {v[1]}/{v[0]} ({v[1] / v[0]:.0%})" for k, v in cov.items()))
    rows = [row for runs in families().values() for row in hindsight_family(runs)]
    before = np.mean([abs(p / m - 1) for m, p, _ in rows])
    after = np.mean([abs(c / m - 1) for m, _, c in rows])
    print(f"ceiling of one-scale calibration (fitted in hindsight on every run of each family): "
          f"MAPE {before:.1%} -> {after:.1%} (x{after / before:.2f}) over {len(rows)} runs")
    if args.write:
        write(tp_bands, tp_cov, cal_band, cal_cov, mem_bands, mem_cov)


def _fmt(b: dict) -> str:
    return "{\n" + "".join(f"    {k!r}: ({lo:.4f}, {hi:.4f}, {n}),\n" for k, (lo, hi, n) in b.items()) + "}"


def write(tp, tp_cov, cal, cal_cov, mem, mem_cov) -> None:
    OUT.write_text(f'''"""Error bands — GENERATED by benchmarks/fit_error_bands.py, do not edit by hand.

Each band is (10th, 90th percentile of log(measured / predicted), runs): an 80 % interval for
a prediction is predicted × exp(band). Derived on the calibration runs whose group is not
held out; *_COVERAGE is (held-out runs, held-out runs inside their band) per regime used, the
honest check of the 80 %. engine/calibration/regimes.py names the regimes.
"""

# Tokens/s per GPU, uncalibrated engine, by regime (most specific with >= {MIN_RUNS} runs wins).
THROUGHPUT_BANDS = {_fmt(tp)}
THROUGHPUT_COVERAGE = {tp_cov!r}

# After a CalibrationProfile fitted on one run of the same GPU/precision/framework (transfer check).
CALIBRATED_BANDS = {_fmt(cal)}
CALIBRATED_COVERAGE = {cal_cov!r}

# Peak memory per GPU, by framework stack, on the runs that report it.
MEMORY_BANDS = {_fmt(mem)}
MEMORY_COVERAGE = {mem_cov!r}
''')
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
