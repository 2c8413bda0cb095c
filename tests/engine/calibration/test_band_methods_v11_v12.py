"""Session 13's band challengers (docs/performance.md, "Protocol for session 13"): v11 = v10's statistic (v4's: a source
unit's offset + a run's deviation from it, new_cluster.py) and v12 = v9's statistic (v3's: finite-cluster conformal
levels, each group once), both on the out-of-fold residuals plus the used runs of external sets 1-9 as items.
Registered as entries of the existing machinery (band_methods.py), not copies; their command-line flags; the toy
bands are worked out by hand with the midpoint weighted quantile (band_statistics.weighted_quantile: each value stands
at the middle of its share of the weight)."""

import sys
from pathlib import Path

import pytest

from shardwise.engine.calibration import external_items as ei
from shardwise.engine.calibration.band_methods import (
    CONFORMAL_METHODS, DESCRIPTIONS, EXTERNAL_SETS_IN_BANDS, NEW_CLUSTER_METHODS, band_runs, in_sample)
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))


def test_v11_and_v12_hold_sets_1_to_9_and_nothing_later():
    for method in ("v11", "v12"):
        assert EXTERNAL_SETS_IN_BANDS[method] == (1, 2, 3, 4, 5, 6, 7, 8, 9)
        assert set(EXTERNAL_SETS_IN_BANDS[method]) <= set(JUDGED_EXTERNAL_SETS)
        assert [n for n in range(1, 12) if in_sample(method, n)] == [1, 2, 3, 4, 5, 6, 7, 8, 9]
        assert not in_sample(method, 10)  # the judge's set (session 13) is in no method's items
        assert method in DESCRIPTIONS and band_runs(method) == "calibration and external runs"
        assert "1-9" in DESCRIPTIONS[method]
    assert "v11" in NEW_CLUSTER_METHODS and "v11" not in CONFORMAL_METHODS  # v10's (v4's) statistic
    assert "v12" in CONFORMAL_METHODS and "v12" not in NEW_CLUSTER_METHODS  # v9's (v3's) statistic
    # entries, not copies: v11 is v10's recipe with set 9 added, v12 v9's with set 9 added
    assert EXTERNAL_SETS_IN_BANDS["v11"] == EXTERNAL_SETS_IN_BANDS["v10"] + (9,)
    assert EXTERNAL_SETS_IN_BANDS["v12"] == EXTERNAL_SETS_IN_BANDS["v9"] + (9,)
    assert not any(10 in sets for sets in EXTERNAL_SETS_IN_BANDS.values())


# Two source units, every run its own group (weight 1 each), one regime "r".
# Out-of-fold calibration items (keys, residual, group, unit, fold), unit A: 0.1 + d_i, d_i = (i - 8.5) x 0.01 for
# i = 1..16, i.e. 0.025, 0.035, ..., 0.175 (folds 0, 1, 2 in turn). External items (keys, residual, group, unit), unit E:
# -0.105 and -0.095.
OOF = [(["r"], 0.1 + (i - 8.5) * 0.01, f"g{i}", "A", i % 3) for i in range(1, 17)]
EXT = [(["r"], -0.105, "external | h1", "E"), (["r"], -0.095, "external | h2", "E")]


def test_v11_band_is_v4s_statistic_worked_by_hand():
    from fit_error_bands import method_bands

    # Offsets, each group once: A = median of its 16 runs = midpoint of 0.095 and 0.105 = 0.1; E = median of two
    # (positions 1/4, 3/4, interpolated at 1/2) = -0.1.
    # Deviations from the run's own unit: A -0.075, -0.065, ..., +0.075 (16); E -0.005, +0.005: 18 of weight 1/18.
    # Sums deviation + each unit's offset (0.1 and -0.1, weight 1/2 each): 36 sums of weight 1/36; the 18 sums with
    # -0.1 (-0.175 ... -0.025) all lie below the 18 with +0.1 (0.025 ... 0.175). Value i stands at (i - 0.5) / 36.
    # 10th pct: 0.10 x 36 = 3.6 lies 0.1 of the way from i = 4 (-0.145, at 3.5/36) to i = 5 (-0.135): -0.144.
    # 90th pct: by symmetry +0.144.
    assert method_bands(OOF, "v11", EXT) == {"r": (pytest.approx(-0.144), pytest.approx(0.144), 18)}
    # Without unit E (v10 on the calibration items alone, the same call): one offset, 0.1; sums 0.1 + d_i, 16 of weight
    # 1/16: 0.1 x 16 = 1.6 lies 0.1 of the way from i = 2 (0.035) to i = 3 (0.045): 0.036; 90th: 0.164.
    assert method_bands(OOF, "v11", []) == {"r": (pytest.approx(0.036), pytest.approx(0.164), 16)}


def test_v12_band_is_v3s_statistic_worked_by_hand():
    from fit_error_bands import method_bands

    # K = 18 groups: conformal levels 1 - 0.9 x 19/18 = 0.05 and 0.9 x 19/18 = 0.95 (band_statistics.conformal_levels).
    # The residuals themselves, sorted: -0.105, -0.095, 0.025, 0.035, ..., 0.175; value i at (i - 0.5) / 18.
    # 5th pct: 0.05 x 18 = 0.9 lies 0.4 of the way from i = 1 (-0.105) to i = 2 (-0.095): -0.101.
    # 95th pct: 0.95 x 18 = 17.1 lies 0.6 of the way from i = 17 (0.165) to i = 18 (0.175): 0.171.
    assert method_bands(OOF, "v12", EXT) == {"r": (pytest.approx(-0.101), pytest.approx(0.171), 18)}
    assert ei.conformal_bands_with_external(OOF, EXT) == method_bands(OOF, "v12", EXT)


def test_v11_and_v12_cross_fit_check_only_the_calibration_runs():
    from fit_error_bands import method_bands, throughput_bands

    # unit E's two runs four times over (8 external items), so that a fold's bands (10-11 calibration items of the
    # other folds + every external item) reach the 15 runs of a regime band
    ext = [(k, v, f"{g}-{j}", u) for j in range(4) for k, v, g, u in EXT]
    for method in ("v11", "v12"):
        _, cv = throughput_bands(OOF, method, ext)
        assert sum(n for n, _ in cv.by_fold.values()) == len(OOF)  # the 16 calibration runs, each once; no external one
        for fold in (0, 1, 2):
            assert cv.bands_by_fold[fold] == method_bands([x for x in OOF if x[4] != fold], method, ext)


def test_the_command_line_names_v11_and_v12():
    from fit_error_bands import parse

    assert parse(["--v11"])[1] == "v11" and parse(["--v12", "--write"])[1] == "v12"
    with pytest.raises(SystemExit, match="choose one"):
        parse(["--v11", "--v12"])


def test_band_seen_takes_v11_and_v12_with_set_9_and_methods_beside_them():
    from band_seen import SHIPPED, _methods, parse

    args = parse(["--method", "v11", "leave-one-set-out", "--sets", "9"])
    assert (args.method, args.sets, args.beside) == ("v11", [9], [SHIPPED])
    assert parse(["--method", "v12", "cross-fitted", "--beside", "v3", "v10"]).beside == ["v3", "v10"]
    assert _methods("v12", ("v3", "v10")) == ("v3", "v10", "v12")
    assert _methods("v10", ("v10",)) == ("v10",)  # the challenger is printed once
    with pytest.raises(SystemExit):
        parse(["--method", "v12", "leave-one-set-out", "--sets", "10"])  # set 10 is among no method's items
