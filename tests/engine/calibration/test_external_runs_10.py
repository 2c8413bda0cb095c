"""external_runs_10.csv (part A: papers' measured throughput tables) and, when present, external_runs_10b.csv (part B:
projects' docs, READMEs and blog posts) and external_runs_10c.csv (part C: runs in GitHub threads): external set 10, held
for session 13's one judge of the band challengers (docs/performance.md, "Protocol for session 13").
These are parse-only guards: expected values are the papers' printed figures quoted (paper, table) or arithmetic on
them, and counts are a tally of the rows as written - never the engine's output. Nothing here predicts a row's
throughput, and nothing fits or sets a band on set 10."""

import csv
import shutil
from pathlib import Path

from shardwise.engine.calibration import external
from shardwise.engine.calibration.external import (EXTERNAL_FILE, EXTERNAL_FILE_2, EXTERNAL_FILE_3, EXTERNAL_FILE_4,
                                                   EXTERNAL_FILE_5, EXTERNAL_FILE_6, EXTERNAL_FILE_7, EXTERNAL_FILE_10,
                                                   EXTERNAL_FILE_10B, EXTERNAL_FILE_10C, SET_8_FILES, SET_9_FILES,
                                                   SET_10_FILES, SET_10_SOURCES, load_external_runs,
                                                   load_external_runs_2, load_external_runs_3, load_external_runs_4,
                                                   load_external_runs_5, load_external_runs_6, load_external_runs_7,
                                                   load_external_runs_8, load_external_runs_9, load_external_runs_10)
from shardwise.engine.calibration.runs import DATA, load_runs, used_runs
from support.external_file import ExternalFile, assert_no_used_run_repeats_an_earlier_layout

SET_10 = ExternalFile(EXTERNAL_FILE_10, load_external_runs_10)
_rows = SET_10.rows
PACKAGE = Path(external.__file__).resolve().parents[2]  # the shardwise package (the worktree)
NAMES = ("external_runs_10", "EXTERNAL_FILE_10", "load_external_runs_10", "SET_10_FILES", "SET_10_SOURCES")


def _earlier_runs():
    return (load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3()
            + load_external_runs_4() + load_external_runs_5() + load_external_runs_6() + load_external_runs_7()
            + load_external_runs_8() + load_external_runs_9())


def _part(file: str):
    return [r for r in load_external_runs_10() if r.key.startswith(file + ":")]


def _header() -> list[str]:
    with open(DATA / "measured_runs.csv", newline="") as f:
        return next(csv.reader(f))


# --- Guards: nothing evaluates set 10 before its judge ---------------------------------------------------------------
def test_set_10_is_in_no_judged_set_table_and_no_band_method():
    from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS

    assert 10 not in external.JUDGED_EXTERNAL_SETS and 10 not in external.EXTERNAL_FILES
    assert not set(SET_10_FILES) & set(external.EXTERNAL_FILES.values())
    assert all(10 not in sets for sets in EXTERNAL_SETS_IN_BANDS.values())
    # its parts are listed (the lead's judge reads them) and read as one set
    assert external.EXTERNAL_PART_FILES[10] == SET_10_FILES == (EXTERNAL_FILE_10, EXTERNAL_FILE_10B, EXTERNAL_FILE_10C)
    assert external.TWO_PART_SETS[10] == SET_10_FILES


def test_nothing_but_the_loader_names_set_10_in_the_engine_the_benchmarks_or_the_performance_doc():
    engine_and_tools = [p for p in PACKAGE.rglob("*.py") if "tests" not in p.parts and p.name != "external.py"
                        and ".venv" not in p.parts]
    assert any(p.parent.name == "benchmarks" for p in engine_and_tools)  # the scan reads the package and benchmarks
    for path in engine_and_tools + [PACKAGE / "docs" / "performance.md"]:
        text = path.read_text(encoding="utf-8", errors="ignore")
        assert not any(name in text for name in NAMES), path


def test_set_10_never_reaches_the_fit_the_bands_or_sets_1_to_9():
    for file in SET_10_FILES:
        assert not any(r.key.startswith(file) for r in load_runs())
        assert not any(r.key.startswith(file) for r in used_runs())
    for file, load in ((EXTERNAL_FILE, load_external_runs), (EXTERNAL_FILE_2, load_external_runs_2),
                       (EXTERNAL_FILE_3, load_external_runs_3), (EXTERNAL_FILE_4, load_external_runs_4),
                       (EXTERNAL_FILE_5, load_external_runs_5), (EXTERNAL_FILE_6, load_external_runs_6),
                       (EXTERNAL_FILE_7, load_external_runs_7)):
        assert all(r.key.startswith(file + ":") for r in load())
    assert all(r.key.split(":")[0] in SET_8_FILES for r in load_external_runs_8())
    assert all(r.key.split(":")[0] in SET_9_FILES for r in load_external_runs_9())
    assert all(r.key.split(":")[0] in SET_10_FILES for r in load_external_runs_10())


def test_every_part_file_has_the_calibration_files_columns_and_one_run_per_row():
    present = [f for f in SET_10_FILES if (DATA / f).exists()]
    assert present[0] == EXTERNAL_FILE_10  # part A's file is this branch's; B and C join when their files exist
    for file in present:
        with open(DATA / file, newline="") as f:
            assert next(csv.reader(f)) == _header(), file
        assert len(_part(file)) == len(ExternalFile(file, load_external_runs_10).rows()), file


def test_set_10_sources_are_no_earlier_files_sources():
    sources = {r.source for r in load_external_runs_10()}
    assert not sources & {r.source for r in _earlier_runs()}, sources


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_9():
    assert_no_used_run_repeats_an_earlier_layout(load_external_runs_10(), _earlier_runs())


def test_every_row_is_used_or_excluded_with_a_reason_and_every_used_run_is_complete():
    for r in load_external_runs_10():
        if r.used:
            assert r.model and r.cluster and r.setup and r.strategy, r.key
            assert r.measured_tokens_per_gpu and r.measured_tokens_per_gpu > 0, r.key
        else:
            assert r.status.startswith("excluded: ") and len(r.status) > len("excluded: ") + 5, (r.key, r.status)


def test_every_part_a_row_has_a_short_source_name_of_its_paper():
    for run in _part(EXTERNAL_FILE_10):
        assert run.source in SET_10_SOURCES.values(), (run.key, run.source)


# --- The loader: parts B and C join when their files exist, one configuration keeps one row ------------------------
def _test_row(**cells) -> dict:
    row = dict.fromkeys(_header(), "")
    row.update(source="a part-B test source", model="Llama 3.1 8B", gpu="H100 80GB SXM", num_gpus="8",
               framework="torchtitan (a test stack)", seq_len="8192", global_batch_seqs="8", tp="1", pp="1",
               precision="BF16", measured_tokens_per_sec_per_gpu="1000", notes="")
    row.update(cells)
    return row


def _write(path: Path, rows: list[dict]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=_header())
        w.writeheader()
        w.writerows(rows)


def test_parts_b_and_c_are_loaded_with_part_a_when_their_files_exist(tmp_path, monkeypatch):
    shutil.copy(DATA / EXTERNAL_FILE_10, tmp_path / EXTERNAL_FILE_10)
    monkeypatch.setattr(external, "DATA", tmp_path)
    rows_a = len(_rows())
    assert len(external.load_external_runs_10.__wrapped__()) == rows_a  # neither B nor C: part A alone
    b = _test_row()
    _write(tmp_path / EXTERNAL_FILE_10B, [b, {**b, "measured_tokens_per_sec_per_gpu": "1100"}])  # one config twice
    thread = _test_row(source="GitHub issue NVIDIA/Megatron-LM#12345", num_gpus="16", global_batch_seqs="16")
    _write(tmp_path / EXTERNAL_FILE_10C, [thread, {**thread, "source": "GitHub pull request pytorch/torchtitan#678"}])
    runs = external.load_external_runs_10.__wrapped__()
    assert len(runs) == rows_a + 4
    b1, b2, c1, c2 = runs[-4:]
    assert b1.key == f"{EXTERNAL_FILE_10B}:2" and b1.used and b1.source == "a part-b test source"
    assert b2.status == f"excluded: same configuration as an earlier row of set 10 ({EXTERNAL_FILE_10B}:2)"
    # each thread is its own source (set 9c's reading), never cut to a calibration source's name
    assert (c1.source, c2.source) == ("gh:nvidia/megatron-lm#12345", "gh:pytorch/torchtitan#678")
    assert c1.used and c2.used  # two threads: two sources, so neither folds into the other
    (tmp_path / EXTERNAL_FILE_10B).unlink()
    assert len(external.load_external_runs_10.__wrapped__()) == rows_a + 2  # part C without part B


def test_set_9_still_reads_its_three_parts_and_names_its_threads():
    # set 9's SOURCES.md total (the lead's reading after part C): 294 rows, 35 used from 8 sources
    runs = load_external_runs_9()
    assert len(runs) == 62 + 152 + 80 and sum(r.used for r in runs) == 35
    assert len({r.source for r in runs if r.used}) == 8
    assert all(r.source.startswith("gh:") for r in runs if r.key.startswith(external.EXTERNAL_FILE_9C + ":"))
