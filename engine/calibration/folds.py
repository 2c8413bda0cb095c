"""The three folds of calibration groups: the hold-out split and the cross-fit (CV+) folds.

A group (model × cluster × problem, runs.py) belongs to fold crc32(group) % FOLDS. Fold
HOLDOUT_FOLD is the official held-out split: the shipped constants (engine/assumptions/
calibrated.py) are fitted on the other folds. benchmarks/cross_fit.py refits the constants
without each other fold in turn, so every run gets an out-of-fold prediction (out_of_fold.py).
Deterministic and independent of the data's order, so a group never changes fold.
"""

from __future__ import annotations

import zlib

FOLDS = 3
HOLDOUT_FOLD = 0


def fold_of(group: str) -> int:
    return zlib.crc32(group.encode()) % FOLDS
