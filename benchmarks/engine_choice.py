"""Which engine ships, and which band method: the figures a protocol's judge decides on, over several
judged external sets pooled (docs/performance.md, "Protocol for session 10", "... 11", "... 12" and "... 13").

    python benchmarks/engine_choice.py --sets 6 7 --json OUT.json
    python benchmarks/engine_choice.py --sets 9 10   # pooled over both sets, and each set on its own line

Run once with the shipped engine and once with the candidate on PYTHONPATH; the engine that ships is the
one with the lower mean |log(predicted / measured)| over the sets' used runs, each group once (a group is
one set's: the same configuration in two sets is two clusters' runs). Beside it: the same per set and per
source, and each band method's coverage and mean interval score (Gneiting & Raftery 2007, eq. 43, log
residuals, each group once) with the band the product shows (intervals.throughput_band, widening included),
the methods' tables computed from this engine's out-of-fold residuals (external_check.method_tables): pooled, per set,
per source and per regime (the run's own most specific), each group once. Session 12's rule (unchanged in session 13)
reads coverage first (a method is eligible if it holds 75-85 % of the set's used runs), then the interval score, among
the protocol's candidates only (CANDIDATES); v3 is printed beside them for reference, not a candidate. With several
sets, the rule is read off each set on its own (a judge is one set's first run) and the shipped method's coverage
pooled over the sets is printed as item 2's figure. This script prints the figures and decides nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from band_rule import item_2, readout  # noqa: E402
from external_check import method_tables  # noqa: E402

from shardwise.engine.assumptions.error_bands import THROUGHPUT_BAND_METHOD  # noqa: E402
from shardwise.engine.calibration.band_methods import in_sample  # noqa: E402
from shardwise.engine.calibration.band_statistics import cluster_weights, interval_score  # noqa: E402
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS  # noqa: E402
from shardwise.engine.calibration.external_check import share  # noqa: E402
from shardwise.engine.calibration.intervals import throughput_band  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.regimes import scenario_regime_keys  # noqa: E402

# The session 13 protocol's candidates: the shipped method (v10) and its challengers v11 and v12, each judged alike
# (coverage first, the interval score second). v3 (shipped in sessions 10-11) is printed beside them for reference and
# is no candidate. Session 10's pair was ("v3", "v5"), session 11's ("v3", "v8"), session 12's ("v3", "v9", "v10"), all
# candidates; their stored outputs (benchmarks/results/engine_choice_session1*.json) keep those keys (bands_v3, ...).
CANDIDATES = ("v10", "v11", "v12")
REFERENCE = ("v3",)
METHODS = CANDIDATES + REFERENCE  # every method whose figures are computed and printed


def mean_abs_log_each_group_once(log_errors: list[float], groups: list[str]) -> float:
    return float(np.average(np.abs(log_errors), weights=cluster_weights(groups)))


def judge(sets: list[int]) -> dict:
    runs = [(n, r) for n in sets for r in JUDGED_EXTERNAL_SETS[n]() if r.used]
    empty = [n for n in sets if not any(m == n for m, _ in runs)]
    if empty:
        sys.exit(f"engine_choice: set(s) {', '.join(map(str, empty))} have no used runs: nothing to judge "
                 "(a judged set needs used runs; external_check.py --set N lists why its rows are excluded)")
    preds = predict([r for _, r in runs])
    log_errors = [float(np.log(p.tokens_per_gpu / r.measured_tokens_per_gpu)) for (_, r), p in zip(runs, preds)]
    groups = [f"set {n} | {r.group}" for n, r in runs]
    by: dict[str, list[int]] = defaultdict(list)
    for i, (n, r) in enumerate(runs):
        by[f"set {n}"].append(i)
        by[f"set {n} | source {r.source}"].append(i)

    def figures(ix: list[int]) -> dict:
        return {"runs": len(ix), "groups": len({groups[i] for i in ix}),
                "mean_abs_log_each_group_once": mean_abs_log_each_group_once([log_errors[i] for i in ix],
                                                                             [groups[i] for i in ix]),
                "median_log_error": float(np.median([log_errors[i] for i in ix]))}

    out = {"sets": sets, **figures(list(range(len(runs)))), "by": {k: figures(ix) for k, ix in sorted(by.items())},
           "sources": len({r.source for _, r in runs}),
           "sources_by_set": {f"set {n}": len({r.source for m, r in runs if m == n}) for n in sets},
           "candidates": list(CANDIDATES), "reference": list(REFERENCE)}
    # the run's own most specific regime (the same rows for every method; a method's band may come from a coarser key)
    by_regime: dict[str, list[int]] = defaultdict(list)
    for i, (_, r) in enumerate(runs):
        by_regime[scenario_regime_keys(r.model, r.cluster, r.setup)[0]].append(i)
    tables = method_tables(METHODS)
    ys = [-e for e in log_errors]  # log(measured / predicted), the bands' variable
    for method in METHODS:
        bands = [throughput_band(r.model, r.cluster, r.setup, **tables[method]) for _, r in runs]
        inside = [b.low <= y <= b.high for b, y in zip(bands, ys)]

        def band_figures(ix: list[int]) -> dict:
            """Coverage (runs inside, share, 95 % CI resampling groups) and mean interval score, each group once."""
            g = [groups[i] for i in ix]
            return {"coverage": share([inside[i] for i in ix], g),
                    "interval_score": interval_score([ys[i] for i in ix], [bands[i].low for i in ix],
                                                     [bands[i].high for i in ix], g)}

        out[f"bands_{method}"] = {
            **band_figures(list(range(len(runs)))),
            "by_set": {f"set {n}": band_figures(by[f"set {n}"]) for n in sets},
            "by_source": {k: band_figures(ix) for k, ix in sorted(by.items()) if " | source " in k},
            "by_regime": {k: band_figures(ix) for k, ix in sorted(by_regime.items())}}
    return out


def _in_sample_note(method: str, sets: list[int]) -> str:
    """A set among the method's own items is in-sample for it: its figures there are seen, not a judge."""
    seen = [n for n in sets if in_sample(method, n)]
    return f" -- IN-SAMPLE: set(s) {', '.join(map(str, seen))} among {method}'s items" if seen else ""


def _label(method: str) -> str:
    return f"{method} (reference, not a candidate)" if method in REFERENCE else method


def _coverage(f: dict) -> str:
    c = f["coverage"]
    return (f"inside {c['inside']}/{c['runs']} ({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%}), "
            f"interval score {f['interval_score']:.4f}")


def _cell(f: dict) -> str:
    c = f["coverage"]
    return f"{c['inside']}/{c['runs']} {f['interval_score']:.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, nargs="+", required=True, choices=sorted(JUDGED_EXTERNAL_SETS))
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = judge(args.sets)
    print(f"sets {args.sets}: {out['runs']} runs, {out['groups']} groups: mean |log(predicted/measured)| each group "
          f"once {out['mean_abs_log_each_group_once']:.4f}, median log error {out['median_log_error']:+.4f}")
    for k, f in out["by"].items():
        print(f"  {k}: {f['runs']} runs, {f['mean_abs_log_each_group_once']:.4f}, median {f['median_log_error']:+.4f}")
    pooled = f"sets {', '.join(map(str, out['sets']))} pooled" if len(out["sets"]) > 1 else f"set {out['sets'][0]}"
    for method in METHODS:
        b = out[f"bands_{method}"]
        print(f"{_label(method)}: {pooled}: {_coverage(b)}" + _in_sample_note(method, out["sets"]))
        if len(out["sets"]) > 1:
            for k, f in b["by_set"].items():
                print(f"  {k}: {_coverage(f)}" + _in_sample_note(method, [int(k.split()[1])]))
    for part, title in (("by_source", "per source"), ("by_regime", "per regime (the run's own most specific)")):
        print(f"{title}: inside/runs and interval score, " + " | ".join(map(_label, METHODS)))
        for k in out[f"bands_{METHODS[0]}"][part]:
            print(f"  {k}: " + " | ".join(_cell(out[f"bands_{m}"][part][k]) for m in METHODS))
    print(f"session 12's rule, unchanged in session 13 (benchmarks/band_rule.py), among the candidates "
          f"{', '.join(CANDIDATES)} only; a set among a method's items is no judge of it:")
    for n in out["sets"]:  # a judge is one set's first run: the rule is read off each set on its own
        k = f"set {n}"
        indent = "  "
        if len(out["sets"]) > 1:
            print(f"  {k}:")
            indent = "    "
        figures = {m: (out[f"bands_{m}"]["by_set"][k]["coverage"]["share"], out[f"bands_{m}"]["by_set"][k]["interval_score"])
                   for m in CANDIDATES}
        holders = [m for m in CANDIDATES if in_sample(m, n)]
        if holders:
            print(f"{indent}IN-SAMPLE: {k} is among the items of {', '.join(holders)}: seen figures, no judge")
        for line in readout(out["by"][k]["runs"], out["sources_by_set"][k], figures):
            print(indent + line)
    if THROUGHPUT_BAND_METHOD in METHODS:
        print("  " + item_2(THROUGHPUT_BAND_METHOD, out["sets"], out[f"bands_{THROUGHPUT_BAND_METHOD}"]["coverage"])
              + _in_sample_note(THROUGHPUT_BAND_METHOD, out["sets"]))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
