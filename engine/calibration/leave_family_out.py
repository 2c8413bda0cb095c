"""Leave-family-out transfer check: the use case of a profile, a cluster the engine has never seen.

The in-sample transfer check (transfer.py) predicts each family with the engine's constants,
which were fitted on that same family, so little family-level bias is left for a profile to
remove. Here each family is predicted by constants refitted WITHOUT it (the refit is an offline
dev tool, benchmarks/leave_family_out.py, which needs scipy and writes data/leave_family_out.csv);
then, from those constants, a profile is fitted on the family's smallest run and the other runs
are predicted, as in transfer.py.

`leave_family_out` is the machinery (the refit is passed in, so tests can plant a known answer);
`load_results` reads the generated file for `shardwise validate --profile` and the docs.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..assumptions.performance import PerformanceAssumptions
from .runs import CalibrationRun
from .transfer import FamilyTransfer, transfer_family

RESULTS = Path(__file__).parent / "data" / "leave_family_out.csv"

# refit(family key, training runs = every pool run outside the family) -> constants to predict it with
Refit = Callable[[str, list[CalibrationRun]], PerformanceAssumptions]


def leave_family_out(families: dict[str, list[CalibrationRun]], pool: list[CalibrationRun], refit: Refit,
                     family_of: Callable[[CalibrationRun], str], fit_comm: bool = True) -> list[FamilyTransfer]:
    """For each family: constants from `refit` on the pool without the family's runs, then the
    transfer check (calibrate on its smallest run, predict the rest) from those constants."""
    out = []
    for key, runs in families.items():
        train = [r for r in pool if family_of(r) != key]
        out.append(transfer_family(key, runs, refit(key, train), fit_comm=fit_comm))
    return out


@dataclass(frozen=True)
class FamilyResult:
    """One family's line of data/leave_family_out.csv."""

    family: str
    held_out: bool
    runs: int  # runs predicted (the anchor excluded)
    refit: str  # the constants refitted without the family, as name=value, ';'-separated
    compute_scale: float
    comm_scale: float
    mape_before: float  # refitted constants, no profile
    mape_after: float  # refitted constants + the profile fitted on the smallest run
    mape_after_compute_only: float  # the same with the compute scale alone (diagnostic)
    mape_hindsight: float  # ceiling: scales fitted on every run of the family, the predicted ones included


FIELDS = [f for f in FamilyResult.__dataclass_fields__]


def row_of(f: FamilyTransfer, refit: dict[str, float], compute_only: FamilyTransfer, ceiling: list[float]) -> dict:
    """The CSV line; `ceiling` is |error| per predicted run with scales fitted in hindsight on every
    run of the family (transfer.hindsight_family), the anchor left out like in the other columns."""
    def mape(rows, attr):
        return sum(abs(getattr(r, attr)) for r in rows) / len(rows)

    return {"family": f.family, "held_out": int(f.held_out), "runs": len(f.rows),
            "refit": ";".join(f"{k}={v:.4g}" for k, v in refit.items()),
            "compute_scale": f"{f.compute_scale:.4f}", "comm_scale": f"{f.comm_scale:.4f}",
            "mape_before": f"{mape(f.rows, 'error_before'):.6f}", "mape_after": f"{mape(f.rows, 'error_after'):.6f}",
            "mape_after_compute_only": f"{mape(compute_only.rows, 'error_after'):.6f}",
            "mape_hindsight": f"{sum(ceiling) / len(ceiling):.6f}"}


@lru_cache(maxsize=1)
def load_results() -> tuple[FamilyResult, ...]:
    with open(RESULTS, newline="") as fh:
        return tuple(FamilyResult(family=r["family"], held_out=r["held_out"] == "1", runs=int(r["runs"]),
                                  refit=r["refit"], compute_scale=float(r["compute_scale"]),
                                  comm_scale=float(r["comm_scale"]), mape_before=float(r["mape_before"]),
                                  mape_after=float(r["mape_after"]),
                                  mape_after_compute_only=float(r["mape_after_compute_only"]),
                                  mape_hindsight=float(r["mape_hindsight"]))
                     for r in csv.DictReader(line for line in fh if not line.startswith("#")))


def pooled(results, attr: str) -> float:
    """MAPE over runs (each family's MAPE weighted by its runs)."""
    n = sum(r.runs for r in results)
    return sum(getattr(r, attr) * r.runs for r in results) / n


def per_family(results, attr: str) -> float:
    """MAPE with families weighted equally."""
    return sum(getattr(r, attr) for r in results) / len(results)
