"""external_runs_9.csv (part A: papers' measured throughput tables) and, when present, external_runs_9b.csv (part B):
external set 9, held for session 12's one judge of the band method (docs/performance.md, "Protocol for session 12").
Expected values below are the papers' printed figures quoted (paper, table) or arithmetic on them, and the counts are a
tally of the rows as written - never the engine's output. Nothing here predicts a row's throughput, and nothing fits
or sets a band on set 9."""

import csv
import shutil
from collections import Counter
from pathlib import Path

import pytest

from shardwise.engine.calibration import external
from shardwise.engine.calibration.external import (EXTERNAL_FILE, EXTERNAL_FILE_2, EXTERNAL_FILE_3, EXTERNAL_FILE_4,
                                                   EXTERNAL_FILE_5, EXTERNAL_FILE_6, EXTERNAL_FILE_7, EXTERNAL_FILE_8,
                                                   EXTERNAL_FILE_8B, EXTERNAL_FILE_9, EXTERNAL_FILE_9B,
                                                   load_external_runs, load_external_runs_2, load_external_runs_3,
                                                   load_external_runs_4, load_external_runs_5, load_external_runs_6,
                                                   load_external_runs_7, load_external_runs_8, load_external_runs_9)
from shardwise.engine.calibration.runs import DATA, load_runs, used_runs
from support.external_file import ExternalFile, assert_no_used_run_repeats_an_earlier_layout

SET_9 = ExternalFile(EXTERNAL_FILE_9, load_external_runs_9)
_rows, _key, _run, _row = SET_9.rows, SET_9.key, SET_9.run, SET_9.row
PACKAGE = Path(external.__file__).resolve().parents[2]  # the shardwise package (the worktree)
NAMES = ("external_runs_9", "EXTERNAL_FILE_9", "load_external_runs_9", "SET_9_FILES")


def _earlier_runs():
    return (load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3()
            + load_external_runs_4() + load_external_runs_5() + load_external_runs_6() + load_external_runs_7()
            + load_external_runs_8())


def _part_a():
    return [r for r in load_external_runs_9() if r.key.startswith(EXTERNAL_FILE_9 + ":")]


# --- Guards: nothing evaluates set 9 before its judge --------------------------------------------------------------
def test_set_9_is_in_no_judged_set_table_and_no_band_method():
    from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS

    assert 9 not in external.JUDGED_EXTERNAL_SETS and 9 not in external.EXTERNAL_FILES
    assert 9 not in external.EXTERNAL_PART_FILES
    assert not {EXTERNAL_FILE_9, EXTERNAL_FILE_9B} & set(external.EXTERNAL_FILES.values())
    # v9/v10 (the protocol's challengers) hold sets 1-8 at most; no method's bands hold set 9
    assert all(9 not in sets for sets in EXTERNAL_SETS_IN_BANDS.values())


def test_nothing_but_the_loader_names_set_9_in_the_engine_the_benchmarks_or_the_performance_doc():
    engine_and_tools = [p for p in PACKAGE.rglob("*.py") if "tests" not in p.parts and p.name != "external.py"
                        and ".venv" not in p.parts]
    assert any(p.parent.name == "benchmarks" for p in engine_and_tools)  # the scan reads the package and benchmarks
    for path in engine_and_tools + [PACKAGE / "docs" / "performance.md"]:
        text = path.read_text(encoding="utf-8", errors="ignore")
        assert not any(name in text for name in NAMES), path


def test_set_9_never_reaches_the_fit_the_bands_or_sets_1_to_8():
    for file in (EXTERNAL_FILE_9, EXTERNAL_FILE_9B):
        assert not any(r.key.startswith(file) for r in load_runs())
        assert not any(r.key.startswith(file) for r in used_runs())
    for file, load in ((EXTERNAL_FILE, load_external_runs), (EXTERNAL_FILE_2, load_external_runs_2),
                       (EXTERNAL_FILE_3, load_external_runs_3), (EXTERNAL_FILE_4, load_external_runs_4),
                       (EXTERNAL_FILE_5, load_external_runs_5), (EXTERNAL_FILE_6, load_external_runs_6),
                       (EXTERNAL_FILE_7, load_external_runs_7)):
        assert all(r.key.startswith(file + ":") for r in load())
    assert all(r.key.split(":")[0] in (EXTERNAL_FILE_8, EXTERNAL_FILE_8B) for r in load_external_runs_8())
    assert all(r.key.split(":")[0] in (EXTERNAL_FILE_9, EXTERNAL_FILE_9B) for r in load_external_runs_9())


def test_set_9_sources_are_no_earlier_files_sources():
    sources = {r.source for r in load_external_runs_9()}
    assert not sources & {r.source for r in _earlier_runs()}, sources


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_8():
    assert_no_used_run_repeats_an_earlier_layout(load_external_runs_9(), _earlier_runs())


def test_same_columns_as_the_calibration_file():
    with open(DATA / "measured_runs.csv", newline="") as f:
        header = next(csv.reader(f))
    with open(DATA / EXTERNAL_FILE_9, newline="") as f:
        assert next(csv.reader(f)) == header


# --- The loader: part B's file joins when it exists, one configuration keeps one row --------------------------------
def test_part_b_rows_are_loaded_with_part_a_when_their_file_exists(tmp_path, monkeypatch):
    shutil.copy(DATA / EXTERNAL_FILE_9, tmp_path / EXTERNAL_FILE_9)
    rows_a = len(_rows())
    with open(DATA / EXTERNAL_FILE_9, newline="") as f:
        header = next(csv.reader(f))
    b_row = dict.fromkeys(header, "")
    b_row.update(source="a part-B test source", model="Llama 3.1 8B", gpu="H100 80GB SXM", num_gpus="8",
                 framework="test", seq_len="8192", global_batch_seqs="8", tp="1", pp="1", precision="BF16",
                 measured_tokens_per_sec_per_gpu="1000", notes="")
    with open(tmp_path / EXTERNAL_FILE_9B, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerow(b_row)
        w.writerow({**b_row, "measured_tokens_per_sec_per_gpu": "1100"})  # the same configuration printed twice
    monkeypatch.setattr(external, "DATA", tmp_path)
    runs = external.load_external_runs_9.__wrapped__()
    assert len(runs) == rows_a + 2 and runs[-2].key == f"{EXTERNAL_FILE_9B}:2" and runs[-2].used
    assert runs[-1].status == f"excluded: same configuration as an earlier row of set 9 ({EXTERNAL_FILE_9B}:2)"
    assert runs[-2].source == "a part-b test source"  # no paper name of part A: runs.py's short_source
    (tmp_path / EXTERNAL_FILE_9B).unlink()
    assert len(external.load_external_runs_9.__wrapped__()) == rows_a  # no part-B file: part A alone


def test_set_8_still_reads_its_two_parts_as_one_set():
    # the two-part reading is shared (_load_parts): set 8's run count is its SOURCES.md total, 287 + 76 rows
    runs = load_external_runs_8()
    assert len(runs) == 287 + 76 and sum(r.used for r in runs) == 87
