"""The throughput band methods engine/assumptions/error_bands.py can hold (THROUGHPUT_BAND_METHOD), in words,
and which external held-out sets each one is estimated on: a set inside a method's bands is in-sample for it,
so its coverage there is a seen figure, never a check (docs/performance.md, "Protocol for session 8")."""

from __future__ import annotations

DESCRIPTIONS = {
    "v2": "each group once, engine/calibration/band_statistics.py",
    "v3": "each group once at finite-cluster conformal levels on the out-of-fold residuals of the calibration runs, "
          "engine/calibration/band_statistics.py",
    "v4": "a band for a new cluster, engine/calibration/new_cluster.py",
    "v5": "a band for a new cluster (new_cluster.py) on the out-of-fold residuals and external sets 1-2 "
          "(engine/calibration/external_items.py)",
    "v6": "a band for a new cluster (new_cluster.py) on the out-of-fold residuals and external sets 1-3 "
          "(engine/calibration/external_items.py)",
    "v7": "a band for a new cluster (new_cluster.py) on the out-of-fold residuals and external sets 1-4 "
          "(engine/calibration/external_items.py)",
    "v8": "each group once at finite-cluster conformal levels (v3's statistic, band_statistics.py) on the out-of-fold "
          "residuals and external sets 1-7 (engine/calibration/external_items.py)",
    "v9": "each group once at finite-cluster conformal levels (v3's statistic, band_statistics.py) on the out-of-fold "
          "residuals and external sets 1-8 (engine/calibration/external_items.py)",
    "v10": "a band for a new cluster (v4's statistic, new_cluster.py) on the out-of-fold residuals and external sets "
           "1-8 (engine/calibration/external_items.py)",
    "v11": "a band for a new cluster (v4's statistic, new_cluster.py) on the out-of-fold residuals and external sets "
           "1-9 (engine/calibration/external_items.py)",
    "v12": "each group once at finite-cluster conformal levels (v3's statistic, band_statistics.py) on the out-of-fold "
           "residuals and external sets 1-9 (engine/calibration/external_items.py)",
}
# method -> the external sets (external.py) whose runs are among its items (external_items.py)
# (session 12's challengers v9 and v10: the same items, sets 1-8, under v3's and v4's statistic; "Protocol for session 12";
# session 13's v11 and v12: sets 1-9, v11 under v4's statistic (v10's recipe + set 9), v12 under v3's (v9's + set 9))
EXTERNAL_SETS_IN_BANDS = {"v5": (1, 2), "v6": (1, 2, 3), "v7": (1, 2, 3, 4), "v8": (1, 2, 3, 4, 5, 6, 7),
                          "v9": (1, 2, 3, 4, 5, 6, 7, 8), "v10": (1, 2, 3, 4, 5, 6, 7, 8),
                          "v11": (1, 2, 3, 4, 5, 6, 7, 8, 9), "v12": (1, 2, 3, 4, 5, 6, 7, 8, 9)}
# methods that read their bands with v3's statistic (band_statistics.conformal_levels) rather than v2's or v4's
CONFORMAL_METHODS = ("v3", "v8", "v9", "v12")
# methods that read their bands with v4's statistic (new_cluster.py: source units and their offsets)
NEW_CLUSTER_METHODS = ("v4", "v5", "v6", "v7", "v10", "v11")


def band_runs(method: str) -> str:
    """What the run count of a band counts, for the reader of a prediction's band."""
    return "calibration and external runs" if EXTERNAL_SETS_IN_BANDS.get(method) else "calibration runs"


def in_sample(method: str, external_set: int) -> bool:
    """Were this set's runs used to estimate the method's bands?"""
    return external_set in EXTERNAL_SETS_IN_BANDS.get(method, ())
