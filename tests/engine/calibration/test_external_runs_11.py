"""external_runs_11.csv (part A: papers) and external_runs_11b.csv (part B: docs, result folders and threads):
external set 11, collected in session 13 for session 14's judge of engine candidate E12 and the bands
(docs/performance.md, "Protocol for session 14's judge"). Parse-only guards: counts are tallies of the rows as
written, never the engine's output. Nothing here predicts a row's throughput, and nothing fits or sets a band on
set 11."""

import csv
from collections import Counter
from pathlib import Path

from shardwise.engine.calibration import external
from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS
from shardwise.engine.calibration.external import (EXTERNAL_FILE_11, EXTERNAL_FILE_11B, SET_11_FILES, SET_11_SOURCES,
                                                   JUDGED_EXTERNAL_SETS, load_external_runs_11)
from shardwise.engine.calibration.runs import DATA, load_runs
from support.external_file import (assert_every_row_used_or_excluded_with_a_reason, assert_in_its_own_files_only,
                                   assert_no_used_run_repeats_an_earlier_layout)

NAMES = ("external_runs_11", "EXTERNAL_FILE_11", "load_external_runs_11", "SET_11_FILES", "SET_11_SOURCES")


def _earlier_runs():
    return load_runs() + tuple(r for n in sorted(JUDGED_EXTERNAL_SETS) for r in JUDGED_EXTERNAL_SETS[n]())


def _csv_rows(file: str) -> list[dict]:
    with open(DATA / file, newline="") as f:
        return list(csv.DictReader(f))


# --- Guards: nothing evaluates set 11 before session 14's judge ------------------------------------------------------
def test_set_11_is_in_no_judged_set_table_and_no_band_method():
    assert 11 not in external.JUDGED_EXTERNAL_SETS and 11 not in external.EXTERNAL_FILES
    assert not set(SET_11_FILES) & set(external.EXTERNAL_FILES.values())
    assert all(11 not in sets for sets in EXTERNAL_SETS_IN_BANDS.values())
    assert external.EXTERNAL_PART_FILES[11] == external.TWO_PART_SETS[11] == SET_11_FILES == (EXTERNAL_FILE_11,
                                                                                              EXTERNAL_FILE_11B)


def test_nothing_but_the_loader_names_set_11_in_the_engine_or_the_benchmarks():
    package = Path(external.__file__).resolve().parents[2]
    scanned = [p for p in package.rglob("*.py") if "tests" not in p.parts and ".venv" not in p.parts
               and p.name != "external.py"]
    assert any(p.parent.name == "benchmarks" for p in scanned)  # the scan reads the benchmarks too
    for path in scanned:
        text = path.read_text(encoding="utf-8", errors="ignore")
        assert not any(name in text for name in NAMES), path


def test_set_11_never_reaches_the_fit_or_the_bands():
    assert_in_its_own_files_only(SET_11_FILES, load_external_runs_11)


def test_every_source_has_a_short_name_and_none_is_an_earlier_files():
    # the collectors' tally (SOURCES.md): part A one paper (25 rows), part B seven sources (121 rows)
    by_source = Counter(r.source for r in load_external_runs_11())
    assert set(by_source) == set(SET_11_SOURCES.values())
    assert by_source["sdp4bit-paper"] == len(_csv_rows(EXTERNAL_FILE_11)) == 25
    assert sum(by_source.values()) - 25 == len(_csv_rows(EXTERNAL_FILE_11B)) == 121
    assert not set(by_source) & {r.source for r in _earlier_runs()}


def test_every_row_is_used_or_excluded_with_a_reason():
    assert_every_row_used_or_excluded_with_a_reason(load_external_runs_11())


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_10():
    assert_no_used_run_repeats_an_earlier_layout(load_external_runs_11(), _earlier_runs())
