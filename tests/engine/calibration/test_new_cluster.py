"""Band method v4, a band for a new cluster (engine/calibration/new_cluster.py), on samples small
enough to work out by hand with the midpoint weighted quantile (band_statistics.weighted_quantile:
each value stands at the middle of its share of the weight)."""

import pytest

from shardwise.engine.calibration.band_statistics import cluster_band
from shardwise.engine.calibration.new_cluster import (
    fold_new_cluster_bands, new_cluster_band, new_cluster_bands_by_level, source_offsets)


def test_a_source_offset_is_its_median_with_each_group_once():
    # Unit A: group g1 = {0.1, 0.3} (weight 1/2 each), group g2 = {0.2} (weight 1). Normalised:
    # 0.1 -> 0.25, 0.2 -> 0.5, 0.3 -> 0.25; positions 0.125, 0.5, 0.875, so the median is 0.2.
    # Unit B: one run at -0.1.
    offsets = source_offsets([0.1, 0.3, 0.2, -0.1], ["g1", "g1", "g2", "g3"], ["A", "A", "A", "B"])
    assert offsets == {"A": pytest.approx(0.2), "B": pytest.approx(-0.1)}


def test_the_band_adds_every_source_offset_to_the_regimes_deviations():
    # Regime runs of unit A (offset 0.2): 0.3 (group g1) and 0.1 (g2): deviations +0.1 and -0.1.
    # Offsets of every unit: A 0.2, B -0.1. Sums, weight 1/2 x 1/2 each:
    #   0.1+0.2 = 0.3, 0.1-0.1 = 0.0, -0.1+0.2 = 0.1, -0.1-0.1 = -0.2
    # sorted -0.2, 0.0, 0.1, 0.3 at positions 0.125, 0.375, 0.625, 0.875.
    offsets = {"A": 0.2, "B": -0.1}
    lo, hi, n = new_cluster_band([0.3, 0.1], ["g1", "g2"], ["A", "A"], offsets, 0.25, 0.75)
    assert lo == pytest.approx(-0.1)  # halfway from -0.2 (0.125) to 0.0 (0.375)
    assert hi == pytest.approx(0.2)  # halfway from 0.1 (0.625) to 0.3 (0.875)
    assert n == 2
    # the 80 % band reaches the extremes here (0.1 < 0.125, 0.9 > 0.875): clamped
    assert new_cluster_band([0.3, 0.1], ["g1", "g2"], ["A", "A"], offsets)[:2] == (pytest.approx(-0.2),
                                                                                    pytest.approx(0.3))
    # v2 on the same two runs knows only unit A's level: 0.1 .. 0.3, shifted up and half as wide.
    assert cluster_band([0.3, 0.1], ["g1", "g2"], 0.1, 0.9)[:2] == (pytest.approx(0.1), pytest.approx(0.3))


def test_one_source_unit_gives_the_v2_band():
    # With a single unit, deviation + offset is the residual itself: v4 must equal v2.
    values = [-0.3, -0.1, 0.0, 0.05, 0.2, 0.4, 0.1]
    clusters = ["a", "a", "b", "c", "c", "c", "d"]
    v4 = new_cluster_bands_by_level([(["r", "all"], v, c, "only") for v, c in zip(values, clusters)], min_runs=5)
    v2 = cluster_band(values, clusters, 0.1, 0.9)
    assert v4["r"] == (pytest.approx(v2[0]), pytest.approx(v2[1]), 7)


def test_a_regime_below_the_minimum_gets_no_band():
    items = [(["small", "all"], 0.1 * i, f"g{i}", "A" if i % 2 else "B") for i in range(6)]
    items += [(["all"], 0.0, "h", "A")] * 10
    bands = new_cluster_bands_by_level(items, min_runs=15)
    assert "small" not in bands and bands["all"][2] == 16


def test_a_fold_is_checked_against_bands_and_offsets_from_the_other_folds_only():
    base = [(["r"], 0.01 * i, f"g{i}", "A" if i < 10 else "B", 1 + i % 2) for i in range(20)]
    fold0 = [(["r"], 5.0, "far", "C", 0), (["r"], -5.0, "far2", "A", 0)]
    # whatever fold 0 holds (an extreme unit C, an extreme run of unit A), its bands are the same
    assert fold_new_cluster_bands(base + fold0, 0, min_runs=5) == fold_new_cluster_bands(base, 0, min_runs=5)
    # and they are the bands of the other folds' runs
    assert fold_new_cluster_bands(base, 0, min_runs=5) == new_cluster_bands_by_level(
        [(k, v, c, u) for k, v, c, u, _ in base], min_runs=5)
