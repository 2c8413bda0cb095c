"""The numbers of the explain entry on the 80 % intervals ("likely 1,110–1,280": 80 % of what?), all read
from the generated error bands (engine/assumptions/error_bands.py, benchmarks/fit_error_bands.py) and the
widening rule of engine/calibration/intervals.py; none is written here."""

from __future__ import annotations

import math

from ..engine.assumptions import error_bands as eb
from ..engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS, in_sample
from ..engine.calibration.intervals import OUTSIDE_RANGE_WIDENING, throughput_band
from .figures import r
from .scenario import ResolvedScenario

SHOWN_REGIMES = ("dense", "moe")  # the two widest groupings a band is read at, as examples of its width


def _percent(log_ratio: float) -> float:
    return r(100 * (math.exp(log_ratio) - 1), 1)


def _coverage(table: dict) -> tuple[int, int]:
    return sum(n for n, _ in table.values()), sum(k for _, k in table.values())


def _and(sets) -> str:
    """Set numbers as a reader says them: "1 and 2", "3, 4 and 5"."""
    names = [str(k) for k in sets]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


def interval_numbers(s: ResolvedScenario | None = None) -> dict:
    runs, inside = _coverage(eb.THROUGHPUT_COVERAGE)
    low_ci, high_ci = eb.THROUGHPUT_COVERAGE_CI["all held-out runs"]
    # every calibration run is held out once in the cross-fit; a band method may also hold external runs
    n: dict = {"interval_percent": 80, "tail_percent": 10, "calibration_runs": runs,
               "external_runs_in_bands": eb.THROUGHPUT_BANDS["all"][2] - runs,
               "external_sets_in_bands": _and(EXTERNAL_SETS_IN_BANDS.get(eb.THROUGHPUT_BAND_METHOD, ())),
               "held_out_runs": runs, "held_out_inside": inside, "held_out_inside_percent": r(100 * inside / runs, 1),
               "held_out_ci_low_percent": r(100 * low_ci, 1), "held_out_ci_high_percent": r(100 * high_ci, 1),
               "ci_percent": 95,  # *_COVERAGE_CI is a 95 % interval (error_bands.py's header)
               "outside_range_widening": OUTSIDE_RANGE_WIDENING}
    for regime in SHOWN_REGIMES:
        lo, hi, count = eb.THROUGHPUT_BANDS[regime]
        n.update({f"{regime}_low_percent": _percent(lo), f"{regime}_high_percent": _percent(hi), f"{regime}_runs": count})
    cal_runs, cal_inside = eb.CALIBRATED_COVERAGE["calibrated|pytorch|dense"]
    n.update(calibrated_runs=cal_runs, calibrated_inside=cal_inside, calibrated_inside_percent=r(100 * cal_inside / cal_runs, 1))
    # every external set the shipped bands were not estimated on, pooled: runs no fit or band has seen, each set
    # judged once by these bands (one set alone is a few sources: sets 3-5 range from 35 % to 85 %)
    unseen = sorted(k for k in eb.EXTERNAL_COVERAGE if not in_sample(eb.THROUGHPUT_BAND_METHOD, k))
    ext_runs, ext_inside = _coverage({k: eb.EXTERNAL_COVERAGE[k] for k in unseen})
    # (none when the shipped method holds every judged set, as v8 would until a later set is judged)
    n.update(external_sets=_and(unseen), external_runs=ext_runs, external_inside=ext_inside,
             external_inside_percent=r(100 * ext_inside / ext_runs, 1) if ext_runs else None)
    mem_runs, mem_inside = _coverage(eb.MEMORY_COVERAGE)
    n.update(memory_held_out_runs=mem_runs, memory_held_out_inside=mem_inside)
    if s is not None:  # the band this scenario gets
        band = throughput_band(s.model, s.cluster, s.setup)
        n.update(your_basis=band.basis, your_low_percent=_percent(band.low), your_high_percent=_percent(band.high))
    return n
