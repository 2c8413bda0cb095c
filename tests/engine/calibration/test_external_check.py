"""The bookkeeping of engine/calibration/external_check.py on examples small enough to work by hand."""

import pytest

from shardwise.engine.calibration.external_check import mape_each_group_once, share


def test_each_group_counts_once_in_the_mape():
    # Group a: errors 0.1 and 0.3 (mean 0.2); group b: -0.4. Each group once: (0.2 + 0.4) / 2 = 0.3
    # (pooled over runs it would be 0.8 / 3).
    assert mape_each_group_once([0.1, 0.3, -0.4], ["a", "a", "b"]) == pytest.approx(0.3)


def test_share_counts_runs_inside_and_resamples_groups():
    s = share([True, True, False], ["a", "a", "b"])
    assert (s["runs"], s["inside"]) == (3, 2) and s["share"] == pytest.approx(2 / 3)
    # Resampling groups a (2/2) and b (0/1): replicates aa = 1, ab/ba = 2/3, bb = 0, each end a quarter.
    assert s["ci95"] == [0.0, 1.0]
    assert share([], []) == {"runs": 0}
