"""Out-of-fold (OOF) predictions of the calibration runs, for the cross-fitted (CV+) error bands.

Every used run is predicted by constants fitted WITHOUT its fold of groups (folds.py): fold 0 by
the shipped constants (calibrated.py, fitted on folds 1 and 2), folds 1 and 2 by refits on the
other two folds. The refit is an offline dev tool (benchmarks/cross_fit.py, needs scipy), which
writes data/out_of_fold_predictions.csv; this module only reads it. Its residuals
log(measured / OOF-predicted) are out of sample for the engine's constants, which the in-sample
residuals of the fitted groups are not (benchmarks/fit_error_bands.py, docs/performance.md).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

OUT_OF_FOLD = Path(__file__).parent / "data" / "out_of_fold_predictions.csv"
FIELDS = ("key", "group", "fold", "measured_tokens_per_gpu", "predicted_tokens_per_gpu")


@dataclass(frozen=True)
class OutOfFold:
    key: str  # the run (runs.py: file:line)
    group: str
    fold: int  # folds.fold_of(group)
    measured_tokens_per_gpu: float
    predicted_tokens_per_gpu: float  # by constants fitted without this fold


def parse(lines) -> tuple[OutOfFold, ...]:
    """Rows of the generated file; '#' lines are its header comments."""
    rows = csv.DictReader(line for line in lines if not line.startswith("#"))
    return tuple(OutOfFold(r["key"], r["group"], int(r["fold"]), float(r["measured_tokens_per_gpu"]),
                           float(r["predicted_tokens_per_gpu"])) for r in rows)


@lru_cache(maxsize=1)
def load_out_of_fold() -> tuple[OutOfFold, ...]:
    with OUT_OF_FOLD.open(newline="") as f:
        return parse(f)
