"""engine/assumptions/error_bands.py is generated (benchmarks/fit_error_bands.py --write) from the
engine's predictions of the calibration runs. A change to the engine's constants that is not
followed by a regeneration leaves bands describing an engine that no longer exists (it happened:
nanotron's predictions moved and the stored memory band was +10..+87 % where the residuals gave
-14..+22 %). This test re-derives the throughput bands from today's predictions and compares."""

import numpy as np

from shardwise.engine.assumptions import error_bands as eb
from shardwise.engine.calibration.band_statistics import bands_by_level, regime_of
from shardwise.engine.calibration.report import build_report
from shardwise.engine.calibration.runs import load_runs

ROUNDING = 1e-4  # the generated file keeps four decimals


def test_stored_throughput_bands_match_todays_predictions():
    runs = {r.key: r for r in load_runs()}
    report = build_report(with_memory=False)
    items = [(regime_of(runs[x.key]), float(np.log(x.measured_tokens_per_gpu / x.predicted_tokens_per_gpu)), x.group)
             for x in report.rows if not x.holdout]
    fresh = bands_by_level(items)
    assert fresh.keys() == eb.THROUGHPUT_BANDS.keys(), "regimes changed: run benchmarks/fit_error_bands.py --write"
    stale = {k: (eb.THROUGHPUT_BANDS[k], v) for k, v in fresh.items()
             if abs(v[0] - eb.THROUGHPUT_BANDS[k][0]) > ROUNDING or abs(v[1] - eb.THROUGHPUT_BANDS[k][1]) > ROUNDING
             or v[2] != eb.THROUGHPUT_BANDS[k][2]}
    assert not stale, f"error_bands.py is stale (stored, fresh): {stale}; run benchmarks/fit_error_bands.py --write"
