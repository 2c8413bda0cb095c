"""What every external set's file must satisfy, whichever set (each set's own tests quote its sources)."""

import csv

import pytest

from shardwise.engine.calibration.external import EXTERNAL_FILES, EXTERNAL_PART_FILES, JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.runs import DATA

from support.external_file import ExternalFile


@pytest.mark.parametrize("n", sorted(EXTERNAL_FILES))
def test_one_run_per_row_and_every_used_run_is_complete(n):
    files = [ExternalFile(name, JUDGED_EXTERNAL_SETS[n]) for name in EXTERNAL_PART_FILES.get(n, (EXTERNAL_FILES[n],))]
    runs = files[0].load()
    assert len(runs) == sum(len(f.rows()) for f in files)
    for r in runs:
        if r.used:
            assert r.model and r.cluster and r.setup and r.strategy, r.key
            assert r.measured_tokens_per_gpu and r.measured_tokens_per_gpu > 0, r.key


@pytest.mark.parametrize("n", sorted(EXTERNAL_FILES))
def test_same_columns_as_the_calibration_file(n):
    with open(DATA / "measured_runs.csv", newline="") as f:
        header = next(csv.reader(f))
    for name in EXTERNAL_PART_FILES.get(n, (EXTERNAL_FILES[n],)):
        assert list(ExternalFile(name, JUDGED_EXTERNAL_SETS[n]).rows()[0]) == header
