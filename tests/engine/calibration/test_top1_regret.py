"""Top-1 regret as `shardwise validate` defines it (docs/performance.md): the plan the model ranks
first is the one with the highest predicted throughput among those it predicts to fit (what
`recommend` would pick); regret = 1 − its measured throughput / the best measured in the group."""

from __future__ import annotations

import pytest

from shardwise.engine.calibration.report import top1_regret


def test_regret_of_the_predicted_best_fitting_plan():
    # predicted [10, 30, 20], measured [100, 50, 80]; plan 1 is predicted not to fit, so the model's
    # first is plan 2 (20 > 10): regret 1 − 80/100 = 0.2.
    regret, first = top1_regret([10, 30, 20], [100, 50, 80], [True, False, True])
    assert first == 2 and regret == pytest.approx(0.2)


def test_no_regret_when_the_first_is_the_best():
    regret, first = top1_regret([3, 2, 1], [9, 5, 4], [True, True, True])
    assert (regret, first) == (0.0, 0)


def test_nothing_predicted_to_fit_has_no_first():
    assert top1_regret([1, 2], [1, 2], [False, False]) == (None, None)
