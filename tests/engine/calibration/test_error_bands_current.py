"""engine/assumptions/error_bands.py is generated (benchmarks/fit_error_bands.py --write) from the
out-of-fold predictions of the calibration runs (data/out_of_fold_predictions.csv, itself checked
against today's engine by test_out_of_fold_current.py). A change to the engine's constants that is
not followed by a regeneration leaves bands describing an engine that no longer exists (it
happened: nanotron's predictions moved and the stored memory band was +10..+87 % where the
residuals gave -14..+22 %). This test re-derives the throughput bands and the cross-fitted
coverage from the stored out-of-fold file and compares."""

import numpy as np

from shardwise.engine.assumptions import error_bands as eb
from shardwise.engine.calibration.band_statistics import bands_by_level, regime_of
from shardwise.engine.calibration.cross_fit import cross_fitted_coverage
from shardwise.engine.calibration.band_methods import CONFORMAL_METHODS, DESCRIPTIONS, EXTERNAL_SETS_IN_BANDS
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.external_items import (
    bands_with_external, conformal_bands_with_external, external_items, fold_bands_with_external,
    fold_conformal_bands_with_external)
from shardwise.engine.calibration.new_cluster import fold_new_cluster_bands, new_cluster_bands_by_level, source_unit
from shardwise.engine.calibration.out_of_fold import load_out_of_fold
from shardwise.engine.calibration.runs import load_runs

ROUNDING = 1e-4  # the generated file keeps four decimals
RERUN = "run benchmarks/fit_error_bands.py --write"


def _unit_items():
    runs = {r.key: r for r in load_runs()}
    return [(regime_of(runs[x.key]), float(np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu)), x.group,
             source_unit(runs[x.key]), x.fold) for x in load_out_of_fold()]


def _items():
    return [(k, v, g, f) for k, v, g, _, f in _unit_items()]


def _external_items():
    """The shipped method's extra items: the runs of the external sets it is estimated on (band_methods.
    EXTERNAL_SETS_IN_BANDS: v5 sets 1-2, ..., v8 sets 1-7; external_items.py)."""
    return external_items([r for n in EXTERNAL_SETS_IN_BANDS[eb.THROUGHPUT_BAND_METHOD] for r in JUDGED_EXTERNAL_SETS[n]()])


def _fresh_bands():
    method = eb.THROUGHPUT_BAND_METHOD
    if method in EXTERNAL_SETS_IN_BANDS:  # v5-v7: v4's statistic; v8: v3's
        with_external = conformal_bands_with_external if method in CONFORMAL_METHODS else bands_with_external
        return with_external(_unit_items(), _external_items())
    if method == "v4":
        return new_cluster_bands_by_level([(k, v, g, u) for k, v, g, u, _ in _unit_items()])
    return bands_by_level([(k, v, g) for k, v, g, _ in _items()], finite_cluster_correction=method in CONFORMAL_METHODS)


def _fresh_coverage():
    method = eb.THROUGHPUT_BAND_METHOD
    if method in EXTERNAL_SETS_IN_BANDS:
        units, external = _unit_items(), _external_items()
        fold_bands = fold_conformal_bands_with_external if method in CONFORMAL_METHODS else fold_bands_with_external
        return cross_fitted_coverage(_items(), bands_for_fold=lambda fold: fold_bands(units, external, fold))
    if method == "v4":
        units = _unit_items()
        return cross_fitted_coverage(_items(), bands_for_fold=lambda fold: fold_new_cluster_bands(units, fold))
    return cross_fitted_coverage(_items(), v3=method in CONFORMAL_METHODS)


def test_the_band_method_is_a_known_one():
    assert eb.THROUGHPUT_BAND_METHOD in DESCRIPTIONS  # band_methods.py: every method the generated file can hold


def test_stored_throughput_bands_match_the_out_of_fold_predictions():
    fresh = _fresh_bands()
    assert fresh.keys() == eb.THROUGHPUT_BANDS.keys(), f"regimes changed: {RERUN}"
    stale = {k: (eb.THROUGHPUT_BANDS[k], v) for k, v in fresh.items()
             if abs(v[0] - eb.THROUGHPUT_BANDS[k][0]) > ROUNDING or abs(v[1] - eb.THROUGHPUT_BANDS[k][1]) > ROUNDING
             or v[2] != eb.THROUGHPUT_BANDS[k][2]}
    assert not stale, f"error_bands.py is stale (stored, fresh): {stale}; {RERUN}"


def test_stored_coverage_is_the_cross_fitted_one():
    cv = _fresh_coverage()
    assert cv.counts == eb.THROUGHPUT_COVERAGE and cv.by_fold == eb.THROUGHPUT_COVERAGE_BY_FOLD, RERUN
    # every used run is held out exactly once
    assert sum(n for n, _ in eb.THROUGHPUT_COVERAGE_BY_FOLD.values()) == len(load_out_of_fold())
