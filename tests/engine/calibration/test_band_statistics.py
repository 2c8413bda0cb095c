"""Cluster-weighted quantiles and cluster-bootstrap CIs (engine/calibration/band_statistics.py), on
samples small enough to work out by hand."""

import numpy as np
import pytest

from shardwise.engine.calibration.band_statistics import (
    cluster_band, cluster_bootstrap_ci, cluster_weights, conformal_levels, interval_score, weighted_quantile)


def test_equal_weights_give_the_midpoint_plotting_positions():
    # 5 values, weight 1/5 each: value i stands at (i - 0.5) / 5 = 0.1, 0.3, 0.5, 0.7, 0.9.
    v, w = [5.0, 1.0, 4.0, 2.0, 3.0], [1.0] * 5
    assert weighted_quantile(v, w, 0.1) == pytest.approx(1.0)
    assert weighted_quantile(v, w, 0.2) == pytest.approx(1.5)  # halfway between 0.1 (1) and 0.3 (2)
    assert weighted_quantile(v, w, 0.5) == pytest.approx(3.0)
    assert weighted_quantile(v, w, 0.9) == pytest.approx(5.0)
    assert weighted_quantile(v, w, 0.05) == 1.0 and weighted_quantile(v, w, 0.97) == 5.0  # clamped


def test_each_cluster_counts_once():
    # Cluster A: four runs at 0; cluster B: one run at 1. Weights 1/4 (A) and 1 (B), normalised over a
    # total of 2: 0.125 per A run, 0.5 for B. Positions: A runs at 0.0625, 0.1875, 0.3125, 0.4375,
    # B at 0.125 * 4 + 0.5 / 2 = 0.75.
    values, clusters = [0.0, 0.0, 0.0, 0.0, 1.0], ["A", "A", "A", "A", "B"]
    w = cluster_weights(clusters)
    assert list(w) == [0.25, 0.25, 0.25, 0.25, 1.0]
    # q = 0.6: (0.6 - 0.4375) / (0.75 - 0.4375) = 0.52 of the way from 0 to 1
    assert weighted_quantile(values, w, 0.6) == pytest.approx(0.52)
    assert weighted_quantile(values, w, 0.8) == 1.0  # beyond B's position: clamped to 1
    # Counting runs instead, A's four runs fill the first 80 %: positions 0.1 ... 0.9, so q = 0.8 is
    # halfway from the last A run (0.7) to B (0.9).
    assert weighted_quantile(values, [1.0] * 5, 0.8) == pytest.approx(0.5)
    assert cluster_band(values, clusters, 0.1, 0.8) == (0.0, 1.0, 5)


def test_bad_weights_are_refused():
    with pytest.raises(ValueError):
        weighted_quantile([], [], 0.5)
    with pytest.raises(ValueError):
        weighted_quantile([1.0, 2.0], [1.0, 0.0], 0.5)


def test_bootstrap_resamples_whole_clusters():
    # One cluster: every replicate draws it, so the share is always its 3/4.
    assert cluster_bootstrap_ci([True, True, True, False], ["A"] * 4) == (0.75, 0.75)
    # A (2/2 inside) and B (0/2): a replicate draws AA (share 1, p = 1/4), AB or BA (1/2, p = 1/2) or
    # BB (0, p = 1/4). With a quarter of replicates at each end, the 2.5 % and 97.5 % points are 0 and 1.
    lo, hi = cluster_bootstrap_ci([True, True, False, False], ["A", "A", "B", "B"])
    assert (lo, hi) == (0.0, 1.0)
    # Runs resampled one by one would not know the runs of B fail together; by cluster the CI is
    # as wide as the two clusters allow, and the same seed gives the same CI.
    assert cluster_bootstrap_ci([True, True, False, False], ["A", "A", "B", "B"]) == (lo, hi)
    assert np.isclose(cluster_bootstrap_ci([True] * 3, ["A", "B", "C"]), (1.0, 1.0)).all()


def test_conformal_levels_put_one_share_beyond_each_end():
    # K clusters and a mass 1/(K+1) beyond each end: K/(K+1)·F(hi) = 0.9 -> F(hi) = 0.9 (K+1)/K;
    # 1/(K+1) + K/(K+1)·F(lo) = 0.1 -> F(lo) = 1 - 0.9 (K+1)/K.
    lo, hi = conformal_levels(0.1, 0.9, 19)  # 0.9 × 20/19 = 18/19
    assert hi == pytest.approx(18 / 19) and lo == pytest.approx(1 / 19)
    assert conformal_levels(0.1, 0.9, 9) == pytest.approx((0.0, 1.0))  # 0.9 × 10/9 = 1: the extremes
    assert conformal_levels(0.1, 0.9, 2) == (0.0, 1.0)  # past 1: clamped
    # Many clusters: the levels tend to the nominal 10th/90th.
    lo, hi = conformal_levels(0.1, 0.9, 10_000)
    assert hi == pytest.approx(0.9, abs=1e-4) and lo == pytest.approx(0.1, abs=1e-4)


def test_a_band_of_twenty_clusters_reads_the_conformal_levels():
    # 20 one-run clusters valued 1..20 stand at (i - 0.5)/20 = 0.025, 0.075, ..., 0.975.
    values, clusters = [float(i) for i in range(1, 21)], [f"c{i}" for i in range(20)]
    # Levels 1 - 0.945 = 0.055 and 0.9 × 21/20 = 0.945: 1 + (0.055 - 0.025)/0.05 = 1.6 and
    # 19 + (0.945 - 0.925)/0.05 = 19.4.
    assert cluster_band(values, clusters, 0.1, 0.9, finite_cluster_correction=True) == pytest.approx((1.6, 19.4, 20))
    # v2 (shipped, no correction): 0.1 -> 2 + (0.1 - 0.075)/0.05 = 2.5, 0.9 -> 18.5.
    assert cluster_band(values, clusters, 0.1, 0.9) == pytest.approx((2.5, 18.5, 20))


def test_interval_score_is_width_plus_ten_times_the_miss():
    # 80 % band (alpha 0.2, 2/alpha = 10), band [-0.1, 0.2]: width 0.3.
    # y = 0.0 inside: 0.3; y = 0.25, 0.05 above: 0.3 + 10 × 0.05 = 0.8; y = -0.3, 0.2 below: 0.3 + 2.0 = 2.3.
    ys, lo, hi = [0.0, 0.25, -0.3], [-0.1] * 3, [0.2] * 3
    assert interval_score(ys, lo, hi, ["a", "b", "c"]) == pytest.approx((0.3 + 0.8 + 2.3) / 3)
    # Each cluster once: a and b in one cluster (weight 1/2 each), c alone: (0.3/2 + 0.8/2 + 2.3) / 2.
    assert interval_score(ys, lo, hi, ["a", "a", "c"]) == pytest.approx((0.55 + 2.3) / 2)
