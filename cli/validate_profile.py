"""`shardwise validate --profile`: what calibrating on one run buys, measured on the shipped runs,
and how often the 80 % intervals contain held-out measured runs."""

from __future__ import annotations

import numpy as np

from ..engine.assumptions import error_bands as eb
from ..engine.calibration.band_statistics import TOTAL
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
        lines.append(f"{'family (calibrated on its smallest run)':<78}{'runs':>5}{'scale':>7}{'before':>8}{'after':>8}")
        for f in shipped:
            lines.append(f"{f.family[:77]:<78}{len(f.rows):>5}{f.compute_scale:>7.3f}"
                         f"{_mape(f.rows, 'error_before'):>8.1%}{_mape(f.rows, 'error_after'):>8.1%}"
                         + ("  (held out)" if f.held_out else ""))
        lines.append("")
    lines += _summary("shipped calibration families", shipped)
    lines += _summary("older Megatron-Bridge releases (software the engine was not fitted on)", older)
    lines += ["", "80 % intervals (bands from fitted groups, each group once; coverage on held-out groups; "
                  "benchmarks/fit_error_bands.py):",
              "  " + _coverage("throughput", eb.THROUGHPUT_COVERAGE, eb.THROUGHPUT_COVERAGE_CI),
              "  " + _coverage("after calibration", eb.CALIBRATED_COVERAGE, eb.CALIBRATED_COVERAGE_CI),
              "  " + _coverage("peak memory", eb.MEMORY_COVERAGE, eb.MEMORY_COVERAGE_CI),
              "  " + _coverage("older Megatron-Bridge releases (never fitted), throughput",
                               eb.OLDER_RELEASE_COVERAGE, eb.OLDER_RELEASE_COVERAGE_CI),
              "  " + _coverage("  ... after calibrating on one run of each release",
                               eb.OLDER_RELEASE_CALIBRATED_COVERAGE, eb.OLDER_RELEASE_CALIBRATED_COVERAGE_CI)]
    return "\n".join(lines)
