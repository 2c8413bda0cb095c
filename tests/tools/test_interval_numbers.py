"""The explain entry's numbers on the 80 % intervals count what the shipped bands were estimated on, read
from the data files themselves (not from the generated bands the entry reads)."""

from shardwise.engine.assumptions import error_bands as eb
from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS
from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
from shardwise.engine.calibration.out_of_fold import load_out_of_fold
from shardwise.tools.interval_numbers import interval_numbers


def test_calibration_and_external_runs_counted_apart():
    n = interval_numbers()
    assert n["calibration_runs"] == len(load_out_of_fold())  # every used calibration run, held out once
    in_bands = EXTERNAL_SETS_IN_BANDS.get(eb.THROUGHPUT_BAND_METHOD, ())
    assert n["external_runs_in_bands"] == sum(sum(r.used for r in JUDGED_EXTERNAL_SETS[k]()) for k in in_bands)
    # the coverage quoted pools every judged set outside the bands (a check, never in-sample): runs counted
    # from the data files, insides from the stored first-run checks
    unseen = [k for k in JUDGED_EXTERNAL_SETS if k not in in_bands]
    assert n["external_runs"] == sum(sum(r.used for r in JUDGED_EXTERNAL_SETS[k]()) for k in unseen)
    assert [k for k in n["external_sets"].replace(" and ", ", ").split(", ") if k] == [str(k) for k in unseen]
