"""engine/calibration/data/out_of_fold_predictions.csv is generated (benchmarks/cross_fit.py --write)
by refitting the engine's constants without each fold of groups; the shipped error bands are taken
on it. No refit here: fold 0 is predicted by the shipped constants, so today's engine must give
the stored fold-0 predictions exactly. A change to the engine or to calibrated.py since the last
--write shows up there (folds 1 and 2 would move with it)."""

import pytest

from shardwise.engine.calibration.folds import HOLDOUT_FOLD, fold_of
from shardwise.engine.calibration.out_of_fold import load_out_of_fold
from shardwise.engine.calibration.report import build_report

RERUN = "run benchmarks/cross_fit.py --write, then benchmarks/fit_error_bands.py --write"


@pytest.fixture(scope="module")
def today():
    return {x.key: x for x in build_report(with_memory=False).rows}


def test_every_used_run_has_one_out_of_fold_prediction_in_its_groups_fold(today):
    oof = load_out_of_fold()
    assert sorted(x.key for x in oof) == sorted(today), f"the runs changed: {RERUN}"
    for x in oof:
        assert x.fold == fold_of(x.group) and x.group == today[x.key].group
        assert x.measured_tokens_per_gpu == today[x.key].measured_tokens_per_gpu
    assert {x.fold for x in oof} == {0, 1, 2}


def test_fold_0_predictions_are_todays_engine(today):
    stale = {x.key: (x.predicted_tokens_per_gpu, today[x.key].predicted_tokens_per_gpu)
             for x in load_out_of_fold() if x.fold == HOLDOUT_FOLD
             and x.predicted_tokens_per_gpu != pytest.approx(today[x.key].predicted_tokens_per_gpu, rel=1e-9)}
    assert not stale, f"out_of_fold_predictions.csv is stale ((stored, today) for {len(stale)} runs): {RERUN}"
