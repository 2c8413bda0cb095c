"""Band challenger v8 (docs/performance.md, "Protocol for session 11"): v3's statistic (each group once, finite-cluster
conformal levels, band_statistics.conformal_levels) on the out-of-fold residuals plus the used runs of external sets
1-7 as items (external_items.py's groups, the same cross-fit as v5-v7)."""

import math
import sys
from pathlib import Path

import pytest

from shardwise.engine.calibration import external_items as ei
from shardwise.engine.calibration.band_methods import (
    CONFORMAL_METHODS, DESCRIPTIONS, EXTERNAL_SETS_IN_BANDS, NEW_CLUSTER_METHODS, band_runs, in_sample)
from shardwise.engine.calibration.band_statistics import bands_by_level
from shardwise.engine.calibration.cross_fit import cross_fitted_coverage
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

# Twenty groups of one run each in regime "r", residuals 0.01, 0.02, ..., 0.20: the odd hundredths are calibration
# groups (out-of-fold, folds 0/1/2 in turn), the even ones external groups (their source units play no part in v8).
OOF = [(["r"], j / 100, f"g{j}", "A", j % 3) for j in range(1, 21, 2)]
EXT = [(["r"], j / 100, f"external | h{j}", "B") for j in range(2, 21, 2)]


def _hazen(sorted_values: list[float], q: float) -> float:
    """Midpoint quantile of equally weighted values, by hand: value i (1-based) stands at (i - 0.5) / n."""
    n = len(sorted_values)
    pos = [(i - 0.5) / n for i in range(1, n + 1)]
    if q <= pos[0]:
        return sorted_values[0]
    if q >= pos[-1]:
        return sorted_values[-1]
    i = max(i for i in range(n) if pos[i] <= q)
    return sorted_values[i] + (sorted_values[i + 1] - sorted_values[i]) * (q - pos[i]) / (pos[i + 1] - pos[i])


def test_v8_band_worked_by_hand_from_the_conformal_levels():
    # K = 20 groups behind the band. Split-conformal levels (Vovk et al. 2005; band_statistics.conformal_levels):
    # upper = 0.90 x (K + 1) / K = 0.90 x 21 / 20 = 0.945, lower = 1 - (1 - 0.10) x (K + 1) / K = 1 - 0.945 = 0.055.
    k = 20
    upper_level = 0.90 * (k + 1) / k
    lower_level = 1 - (1 - 0.10) * (k + 1) / k
    assert upper_level == pytest.approx(0.945) and lower_level == pytest.approx(0.055)
    # Each group once, one run each: value j/100 stands at (j - 0.5) / 20. 0.055 lies between 0.025 (0.01) and
    # 0.075 (0.02): 0.01 + 0.01 x 0.030 / 0.050 = 0.016; 0.945 between 0.925 (0.19) and 0.975 (0.20): 0.194.
    values = [j / 100 for j in range(1, 21)]
    assert _hazen(values, lower_level) == pytest.approx(0.016) and _hazen(values, upper_level) == pytest.approx(0.194)
    assert ei.conformal_bands_with_external(OOF, EXT, min_runs=20) == {
        "r": (pytest.approx(0.016), pytest.approx(0.194), 20)}
    # v3 on the ten calibration groups alone: levels 0.90 x 11 / 10 = 0.99 and 0.01 lie past the first and last
    # positions (0.05, 0.95), so the band is the extremes 0.01 .. 0.19 — the external groups add data, not width here.
    assert bands_by_level([(k_, v, c) for k_, v, c, _, _ in OOF], min_runs=10, finite_cluster_correction=True) == {
        "r": (pytest.approx(0.01), pytest.approx(0.19), 10)}
    # below the run minimum there is no band
    assert ei.conformal_bands_with_external(OOF, EXT, min_runs=21) == {}


def test_v8_counts_each_group_once():
    # A second run of group g1 at 0.015 halves the weight of each of g1's runs: g1 still counts once, K stays 20, and
    # its two runs take positions 0.0125 and 0.0375 of 0.05 each. Hand: 0.055 now lies between 0.0375 (0.015) and
    # 0.075 (0.02): 0.015 + 0.005 x 0.0175 / 0.0375 = 0.017333...; the upper end is unchanged (0.194).
    doubled = OOF + [(["r"], 0.015, "g1", "A", 1)]
    lo, hi, n = ei.conformal_bands_with_external(doubled, EXT, min_runs=20)["r"]
    assert (lo, hi, n) == (pytest.approx(0.015 + 0.005 * 0.0175 / 0.0375), pytest.approx(0.194), 21)


def test_v8_cross_fit_checks_only_calibration_runs_with_every_external_item_in_every_fold():
    cv = cross_fitted_coverage([(k, v, c, f) for k, v, c, _, f in OOF], min_runs=3,
                               bands_for_fold=lambda fold: ei.fold_conformal_bands_with_external(OOF, EXT, fold, 3))
    assert sum(n for n, _ in cv.by_fold.values()) == len(OOF)  # the ten calibration runs, each once; no external one
    for fold in (0, 1, 2):
        others = [(k, v, c) for k, v, c, _, f in OOF if f != fold]
        expected = bands_by_level(others + [(k, v, c) for k, v, c, _ in EXT], 3, finite_cluster_correction=True)
        assert cv.bands_by_fold[fold] == expected


def test_v8_is_registered_with_sets_1_to_7_and_v3s_statistic():
    assert EXTERNAL_SETS_IN_BANDS["v8"] == (1, 2, 3, 4, 5, 6, 7)
    assert set(EXTERNAL_SETS_IN_BANDS["v8"]) <= set(JUDGED_EXTERNAL_SETS)
    assert "v8" in DESCRIPTIONS and "v8" in CONFORMAL_METHODS and "v8" not in NEW_CLUSTER_METHODS
    assert set(CONFORMAL_METHODS).isdisjoint(NEW_CLUSTER_METHODS)


def test_in_sample_rules():
    # a set among a method's items is in-sample for it (band_methods.in_sample); v3 holds no external set
    assert all(in_sample("v8", n) for n in range(1, 8))
    assert not any(in_sample("v3", n) for n in range(1, 8))
    assert [n for n in range(1, 8) if in_sample("v7", n)] == [1, 2, 3, 4]
    assert band_runs("v8") == "calibration and external runs" and band_runs("v3") == "calibration runs"


def test_v8s_items_are_the_out_of_fold_runs_and_every_used_run_of_sets_1_to_7():
    from fit_error_bands import method_bands, out_of_fold_unit_items, seen_external_items

    from shardwise.engine.calibration.out_of_fold import load_out_of_fold
    from shardwise.engine.calibration.report import build_report
    from shardwise.engine.calibration.runs import load_runs

    external = seen_external_items("v8")
    used = [r for n in range(1, 8) for r in JUDGED_EXTERNAL_SETS[n]() if r.used]
    assert len(external) == len(used)
    assert [g for _, _, g, _ in external] == [ei.EXTERNAL_GROUP + r.group for r in used]
    oof_units = out_of_fold_unit_items(build_report(with_memory=False), {r.key: r for r in load_runs()})
    assert len(oof_units) == len(load_out_of_fold())
    bands = method_bands(oof_units, "v8", external)
    # the pooled band counts every out-of-fold run and every used external run once
    assert bands["all"][2] == len(oof_units) + len(used)
    assert bands == bands_by_level([(k, v, g) for k, v, g, _, _ in oof_units] + [(k, v, g) for k, v, g, _ in external],
                                   finite_cluster_correction=True)
    # an external residual is log(measured / predicted) of the engine on PYTHONPATH (spot-check, one run per set)
    from shardwise.engine.calibration.predict import predict
    start = 0
    for n in range(1, 8):
        first = next(r for r in JUDGED_EXTERNAL_SETS[n]() if r.used)
        assert external[start][1] == pytest.approx(math.log(first.measured_tokens_per_gpu
                                                            / predict([first])[0].tokens_per_gpu), rel=1e-9)
        start += sum(r.used for r in JUDGED_EXTERNAL_SETS[n]())


def test_leave_one_set_out_builds_v8_without_that_sets_items():
    # benchmarks/band_seen.py's diagnostic (band_v8_seen.py's until session 12): v8 without set k = v3's statistic on
    # the out-of-fold items and the other sets' items only. Toy: set "a" holds the first five external items, "b" the rest.
    from band_seen import method_without

    by_set = {"a": EXT[:5], "b": EXT[5:]}
    without_b = method_without(OOF, "v8", by_set, "b")
    assert without_b == ei.conformal_bands_with_external(OOF, EXT[:5], min_runs=15)
    # 10 calibration + 5 external groups (the 15-run minimum exactly): K = 15, levels 1 - 0.90 x 16 / 15 = 0.04 and
    # 0.96. Value i stands at (i - 0.5) / 15; the first two at 1/30 = 0.0333 and 0.1, so the lower end interpolates
    # between 0.01 (calibration g1) and 0.02 (external h2): 0.01 + 0.01 x (0.04 - 1/30) / (1/15) = 0.011.
    values = sorted([v for _, v, _, _, _ in OOF] + [v for _, v, _, _ in EXT[:5]])
    assert values[:2] == [0.01, 0.02]
    assert without_b["r"][0] == pytest.approx(0.01 + 0.01 * (0.04 - 1 / 30) / (1 / 15))
    assert without_b["r"][0] == pytest.approx(_hazen(values, 1 - 0.90 * 16 / 15)) and without_b["r"][2] == 15
