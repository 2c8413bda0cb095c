"""`shardwise validate --profile`: what calibrating on one run buys, measured on the shipped runs
(in-sample, and leave-family-out: the engine's constants refitted without each family) and on
external runs never fitted, and how often the 80 % intervals contain held-out measured runs."""

from __future__ import annotations

import numpy as np

from ..engine.assumptions import error_bands as eb
from ..engine.calibration import leave_family_out as lofo
from ..engine.calibration.band_methods import DESCRIPTIONS, in_sample
from ..engine.calibration.external import EXTERNAL_FILES, EXTERNAL_PART_FILES
from ..engine.calibration.band_statistics import TOTAL
from ..engine.calibration.external_check import external_check, render
from ..engine.calibration.transfer import FamilyTransfer, transfer_all, transfer_older_releases


def _mape(rows, attr: str) -> float:
    return float(np.mean([abs(getattr(r, attr)) for r in rows])) if rows else float("nan")


def _summary(title: str, families: tuple[FamilyTransfer, ...]) -> list[str]:
    rows = [r for f in families for r in f.rows]
    before, after = _mape(rows, "error_before"), _mape(rows, "error_after")
    held = [r for f in families if f.held_out for r in f.rows]
    out = [f"{title}: {len(families)} families, {len(rows)} runs predicted after calibrating on the smallest run of "
           f"each: MAPE {before:.1%} -> {after:.1%} (x{after / before:.2f})"]
    if held:
        out.append(f"  held-out families ({len(held)} runs): {_mape(held, 'error_before'):.1%} -> "
                   f"{_mape(held, 'error_after'):.1%}")
    return out


def _leave_family_out_summary() -> list[str]:
    res = lofo.load_results()
    held = [r for r in res if r.held_out]
    n = sum(r.runs for r in res)

    def before_after(rows, how) -> str:
        b, a = how(rows, "mape_before"), how(rows, "mape_after")
        return f"{b:.1%} -> {a:.1%} (x{a / b:.2f})"

    return [f"leave-family-out (constants refitted without each family, then calibrated on its smallest run; "
            f"benchmarks/leave_family_out.py): {len(res)} families, {n} runs: MAPE pooled over runs "
            f"{before_after(res, lofo.pooled)}; families weighted equally {before_after(res, lofo.per_family)}",
            f"  held-out families ({sum(r.runs for r in held)} runs): {before_after(held, lofo.pooled)}",
            f"  ceiling (scales fitted in hindsight on every run of each family): pooled "
            f"{_ratio(res, lofo.pooled)}; families weighted equally {_ratio(res, lofo.per_family)}",
            f"  compute scale alone (no network scale): pooled {lofo.pooled(res, 'mape_after_compute_only'):.1%}"]


def _ratio(res, how) -> str:
    b, c = how(res, "mape_before"), how(res, "mape_hindsight")
    return f"{b:.1%} -> {c:.1%} (x{c / b:.2f})"


def _ci(ci: dict, key: str) -> str:
    lo, hi = ci[key]
    return f"95 % CI {lo:.0%}-{hi:.0%}"


def _coverage(title: str, table: dict, ci: dict) -> str:
    """Runs inside their band, with the CI from resampling held-out groups (fit_error_bands.py)."""
    n = sum(v[0] for v in table.values())
    c = sum(v[1] for v in table.values())
    parts = ", ".join(f"{k} {inside}/{runs} ({inside / runs:.0%}, {_ci(ci, k)})" for k, (runs, inside) in table.items())
    return f"{title}: {c}/{n} held-out runs inside ({c / max(n, 1):.0%}, {_ci(ci, TOTAL)}); {parts}"


def render_profile_check(families: bool = True) -> str:
    shipped, older = transfer_all(), transfer_older_releases()
    lines = []
    if families:
        left_out = {r.family: r for r in lofo.load_results()}
        lines.append(f"{'':<78}{'':>5}{'in-sample':^23}{'leave-family-out':^23}")
        lines.append(f"{'family (calibrated on its smallest run)':<78}{'runs':>5}"
                     + f"{'scale':>7}{'before':>8}{'after':>8}" * 2)
        for f in shipped:
            o = left_out.get(f.family)
            lofo_cols = (f"{o.compute_scale:>7.3f}{o.mape_before:>8.1%}{o.mape_after:>8.1%}" if o
                         else f"{'-':>7}{'-':>8}{'-':>8}")
            lines.append(f"{f.family[:77]:<78}{len(f.rows):>5}{f.compute_scale:>7.3f}"
                         f"{_mape(f.rows, 'error_before'):>8.1%}{_mape(f.rows, 'error_after'):>8.1%}" + lofo_cols
                         + ("  (held out)" if f.held_out else ""))
        lines.append("")
    lines += _summary("shipped calibration families (in-sample: the engine's constants were fitted on them)", shipped)
    lines += _leave_family_out_summary()
    lines += _summary("older Megatron-Bridge releases (software the engine was not fitted on)", older)
    lines += ["", f"80 % intervals (throughput band method {eb.THROUGHPUT_BAND_METHOD}: "
                  + DESCRIPTIONS[eb.THROUGHPUT_BAND_METHOD] + "; throughput cross-fitted: each fold of groups against bands and "
                  "constants fitted without it; benchmarks/cross_fit.py, fit_error_bands.py):",
              "  " + _coverage("throughput", eb.THROUGHPUT_COVERAGE, eb.THROUGHPUT_COVERAGE_CI),
              "    by fold: " + ", ".join(f"fold {f} {c}/{n} ({c / n:.0%})"
                                          for f, (n, c) in eb.THROUGHPUT_COVERAGE_BY_FOLD.items()),
              "  " + _coverage("throughput, official split as before (in-sample bands of folds 1-2, fold 0)",
                               eb.HOLDOUT_FOLD_COVERAGE, eb.HOLDOUT_FOLD_COVERAGE_CI),
              "  " + _coverage("after calibration", eb.CALIBRATED_COVERAGE, eb.CALIBRATED_COVERAGE_CI),
              "  " + _coverage("peak memory", eb.MEMORY_COVERAGE, eb.MEMORY_COVERAGE_CI),
              "  " + _coverage("older Megatron-Bridge releases (never fitted), throughput",
                               eb.OLDER_RELEASE_COVERAGE, eb.OLDER_RELEASE_COVERAGE_CI),
              "  " + _coverage("  ... after calibrating on one run of each release",
                               eb.OLDER_RELEASE_CALIBRATED_COVERAGE, eb.OLDER_RELEASE_CALIBRATED_COVERAGE_CI)]
    for n, csv in EXTERNAL_FILES.items():
        seen = in_sample(eb.THROUGHPUT_BAND_METHOD, n)
        files = " + ".join(f"engine/calibration/data/{name}" for name in EXTERNAL_PART_FILES.get(n, (csv,)))
        lines += ["", f"external held-out runs, set {n} (published, never fitted"
                      + (f"; IN-SAMPLE: its runs are among method {eb.THROUGHPUT_BAND_METHOD}'s band items, so its "
                         "coverage below is not a check" if seen else " or banded")
                      + f": {files}; shipped bands, method {eb.THROUGHPUT_BAND_METHOD}; "
                      "first run in docs/performance.md):"]
        lines += ["  " + line for line in render(external_check(external_set=n), families_too=families)]
    return "\n".join(lines)
