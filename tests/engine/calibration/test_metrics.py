"""Error and rank metrics against hand-worked examples (and SciPy where installed)."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.calibration.metrics import average_ranks, kendall_tau_b, mape, spearman


def test_mape_by_hand():
    """|110−100|/100 = 0.10, |45−50|/50 = 0.10, |300−200|/200 = 0.50 -> mean 0.2333."""
    assert mape([110, 45, 300], [100, 50, 200]) == pytest.approx(0.7 / 3)


def test_average_ranks_share_ties():
    assert list(average_ranks([10, 20, 20, 5])) == [2.0, 3.5, 3.5, 1.0]


def test_spearman_and_kendall_hand_example():
    """x = 1..5, y = (2, 1, 4, 3, 5). Spearman: d = (1, −1, 1, −1, 0), Σd² = 4,
    rho = 1 − 6·4/(5·24) = 0.8. Kendall: of 10 pairs, (1,2) and (3,4) are discordant:
    tau = (8 − 2)/10 = 0.6."""
    x, y = [1, 2, 3, 4, 5], [2, 1, 4, 3, 5]
    assert spearman(x, y) == pytest.approx(0.8)
    assert kendall_tau_b(x, y) == pytest.approx(0.6)
    assert spearman(x, x[::-1]) == pytest.approx(-1.0)


def test_against_scipy_with_ties():
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    a = rng.integers(0, 6, 40).astype(float)
    b = a + rng.normal(0, 2, 40).round()
    assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
    assert kendall_tau_b(a, b) == pytest.approx(stats.kendalltau(a, b).statistic)


def test_ordered_pairs_by_gap_by_hand():
    """Predicted 100, 102, 150; measured 100, 99, 160. Pairs and predicted gaps (faster/slower − 1):
    (100, 102): 2 %, measured order reversed (100 > 99) -> not ordered as measured;
    (100, 150): 50 %, ordered; (102, 150): 47 %, ordered. Bins [0, 5 %), [5 %, inf)."""
    from shardwise.engine.calibration.metrics import ordered_pairs_by_gap

    pairs, agree = ordered_pairs_by_gap([100, 102, 150], [100, 99, 160], (0.0, 0.05, float("inf")))
    assert list(pairs) == [1, 2] and list(agree) == [0, 2]
    # A measured tie is not "ordered as measured".
    pairs, agree = ordered_pairs_by_gap([100, 130], [100, 100], (0.0, 0.05, float("inf")))
    assert list(pairs) == [0, 1] and list(agree) == [0, 0]
