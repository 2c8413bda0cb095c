"""The engine on the external held-out runs (data/external_runs.csv, external.py): published measured
runs no fit, band or parser choice has seen. Uncalibrated error and the coverage of the band the
product shows; calibrating each family (two or more GPU counts) on its smallest run. Used by
`shardwise validate --profile` and benchmarks/external_check.py (which adds band method v3 and
keeps the first run's figures); docs/performance.md, "External held-out runs". A band method estimated on a
set's runs (band_methods.EXTERNAL_SETS_IN_BANDS: v5 on sets 1 and 2, v6 on sets 1-3, v7 on sets 1-4, v8 on sets 1-7, v9 and v10 on sets 1-8, v11 and v12 on sets 1-9) is
marked in-sample there."""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import numpy as np

from ..assumptions import error_bands as eb
from .band_methods import in_sample
from .band_statistics import cluster_bootstrap_ci, regime_of
from .external import JUDGED_EXTERNAL_SETS
from .intervals import throughput_band
from .predict import predict
from .profile import CalibrationProfile
from .runs import catalog_gpu_id
from .transfer import families, transfer_family

SHIPPED = eb.THROUGHPUT_BAND_METHOD  # the band method of engine/assumptions/error_bands.py


def share(inside: list[bool], groups: list[str]) -> dict:
    """Runs inside their band, with the 95 % CI from resampling groups."""
    if not inside:
        return {"runs": 0}
    lo, hi = cluster_bootstrap_ci(inside, groups)
    return {"runs": len(inside), "inside": int(sum(inside)), "share": sum(inside) / len(inside), "ci95": [lo, hi]}


def inside_band(run, predicted_tokens_per_gpu: float, tables: dict) -> bool:
    """Is the run's measured throughput inside the 80 % band the product shows around its prediction
    (intervals.throughput_band with a band method's tables: the regime band, widened outside the validated range)?"""
    lo, hi = throughput_band(run.model, run.cluster, run.setup, **tables).around(predicted_tokens_per_gpu)
    return bool(lo <= run.measured_tokens_per_gpu <= hi)


def mape_each_group_once(errors: list[float], groups: list[str]) -> float:
    size = Counter(groups)
    return float(np.average(np.abs(errors), weights=[1 / size[g] for g in groups]))


def profile_for(run, fam) -> CalibrationProfile:
    """The profile a user would save from the family's smallest run (what transfer_family fitted)."""
    return CalibrationProfile(gpu=catalog_gpu_id(run.cluster.gpu), precision=run.setup.precision, framework=run.setup.framework,
                              network=run.cluster.network.id if fam.comm_scale != 1.0 else None,
                              compute_scale=fam.compute_scale, comm_scale=fam.comm_scale)


def external_check(methods: dict[str, dict] | None = None, external_set: int = 1) -> dict:
    """Every figure, for each band method in `methods` (name -> throughput_band's table arguments;
    default: the shipped bands only), on a judged external set (external.JUDGED_EXTERNAL_SETS: 1 is
    external_runs.csv, N external_runs_N.csv)."""
    methods = methods or {SHIPPED: {}}
    every = JUDGED_EXTERNAL_SETS[external_set]()
    runs = [r for r in every if r.used]
    out: dict = {"external_set": external_set, "rows": len(every), "used": len(runs), "excluded": dict(Counter(r.status for r in every if not r.used))}

    preds = predict(runs)
    errors = [p.error for p in preds]
    groups = [r.group for r in runs]
    hits: dict[str, list[bool]] = {m: [] for m in methods}
    by: dict[str, list[int]] = defaultdict(list)
    for i, (r, p) in enumerate(zip(runs, preds)):
        for method, tables in methods.items():
            hits[method].append(inside_band(r, p.tokens_per_gpu, tables))
        by[f"source {r.source}"].append(i)
        by[f"regime {regime_of(r)[0]}"].append(i)
    out["uncalibrated"] = {
        "mape": float(np.mean(np.abs(errors))), "mape_each_group_once": mape_each_group_once(errors, groups),
        "median_signed_error": float(np.median(errors)), "groups": len(set(groups)),
        **{f"coverage_{m}": share(hits[m], groups) for m in methods},
        "by": {k: {"runs": len(ix), "groups": len({groups[i] for i in ix}),
                   "mape": float(np.mean([abs(errors[i]) for i in ix])),
                   "median_signed_error": float(np.median([errors[i] for i in ix])),
                   **{f"coverage_{m}": share([hits[m][i] for i in ix], [groups[i] for i in ix]) for m in methods}}
               for k, ix in sorted(by.items())}}

    fams = [transfer_family(k, v) for k, v in families(runs).items()]
    by_key = {r.key: r for r in runs}
    rows = [(f, x) for f in fams for x in f.rows]
    if not rows:
        return out
    cal: dict[str, list[bool]] = {m: [] for m in methods}
    for f, x in rows:
        r = by_key[x.key]
        prof = profile_for(r, f)
        for method, tables in methods.items():
            lo, hi = throughput_band(r.model, r.cluster, r.setup, prof, **tables).around(x.calibrated)
            cal[method].append(bool(lo <= x.measured <= hi))
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
        **{f"coverage_{m}": share(cal[m], fgroups) for m in methods},
        "per_family": [{"family": f.family, "anchor_gpus": f.anchor_gpus, "compute_scale": f.compute_scale,
                        "comm_scale": f.comm_scale, "runs": len(f.rows),
                        "mape_before": float(np.mean([abs(x.error_before) for x in f.rows])),
                        "mape_after": float(np.mean([abs(x.error_after) for x in f.rows]))} for f in fams]}
    return out


def _cov(c: dict) -> str:
    if not c.get("runs"):
        return "no runs"
    return f"{c['inside']}/{c['runs']} ({c['share']:.1%}, CI {c['ci95'][0]:.0%}-{c['ci95'][1]:.0%})"


def excluded_kinds(excluded: dict[str, int]) -> dict[str, int]:
    """Exclusion reasons by kind, for a reader: a reason without its detail (what follows its first ':' when what
    comes before says the kind, or a closing parenthesis naming one system or revision), and a repeat run without
    its k of n, so 867 repeat runs are one line; the JSON keeps every reason."""
    kinds: Counter = Counter()
    for why, n in excluded.items():
        why = why.removeprefix("excluded: ")
        head = why.split(":")[0]
        kind = head if " " in head else why  # "recompute: block-level …" keeps its detail: the head says nothing alone
        kind = re.sub(r" \([^()']*\)$", "", re.sub(r"^repeat run \d+ of \d+ of", "repeat run of", kind))
        kinds[kind] += n
    return dict(kinds)


def render(out: dict, families_too: bool = True) -> list[str]:
    methods = [k.removeprefix("coverage_") for k in out["uncalibrated"] if k.startswith("coverage_")]

    def covs(d: dict) -> str:
        return "; ".join(f"{m}{' (shipped)' if m == SHIPPED and len(methods) > 1 else ''}"
                         f"{' (in-sample)' if in_sample(m, out['external_set']) else ''} {_cov(d[f'coverage_{m}'])}"
                         for m in methods)

    lines = [f"external rows {out['rows']}, used {out['used']}; excluded: " +
             "; ".join(f"{n} {why}" for why, n in sorted(excluded_kinds(out["excluded"]).items(), key=lambda x: -x[1]))]
    u = out["uncalibrated"]
    lines.append(f"uncalibrated: MAPE {u['mape']:.1%} (each group once {u['mape_each_group_once']:.1%}, "
                 f"{u['groups']} groups), median signed error {u['median_signed_error']:+.1%}")
    lines.append(f"  80 % band coverage: {covs(u)}")
    for k, b in u["by"].items():
        lines.append(f"  {k:<44} {b['runs']:>4} runs/{b['groups']:>3} groups  MAPE {b['mape']:6.1%}  "
                     f"median {b['median_signed_error']:+6.1%}  {covs(b)}")
    c = out.get("calibrated")
    if not c:
        return lines + ["calibrated: no family of external runs at two or more GPU counts"]
    lines.append(f"calibrated on each family's smallest run: {c['families']} families, {c['runs_predicted']} runs "
                 f"predicted; MAPE {c['mape_before']:.1%} -> {c['mape_after']:.1%} (x{c['ratio']:.2f}); families "
                 f"equally {c['families_equally_before']:.1%} -> {c['families_equally_after']:.1%} "
                 f"(x{c['families_equally_ratio']:.2f})")
    lines.append(f"  80 % band coverage after calibrating: {covs(c)}")
    if families_too:
        for f in c["per_family"]:
            lines.append(f"  {f['family']:<70} anchor {f['anchor_gpus']:>5} GPUs, scales {f['compute_scale']:.3f}/"
                         f"{f['comm_scale']:.3f}, {f['runs']} runs: {f['mape_before']:.1%} -> {f['mape_after']:.1%}")
    return lines
