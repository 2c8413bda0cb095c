"""Derive the 80 % error bands from the calibration residuals and check them on held-out runs.

    python benchmarks/fit_error_bands.py           # print bands and held-out coverage
    python benchmarks/fit_error_bands.py --write   # ... and regenerate engine/assumptions/error_bands.py

Throughput: the 10th and 90th percentiles of log(measured / predicted) tokens/s per GPU, per
regime (engine/calibration/regimes.py), taken on the runs whose group is NOT held out
(CalibrationRun.holdout), each group counting once (engine/calibration/band_statistics.py: a
band is for a new group, and a few groups hold most runs); coverage is then counted on the
held-out groups only, which neither the engine's constants nor the bands have seen, with a 95 %
CI from resampling held-out groups.
Calibrated: the same on the transfer check (engine/calibration/transfer.py: calibrate on the
smallest run of a family, predict the rest), bands from the families not held out (each family
once), coverage on the held-out families.
Memory: log(measured / predicted) peak memory on the runs that report it, per framework stack,
same split and weighting.
Older releases: the Megatron-Bridge rows measured with an older container release (excluded from
the fit and the bands) — an out-of-sample check the bands have never seen, with and without
calibrating on one run of each release.
"""

from __future__ import annotations

import argparse
import zlib
from collections import defaultdict
from pathlib import Path

import numpy as np

from shardwise.engine.calibration.band_statistics import (
    MIN_MEMORY_RUNS, MIN_RUNS, TOTAL, Item, bands_by_level, cluster_bootstrap_ci, regime_of)
from shardwise.engine.calibration.regimes import stack_of
from shardwise.engine.calibration.report import build_report
from shardwise.engine.calibration.runs import CalibrationRun, load_runs
from shardwise.engine.calibration.transfer import (
    families, hindsight_family, transfer_all, transfer_older_releases)

OUT = Path(__file__).resolve().parents[1] / "engine" / "assumptions" / "error_bands.py"

def lookup(bands: dict, keys: list[str]) -> tuple[str, tuple[float, float, int]]:
    for k in keys:
        if k in bands:
            return k, bands[k]
    raise KeyError(keys)


def coverage(bands: dict, items: list[Item]) -> tuple[dict[str, tuple[int, int]], dict[str, tuple[float, float]]]:
    """Per regime used: (held-out runs, runs inside their band); and the cluster-bootstrap 95 % CI of
    each share, plus the pooled one under TOTAL."""
    hits: dict[str, list[tuple[bool, str]]] = defaultdict(list)
    for keys, value, cluster in items:
        k, (lo, hi, _) = lookup(bands, keys)
        hits[k].append((lo <= value <= hi, cluster))
    counts = {k: (len(h), sum(ok for ok, _ in h)) for k, h in sorted(hits.items())}
    ci = {k: cluster_bootstrap_ci([ok for ok, _ in h], [c for _, c in h]) for k, h in sorted(hits.items())}
    every = [x for h in hits.values() for x in h]
    if every:
        ci[TOTAL] = cluster_bootstrap_ci([ok for ok, _ in every], [c for _, c in every])
    return counts, ci


def calibrated_key(run: CalibrationRun) -> str:
    return f"calibrated|{stack_of(run.host_framework)}|{'moe' if run.model.moe is not None else 'dense'}"


def calibrated_items(families_, runs, cal_band, tp_bands) -> tuple[list[Item], dict]:
    """Calibrated predictions against the band they would get (intervals.py): the calibrated one of
    their stack, or their regime band where there is none. Returns the items and the bands used."""
    items, used = [], dict(cal_band)
    for f in families_:
        for r in f.rows:
            value = float(np.log(r.measured / r.calibrated))
            ck = calibrated_key(runs[r.key])
            if ck not in cal_band:
                regime, b = lookup(tp_bands, regime_of(runs[r.key]))
                ck = f"regime band {regime}"
                used[ck] = b
            items.append(([ck], value, f.family))
    return items, used


def easier_check(report, runs) -> None:
    """Are the held-out groups just easier? Per regime: groups, multi-node share and the group-weighted
    mean |log residual| of fitted vs held-out runs."""
    print("fitted vs held-out runs by regime (are the held-out groups easier?):")
    by: dict[tuple[str, bool], list] = defaultdict(list)
    for x in report.rows:
        by[(regime_of(runs[x.key])[0], x.holdout)].append(x)
    for regime in sorted({k for k, _ in by}):
        parts = []
        for held in (False, True):
            xs = by.get((regime, held), [])
            if not xs:
                parts.append(f"{'held' if held else 'fitted'}: none")
                continue
            size = defaultdict(int)
            for x in xs:
                size[x.group] += 1
            w = np.array([1 / size[x.group] for x in xs])
            err = np.abs([np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu) for x in xs])
            multi = np.mean([runs[x.key].cluster.num_gpus > runs[x.key].cluster.gpus_per_node for x in xs])
            parts.append(f"{'held' if held else 'fitted'} {len(xs)} runs/{len(size)} groups, "
                         f"{multi:.0%} multi-node, |err| {np.expm1(np.average(err, weights=w)):.1%}")
        print(f"  {regime:<26} " + "; ".join(parts))


def rotation_check(report, runs) -> None:
    """Is the held-out figure typical of the split? The same bands derived with each of the three
    CRC32 folds of the groups held out in turn (runs.py holds out fold 0). Folds 1 and 2 were in the
    fit of the engine's constants, which can only make them look easier, so this checks the band
    method against split luck, not the engine."""
    def fold(group: str) -> int:
        return zlib.crc32(group.encode()) % 3

    def item(x) -> Item:
        return regime_of(runs[x.key]), float(np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu)), x.group

    parts, every = [], []
    for f in range(3):
        bands = bands_by_level([item(x) for x in report.rows if fold(x.group) != f])
        for keys, value, group in (item(x) for x in report.rows if fold(x.group) == f):
            lo, hi, _ = lookup(bands, keys)[1]
            every.append((lo <= value <= hi, group))
        inside = [ok for ok, g in every if fold(g) == f]
        parts.append(f"fold {f} {sum(inside)}/{len(inside)} ({np.mean(inside):.0%})")
    lo, hi = cluster_bootstrap_ci([ok for ok, _ in every], [g for _, g in every])
    print(f"each fold of groups held out in turn (fold 0 is the held-out split): {', '.join(parts)}; "
          f"all {sum(ok for ok, _ in every)}/{len(every)} ({np.mean([ok for ok, _ in every]):.1%}, 95 % CI {lo:.0%}-{hi:.0%})")


def _print(title: str, bands: dict, counts: dict, ci: dict, clusters: dict | None = None) -> None:
    print(f"{title} bands (log measured/predicted, 10th-90th pct, fitted runs, each cluster once):")
    for k, (lo, hi, n) in bands.items():
        extra = f" in {clusters[k]} clusters" if clusters and k in clusters else ""
        print(f"  {k:<28} {np.expm1(lo):+6.1%} .. {np.expm1(hi):+6.1%}  n={n}{extra}")
    print("  " + coverage_line("held-out coverage", counts, ci))


def coverage_line(title: str, counts: dict, ci: dict) -> str:
    n = sum(v[0] for v in counts.values())
    c = sum(v[1] for v in counts.values())
    lo, hi = ci.get(TOTAL, (float("nan"), float("nan")))
    return (f"{title}: {c}/{n} = {c / max(n, 1):.1%} (95 % CI {lo:.0%}-{hi:.0%}); by regime: " +
            ", ".join(f"{k} {v[1]}/{v[0]} ({v[1] / v[0]:.0%}, {ci[k][0]:.0%}-{ci[k][1]:.0%})" for k, v in counts.items()))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    report = build_report(with_memory=True)
    runs = {r.key: r for r in load_runs()}

    def items(rows) -> list[Item]:
        return [(regime_of(runs[x.key]), float(np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu)), x.group)
                for x in rows]

    fitted_rows = [x for x in report.rows if not x.holdout]
    tp_bands = bands_by_level(items(fitted_rows))
    tp_cov, tp_ci = coverage(tp_bands, items([x for x in report.rows if x.holdout]))
    groups: dict[str, set] = defaultdict(set)
    for keys, _, g in items(fitted_rows):
        for k in keys:
            groups[k].add(g)

    # A calibrated band per stack and kind, where that stack's fitted families give enough runs
    # (PyTorch-native, nanotron); elsewhere (Megatron: a few Bridge runs; MoE) a calibrated
    # prediction keeps its uncalibrated regime band: no narrowing the data cannot justify.
    transfer = transfer_all()
    cal_fit = [([calibrated_key(runs[r.key])], float(np.log(r.measured / r.calibrated)), f.family)
               for f in transfer if not f.held_out for r in f.rows]
    cal_band = bands_by_level(cal_fit)
    cal_held, combined = calibrated_items([f for f in transfer if f.held_out], runs, cal_band, tp_bands)
    cal_cov, cal_ci = coverage(combined, cal_held)

    mem_rows = [x for x in report.rows if x.memory_error is not None]

    def mem_items(rows) -> list[Item]:
        return [([stack_of(runs[x.key].host_framework)], float(np.log(x.measured_memory_gib / x.predicted_memory_gib)),
                 x.group) for x in rows]

    mem_bands = bands_by_level(mem_items([x for x in mem_rows if not x.holdout]), MIN_MEMORY_RUNS)
    mem_cov, mem_ci = coverage(mem_bands, mem_items([x for x in mem_rows if x.holdout]))

    # Older Megatron-Bridge releases: never used by the fit or the bands.
    older = transfer_older_releases()
    old_items = [(regime_of(runs[r.key]), float(np.log(r.measured / r.uncalibrated)), f.family)
                 for f in older for r in f.rows]
    old_cov, old_ci = coverage(tp_bands, old_items)
    old_cal, old_combined = calibrated_items(older, runs, cal_band, tp_bands)
    old_cal_cov, old_cal_ci = coverage(old_combined, old_cal)

    easier_check(report, runs)
    rotation_check(report, runs)
    _print("throughput", tp_bands, tp_cov, tp_ci, {k: len(v) for k, v in groups.items()})
    _print("calibrated", cal_band, cal_cov, cal_ci)
    _print("memory", mem_bands, mem_cov, mem_ci)
    print(coverage_line("older Megatron-Bridge releases (never fitted), uncalibrated", old_cov, old_ci))
    print(coverage_line("older Megatron-Bridge releases, calibrated on one run of each", old_cal_cov, old_cal_ci))
    rows = [row for runs_ in families().values() for row in hindsight_family(runs_)]
    before = np.mean([abs(p / m - 1) for m, p, _ in rows])
    after = np.mean([abs(c / m - 1) for m, _, c in rows])
    print(f"ceiling of one-scale calibration (fitted in hindsight on every run of each family): "
          f"MAPE {before:.1%} -> {after:.1%} (x{after / before:.2f}) over {len(rows)} runs")
    if args.write:
        write(tp_bands, tp_cov, tp_ci, cal_band, cal_cov, cal_ci, mem_bands, mem_cov, mem_ci,
              old_cov, old_ci, old_cal_cov, old_cal_ci)


def _fmt(b: dict) -> str:
    return "{\n" + "".join(f"    {k!r}: ({lo:.4f}, {hi:.4f}, {n}),\n" for k, (lo, hi, n) in b.items()) + "}"


def _ci(ci: dict) -> str:
    return "{" + ", ".join(f"{k!r}: ({lo:.3f}, {hi:.3f})" for k, (lo, hi) in ci.items()) + "}"


def write(tp, tp_cov, tp_ci, cal, cal_cov, cal_ci, mem, mem_cov, mem_ci, old_cov, old_ci, old_cal_cov, old_cal_ci) -> None:
    OUT.write_text(f'''"""Error bands — GENERATED by benchmarks/fit_error_bands.py, do not edit by hand.

Each band is (10th, 90th percentile of log(measured / predicted), runs): an 80 % interval for
a prediction is predicted × exp(band). Derived on the calibration runs whose group is not
held out, each group (transfer check: each family) counting once — a band is for a new group,
and a few groups hold most of the runs (engine/calibration/band_statistics.py). *_COVERAGE is
(held-out runs, held-out runs inside their band) per regime used, the honest check of the 80 %;
*_COVERAGE_CI its 95 % CI from resampling held-out groups (families), per regime and pooled
({TOTAL!r}). engine/calibration/regimes.py names the regimes.
"""

# Tokens/s per GPU, uncalibrated engine, by regime (most specific with >= {MIN_RUNS} runs wins).
THROUGHPUT_BANDS = {_fmt(tp)}
THROUGHPUT_COVERAGE = {tp_cov!r}
THROUGHPUT_COVERAGE_CI = {_ci(tp_ci)}

# After a CalibrationProfile fitted on one run of the same GPU/precision/framework (transfer check).
CALIBRATED_BANDS = {_fmt(cal)}
CALIBRATED_COVERAGE = {cal_cov!r}
CALIBRATED_COVERAGE_CI = {_ci(cal_ci)}

# Peak memory per GPU, by framework stack, on the runs that report it.
MEMORY_BANDS = {_fmt(mem)}
MEMORY_COVERAGE = {mem_cov!r}
MEMORY_COVERAGE_CI = {_ci(mem_ci)}

# Out-of-sample check: Megatron-Bridge rows of older container releases (never fitted, never in a
# band), uncalibrated and after calibrating on one run of each release (transfer_older_releases).
OLDER_RELEASE_COVERAGE = {old_cov!r}
OLDER_RELEASE_COVERAGE_CI = {_ci(old_ci)}
OLDER_RELEASE_CALIBRATED_COVERAGE = {old_cal_cov!r}
OLDER_RELEASE_CALIBRATED_COVERAGE_CI = {_ci(old_cal_ci)}
''')
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
