"""The engine on external held-out runs: published measured runs that no fit, band or parser
choice has seen (engine/calibration/data/external_runs.csv; protocol fixed before the first run:
docs/performance.md, "Protocol for session 6").

    python benchmarks/external_check.py               # print every figure
    python benchmarks/external_check.py --json OUT    # ... and write them as JSON

Uncalibrated: MAPE (pooled, and each group once), the median signed error, by source and regime;
coverage of the 80 % band the product shows (intervals.throughput_band: the regime band, widened
outside the validated range) for the shipped band method (v2) and for v3 (band_statistics.
conformal_levels, same out-of-fold residuals), each with a 95 % CI from resampling groups.
Calibrated: each family of external runs at two or more GPU counts (transfer.families) calibrated
on its smallest run, predicting the rest (transfer.transfer_family): MAPE before and after, their
ratio, and the coverage of the band a profile gets.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fit_error_bands import calibrated_key, out_of_fold_items  # noqa: E402

from shardwise.engine.calibration.band_statistics import bands_by_level, cluster_bootstrap_ci, regime_of  # noqa: E402
from shardwise.engine.calibration.external import load_external_runs  # noqa: E402
from shardwise.engine.calibration.intervals import throughput_band  # noqa: E402
from shardwise.engine.calibration.predict import predict  # noqa: E402
from shardwise.engine.calibration.profile import CalibrationProfile  # noqa: E402
from shardwise.engine.calibration.report import build_report  # noqa: E402
from shardwise.engine.calibration.runs import load_runs  # noqa: E402
from shardwise.engine.calibration.transfer import families, transfer_all, transfer_family  # noqa: E402


def v3_tables() -> tuple[dict, dict]:
    """The throughput and calibrated bands band method v3 would ship, from the same residuals as
    the shipped v2 tables (benchmarks/fit_error_bands.py)."""
    report = build_report(with_memory=False)
    runs = {r.key: r for r in load_runs()}
    oof = out_of_fold_items(report, runs)
    tp = bands_by_level([(k, v, g) for k, v, g, _ in oof], finite_cluster_correction=True)
    cal = bands_by_level([([calibrated_key(runs[r.key])], float(np.log(r.measured / r.calibrated)), f.family)
                          for f in transfer_all() if not f.held_out for r in f.rows], finite_cluster_correction=True)
    return tp, cal


def share(inside: list[bool], groups: list[str]) -> dict:
    if not inside:
        return {"runs": 0}
    lo, hi = cluster_bootstrap_ci(inside, groups)
    return {"runs": len(inside), "inside": int(sum(inside)), "share": sum(inside) / len(inside), "ci95": [lo, hi]}


def mape_each_group_once(errors: list[float], groups: list[str]) -> float:
    size = Counter(groups)
    w = np.array([1 / size[g] for g in groups])
    return float(np.average(np.abs(errors), weights=w))


def profile_for(run, fam) -> CalibrationProfile:
    """The profile a user would save from the family's smallest run (what transfer_family fitted)."""
    return CalibrationProfile(gpu=run.cluster.gpu.id, precision=run.setup.precision, framework=run.setup.framework,
                              network=run.cluster.network.id if fam.comm_scale != 1.0 else None,
                              compute_scale=fam.compute_scale, comm_scale=fam.comm_scale)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    every = load_external_runs()
    runs = [r for r in every if r.used]
    excluded = Counter(r.status for r in every if not r.used)
    tp3, cal3 = v3_tables()
    out: dict = {"rows": len(every), "used": len(runs), "excluded": dict(excluded)}

    preds = predict(runs)
    errors = [p.error for p in preds]
    groups = [r.group for r in runs]
    hits = {"v2": [], "v3": []}
    by: dict[str, list[int]] = defaultdict(list)
    for i, (r, p) in enumerate(zip(runs, preds)):
        for method, tables in (("v2", {}), ("v3", {"bands": tp3, "calibrated_bands": cal3})):
            lo, hi = throughput_band(r.model, r.cluster, r.setup, **tables).around(p.tokens_per_gpu)
            hits[method].append(bool(lo <= r.measured_tokens_per_gpu <= hi))
        by[f"source {r.source}"].append(i)
        by[f"regime {regime_of(r)[0]}"].append(i)
    out["uncalibrated"] = {
        "mape": float(np.mean(np.abs(errors))), "mape_each_group_once": mape_each_group_once(errors, groups),
        "median_signed_error": float(np.median(errors)), "groups": len(set(groups)),
        "coverage_v2": share(hits["v2"], groups), "coverage_v3": share(hits["v3"], groups),
        "by": {k: {"runs": len(ix), "groups": len({groups[i] for i in ix}),
                   "mape": float(np.mean([abs(errors[i]) for i in ix])),
                   "median_signed_error": float(np.median([errors[i] for i in ix])),
                   "coverage_v2": share([hits["v2"][i] for i in ix], [groups[i] for i in ix]),
                   "coverage_v3": share([hits["v3"][i] for i in ix], [groups[i] for i in ix])}
               for k, ix in sorted(by.items())}}

    fams = [transfer_family(k, v) for k, v in families(runs).items()]
    by_key = {r.key: r for r in runs}
    rows = [(f, x) for f in fams for x in f.rows]
    cal = {"v2": [], "v3": []}
    for f, x in rows:
        r = by_key[x.key]
        prof = profile_for(r, f)
        for method, tables in (("v2", {}), ("v3", {"bands": tp3, "calibrated_bands": cal3})):
            lo, hi = throughput_band(r.model, r.cluster, r.setup, prof, **tables).around(x.calibrated)
            cal[method].append(bool(lo <= x.measured <= hi))
    if rows:
        before = [abs(x.error_before) for _, x in rows]
        after = [abs(x.error_after) for _, x in rows]
        fam_before = [np.mean([abs(x.error_before) for x in f.rows]) for f in fams]
        fam_after = [np.mean([abs(x.error_after) for x in f.rows]) for f in fams]
        fgroups = [f.family for f, _ in rows]
        out["calibrated"] = {
            "families": len(fams), "runs_predicted": len(rows),
            "mape_before": float(np.mean(before)), "mape_after": float(np.mean(after)),
            "ratio": float(np.mean(after) / np.mean(before)),
            "families_equally_before": float(np.mean(fam_before)), "families_equally_after": float(np.mean(fam_after)),
            "families_equally_ratio": float(np.mean(fam_after) / np.mean(fam_before)),
            "coverage_v2": share(cal["v2"], fgroups), "coverage_v3": share(cal["v3"], fgroups),
            "per_family": [{"family": f.family, "anchor_gpus": f.anchor_gpus, "compute_scale": f.compute_scale,
                            "comm_scale": f.comm_scale, "runs": len(f.rows),
                            "mape_before": float(np.mean([abs(x.error_before) for x in f.rows])),
                            "mape_after": float(np.mean([abs(x.error_after) for x in f.rows]))} for f in fams]}
    report(out)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")


def _cov(c: dict) -> str:
    if not c.get("runs"):
        return "no runs"
    return f"{c['inside']}/{c['runs']} ({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%})"


def report(out: dict) -> None:
    print(f"external rows {out['rows']}, used {out['used']}; excluded: " +
          "; ".join(f"{n} {why}" for why, n in sorted(out["excluded"].items())))
    u = out["uncalibrated"]
    print(f"uncalibrated: MAPE {u['mape']:.1%} (each group once {u['mape_each_group_once']:.1%}, {u['groups']} groups), "
          f"median signed error {u['median_signed_error']:+.1%}")
    print(f"  80 % band coverage, shipped v2: {_cov(u['coverage_v2'])}; v3: {_cov(u['coverage_v3'])}")
    for k, b in u["by"].items():
        print(f"  {k:<44} {b['runs']:>4} runs/{b['groups']:>3} groups  MAPE {b['mape']:6.1%}  "
              f"median {b['median_signed_error']:+6.1%}  v2 {_cov(b['coverage_v2'])}  v3 {_cov(b['coverage_v3'])}")
    c = out.get("calibrated")
    if not c:
        print("calibrated: no family of external runs at two or more GPU counts")
        return
    print(f"calibrated on each family's smallest run: {c['families']} families, {c['runs_predicted']} runs predicted; "
          f"MAPE {c['mape_before']:.1%} -> {c['mape_after']:.1%} (x{c['ratio']:.2f}); families equally "
          f"{c['families_equally_before']:.1%} -> {c['families_equally_after']:.1%} (x{c['families_equally_ratio']:.2f})")
    print(f"  80 % band coverage after calibrating, v2: {_cov(c['coverage_v2'])}; v3: {_cov(c['coverage_v3'])}")
    for f in c["per_family"]:
        print(f"  {f['family']:<70} anchor {f['anchor_gpus']:>5} GPUs, scales {f['compute_scale']:.3f}/"
              f"{f['comm_scale']:.3f}, {f['runs']} runs: {f['mape_before']:.1%} -> {f['mape_after']:.1%}")


if __name__ == "__main__":
    main()
