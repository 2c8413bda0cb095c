"""Cross-fitted (CV+) coverage bookkeeping (engine/calibration/cross_fit.py) and the out-of-fold
file's format (out_of_fold.py), on examples small enough to work out by hand: which residuals feed
which fold's band, and how the hits are pooled."""

import pytest

from shardwise.engine.calibration.band_statistics import TOTAL, bands_by_level
from shardwise.engine.calibration.cross_fit import cross_fitted_coverage, fold_bands
from shardwise.engine.calibration.folds import HOLDOUT_FOLD, fold_of
from shardwise.engine.calibration.out_of_fold import parse

# Three folds of three single-run groups, one regime ("all"); min_runs 3 so six runs make a band.
VALUES = {0: [0.0, 0.5, -0.5], 1: [0.1, 0.2, 0.3], 2: [-0.1, -0.2, -0.3]}
ITEMS = [(["all"], v, f"g{f}{i}", f) for f, vs in VALUES.items() for i, v in enumerate(vs)]


def test_each_folds_band_is_taken_on_the_other_folds_only():
    # Six equally weighted values (each group once, one run per group) stand at (i - 0.5) / 6 =
    # 1/12, 3/12, ..., 11/12 (band_statistics.weighted_quantile).
    # Fold 0's band from folds 1 and 2: -0.3 -0.2 -0.1 0.1 0.2 0.3. q = 0.1 is 0.1 of the way from
    # 1/12 to 3/12: -0.3 + 0.1 × 0.1 = -0.29; q = 0.9 likewise 0.2 + 0.9 × 0.1 = 0.29.
    assert fold_bands(ITEMS, 0, min_runs=3)["all"] == pytest.approx((-0.29, 0.29, 6))
    # Fold 1's from folds 0 and 2: -0.5 -0.3 -0.2 -0.1 0.0 0.5 -> -0.5 + 0.1 × 0.2 = -0.48, 0.0 + 0.9 × 0.5 = 0.45.
    assert fold_bands(ITEMS, 1, min_runs=3)["all"] == pytest.approx((-0.48, 0.45, 6))
    # Fold 2's from folds 0 and 1: -0.5 0.0 0.1 0.2 0.3 0.5 -> -0.5 + 0.1 × 0.5 = -0.45, 0.3 + 0.9 × 0.2 = 0.48.
    assert fold_bands(ITEMS, 2, min_runs=3)["all"] == pytest.approx((-0.45, 0.48, 6))
    # Band method v3 (reported only): six groups put the conformal levels at 1 - 0.9 × 7/6 < 0 and
    # 0.9 × 7/6 > 1 (band_statistics.conformal_levels), so fold 0's band reaches its extremes.
    v3 = bands_by_level([(k, v, c) for k, v, c, f in ITEMS if f != 0], 3, finite_cluster_correction=True)
    assert v3["all"] == pytest.approx((-0.3, 0.3, 6))


def test_coverage_pools_every_fold_against_its_own_band():
    cv = cross_fitted_coverage(ITEMS, min_runs=3)
    # Fold 0 (0.0, 0.5, -0.5) against -0.29..0.29: only 0.0 inside. Folds 1 and 2 lie inside theirs.
    assert cv.by_fold == {0: (3, 1), 1: (3, 3), 2: (3, 3)}
    assert cv.counts == {"all": (9, 7)}  # pooled: every run held out once
    assert set(cv.ci) == {"all", TOTAL}
    lo, hi = cv.ci[TOTAL]
    assert 0.0 <= lo <= 7 / 9 <= hi <= 1.0


def test_a_fold_uses_the_most_specific_band_its_other_folds_can_give():
    # Regime "x" has runs in fold 0 only: fold 0's other folds give no "x" band, so its runs fall
    # back to "all"; folds 1 and 2 get an "x" band from fold 0's three runs (min_runs 3).
    items = [(["x", "all"], v, f"g0{i}", 0) for i, v in enumerate(VALUES[0])] + [
        (["y", "all"], v, f"g{f}{i}", f) for f in (1, 2) for i, v in enumerate(VALUES[f])]
    cv = cross_fitted_coverage(items, min_runs=3)
    assert "x" not in cv.bands_by_fold[0] and "x" in cv.bands_by_fold[1]
    assert cv.counts["all"][0] == 3  # fold 0's runs, through the fallback
    assert cv.counts["y"][0] == 6  # folds 1 and 2's runs, each against the "y" band of the other
    # Fold 1 against "y" of fold 2 only (-0.3 -0.2 -0.1, positions 1/6, 3/6, 5/6): q = 0.9 is beyond
    # 5/6, clamped to -0.1; none of 0.1, 0.2, 0.3 is inside.
    assert cv.by_fold[1] == (3, 0)


def test_the_folds_are_the_hold_out_split():
    # fold 0 is what CalibrationRun.holdout holds out; crc32("a") = 0xE8B7BE43 = 3904355907 = 3 × 1301451969 + 0
    assert HOLDOUT_FOLD == 0 and fold_of("a") == 0


def test_the_out_of_fold_file_format():
    text = ["# GENERATED: comment lines are skipped\n",
            "key,group,fold,measured_tokens_per_gpu,predicted_tokens_per_gpu\n",
            'runs.csv:12,"Llama-3-8B | 8x H100, bf16",2,1000.0,1100.5\n']
    (row,) = parse(text)
    assert (row.key, row.group, row.fold) == ("runs.csv:12", "Llama-3-8B | 8x H100, bf16", 2)
    assert (row.measured_tokens_per_gpu, row.predicted_tokens_per_gpu) == (1000.0, 1100.5)
