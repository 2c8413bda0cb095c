"""Session 12's band challengers (docs/performance.md, "Protocol for session 12"): v9 = v3's statistic (finite-cluster
conformal levels, each group once) and v10 = v4's statistic (a source unit's offset + a run's deviation from it,
new_cluster.py), both on the out-of-fold residuals plus the used runs of external sets 1-8 as items. Registered as
entries of the existing machinery (band_methods.py), not copies; their command-line flags; the toy bands are worked
out by hand with the midpoint weighted quantile (band_statistics.weighted_quantile: each value stands at the middle
of its share of the weight)."""

import sys
from pathlib import Path

import pytest

from shardwise.engine.calibration import external_items as ei
from shardwise.engine.calibration.band_methods import (
    CONFORMAL_METHODS, DESCRIPTIONS, EXTERNAL_SETS_IN_BANDS, NEW_CLUSTER_METHODS, band_runs, in_sample)
from shardwise.engine.calibration.cross_fit import cross_fitted_coverage
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))


def test_v9_and_v10_hold_sets_1_to_8_and_never_set_9():
    for method in ("v9", "v10"):
        assert EXTERNAL_SETS_IN_BANDS[method] == (1, 2, 3, 4, 5, 6, 7, 8)
        assert set(EXTERNAL_SETS_IN_BANDS[method]) <= set(JUDGED_EXTERNAL_SETS)
        assert [n for n in range(1, 10) if in_sample(method, n)] == [1, 2, 3, 4, 5, 6, 7, 8]
        assert not in_sample(method, 9)
        assert method in DESCRIPTIONS and band_runs(method) == "calibration and external runs"
    assert "v9" in CONFORMAL_METHODS and "v9" not in NEW_CLUSTER_METHODS  # v3's statistic
    assert "v10" in NEW_CLUSTER_METHODS and "v10" not in CONFORMAL_METHODS  # v4's statistic
    # v8 and v5-v7 keep their sets: v9 is v8's recipe with set 8 added, v10 v7's with sets 5-8 added
    assert EXTERNAL_SETS_IN_BANDS["v9"] == EXTERNAL_SETS_IN_BANDS["v8"] + (8,)
    assert EXTERNAL_SETS_IN_BANDS["v10"] == EXTERNAL_SETS_IN_BANDS["v7"] + (5, 6, 7, 8)


# Three source units, every run its own group (weight 1 each). Out-of-fold calibration items (keys, residual, group,
# unit, fold): unit A 0.10, 0.30, 0.20; unit B -0.10, -0.30. External item (keys, residual, group, unit): unit C 0.0.
OOF = [(["r"], 0.10, "g1", "A", 0), (["r"], 0.30, "g2", "A", 1), (["r"], 0.20, "g3", "A", 2),
       (["r"], -0.10, "g4", "B", 0), (["r"], -0.30, "g5", "B", 1)]
EXT = [(["r"], 0.0, "external | h1", "C")]


def test_v10_band_is_v4s_statistic_worked_by_hand_on_three_sources():
    # Offsets, each group once: A = median of 0.1, 0.2, 0.3 (positions 1/6, 1/2, 5/6) = 0.2; B = median of -0.3, -0.1
    # (positions 1/4, 3/4, interpolated at 1/2) = -0.2; C = 0.0 (one run).
    # Deviations from the run's own unit: A -0.1, +0.1, 0.0; B +0.1, -0.1; C 0.0 — i.e. -0.1 x2, 0.0 x2, +0.1 x2.
    # Sums deviation + every unit's offset (0.2, -0.2, 0.0), 6 x 3 = 18 sums of weight 1/18:
    #   dev -0.1: 0.1, -0.3, -0.1;  dev 0.0: 0.2, -0.2, 0.0;  dev +0.1: 0.3, -0.1, 0.1  (each twice)
    # sorted: -0.3 x2, -0.2 x2, -0.1 x4, 0.0 x2, 0.1 x4, 0.2 x2, 0.3 x2; value i stands at (i - 0.5) / 18.
    # 10th pct: 0.10 x 18 = 1.8 lies 0.3 of the way from i = 2 (-0.3, at 1.5/18) to i = 3 (-0.2): -0.3 + 0.03 = -0.27.
    # 90th pct: 0.90 x 18 = 16.2 lies 0.7 of the way from i = 16 (0.2, at 15.5/18) to i = 17 (0.3): 0.27.
    assert ei.bands_with_external(OOF, EXT, min_runs=6) == {"r": (pytest.approx(-0.27), pytest.approx(0.27), 6)}
    # v9 (v3's statistic) on the same six items: K = 6 groups, conformal levels 1 - 0.9 x 7/6 < 0 and 0.9 x 7/6 > 1
    # reach the extremes -0.3 .. 0.3: the two statistics differ on one set of items.
    assert ei.conformal_bands_with_external(OOF, EXT, min_runs=6) == {"r": (pytest.approx(-0.3), pytest.approx(0.3), 6)}


def test_v10_cross_fit_checks_only_calibration_runs_with_every_external_item_in_every_fold():
    cv = cross_fitted_coverage([(k, v, c, f) for k, v, c, _, f in OOF], min_runs=2,
                               bands_for_fold=lambda fold: ei.fold_bands_with_external(OOF, EXT, fold, 2))
    assert sum(n for n, _ in cv.by_fold.values()) == len(OOF)  # the five calibration runs, each once; not unit C's
    for fold in (0, 1, 2):
        others = [x for x in OOF if x[4] != fold]
        assert cv.bands_by_fold[fold] == ei.bands_with_external(others, EXT, min_runs=2)


def test_fit_error_bands_reads_v9_with_v3s_statistic_and_v10_with_v4s():
    from fit_error_bands import method_bands

    # 20 items (the 15-run minimum of a regime band): the toy's five calibration groups repeated under new names
    # four times, with C's external item four times
    oof = [(k, v + j / 1000, f"{g}-{j}", u, f) for j in range(4) for k, v, g, u, f in OOF]
    ext = [(k, v + j / 1000, f"{g}-{j}", u) for j in range(4) for k, v, g, u in EXT]
    assert method_bands(oof, "v9", ext) == ei.conformal_bands_with_external(oof, ext)
    assert method_bands(oof, "v10", ext) == ei.bands_with_external(oof, ext)
    assert method_bands(oof, "v9", ext) != method_bands(oof, "v10", ext)


def test_the_command_line_names_v9_and_v10():
    from fit_error_bands import parse

    assert parse(["--v9"])[1] == "v9" and parse(["--v10", "--write"])[1] == "v10"
    assert parse(["--v10", "--write"])[0].write
    assert parse([])[1] == "v2"
    with pytest.raises(SystemExit, match="choose one"):
        parse(["--v9", "--v10"])


def test_band_seen_takes_any_method_with_external_items():
    from band_seen import parse

    args = parse(["--method", "v10", "leave-one-set-out"])
    assert (args.method, args.check, args.sets) == ("v10", "leave-one-set-out", None)
    assert parse(["--method", "v8", "leave-one-set-out", "--sets", "3", "4"]).sets == [3, 4]
    with pytest.raises(SystemExit):
        parse(["--method", "v3", "cross-fitted"])  # v3 holds no external set: nothing to leave out
    with pytest.raises(SystemExit):
        parse(["--method", "v9", "leave-one-set-out", "--sets", "9"])  # set 9 is not among v9's items
