"""external_runs_10.csv (part A: papers' measured throughput tables) and, when present, external_runs_10b.csv (part B:
projects' docs, READMEs and blog posts) and external_runs_10c.csv (part C: runs in GitHub threads): external set 10, judged
once, in session 13, as the one judge of the band challengers (docs/performance.md, "Protocol for session 13").
These are parse-only guards: expected values are the papers' printed figures quoted (paper, table) or arithmetic on
them, and counts are a tally of the rows as written - never the engine's output. Nothing here predicts a row's
throughput, and nothing fits or sets a band on set 10."""

import csv
import shutil
from collections import Counter
from pathlib import Path

import pytest

from shardwise.engine.calibration import external
from shardwise.engine.calibration.external import (EXTERNAL_FILE_10, EXTERNAL_FILE_10B, EXTERNAL_FILE_10C, SET_10_FILES,
                                                   SET_10_SOURCES, load_external_runs, load_external_runs_2,
                                                   load_external_runs_3, load_external_runs_4, load_external_runs_5,
                                                   load_external_runs_6, load_external_runs_7, load_external_runs_8,
                                                   load_external_runs_9, load_external_runs_10)
from shardwise.engine.calibration.runs import DATA, load_runs
from support.external_file import (ExternalFile, assert_every_row_used_or_excluded_with_a_reason,
                                   assert_in_its_own_files_only, assert_judged_and_in_no_band_method_but,
                                   assert_no_used_run_repeats_an_earlier_layout)

SET_10 = ExternalFile(EXTERNAL_FILE_10, load_external_runs_10)
_rows = SET_10.rows


def _earlier_runs():
    return (load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3()
            + load_external_runs_4() + load_external_runs_5() + load_external_runs_6() + load_external_runs_7()
            + load_external_runs_8() + load_external_runs_9())


def _part(file: str):
    return [r for r in load_external_runs_10() if r.key.startswith(file + ":")]


def _header() -> list[str]:
    with open(DATA / "measured_runs.csv", newline="") as f:
        return next(csv.reader(f))


# --- Guards: set 10 has had its first run (session 13); no band method is estimated on it ---------------------------
def test_set_10_is_judged_in_no_band_method_and_named_by_no_engine_module_but_the_loader():
    # Set 10 joined the judged-set tables for its first run in session 13 (docs/performance.md, "Protocol for session
    # 13"), judging band challengers v11 and v12 against v10; no method's bands hold it.
    assert_judged_and_in_no_band_method_but(10)
    # its parts are listed (the judge reads them) and read as one set
    assert external.EXTERNAL_PART_FILES[10] == SET_10_FILES == (EXTERNAL_FILE_10, EXTERNAL_FILE_10B, EXTERNAL_FILE_10C)
    assert external.TWO_PART_SETS[10] == SET_10_FILES


def test_set_10_never_reaches_the_fit_the_bands_or_sets_1_to_9():
    assert_in_its_own_files_only(SET_10_FILES, load_external_runs_10)


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
    assert_every_row_used_or_excluded_with_a_reason(load_external_runs_10())


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


# --- Part A: the Kuaishou USENIX ATC '24 activation-rematerialization paper's artifact README ------------------------
# kwai/Megatron-Kwai@b2646e4d9f examples/atc24/README.md: the minimum demo's table (7B, 4 GPUs, A800/H800 columns),
# 'Reproduce Table 8' (Llama-175B on 256 H800) and 'Reproduce Figure 9' (41 configurations on 32-256 H800).
def _kwai(table: str):
    return [(row, run) for row, run in zip(_rows(), _part(EXTERNAL_FILE_10)) if row["source"].endswith(table)]


def _flops_per_token(layers: int, d: int, ffn: int, vocab: int, seq: int) -> float:
    """The artifact's MFU count, read off its printed pairs: 6 x (L x (4 d^2 + 3 d ffn) + V d) dense (SwiGLU, one
    vocabulary matrix) plus causal attention 6 L d s (half of Megatron's 12 L d s)."""
    return 6 * (layers * (4 * d * d + 3 * d * ffn) + vocab * d) + 6 * layers * d * seq


def test_kwai_printed_mfu_is_the_printed_tokens_per_gpu_times_the_models_flops():
    # README: 'The throughput metric is "Tokens per Second per GPU"'; peaks: H800 989 and A800 312 dense BF16 TFLOP/s
    # (the H100 SXM / A100 datasheet figures; the export parts differ in NVLink only)
    seven_b = _flops_per_token(32, 4096, 11008, 32004, 12288)
    for tokens, mfu, peak in ((6639, 33.1, 989e12), (3016, 47.7, 312e12), (6138, 30.6, 989e12), (2847, 45.0, 312e12)):
        assert 100 * tokens * seven_b / peak == pytest.approx(mfu, abs=0.15)
    b175 = _flops_per_token(96, 12288, 32768, 32004, 8192)
    for tokens, mfu in ((299, 33.4), (278, 31.0)):
        assert 100 * tokens * b175 / 989e12 == pytest.approx(mfu, abs=0.15)
    for row, _ in _kwai("Table 8") + _kwai("minimum demo"):
        if row["measured_tokens_per_sec_per_gpu"]:
            assert f"{row['measured_tokens_per_sec_per_gpu']} / {row['measured_mfu']}%" in row["notes"]


def test_kwai_figure_9_throughput_is_the_whole_jobs_and_its_layouts_multiply_out():
    rows = _kwai("Figure 9 table")
    assert len(rows) == 10 + 15 + 16  # Llama-175B, Llama-65B, Llama2-70B rows as printed
    printed = {(r["model"].split(" ")[0], int(r["num_gpus"])): r for r, _ in rows}
    # 'Llama-175B | 4096 | 256 | 256 | 2 | 2 | 16 | 1 | no | 0.522 | 97577': 97,577 / 256 = 381.2 per GPU; read per GPU it
    # would be 97,577 x 1.07e12 FLOP = 105 PFLOP/s on one H800
    r = printed[("Llama-175B", 256)]
    assert float(r["measured_tokens_per_sec_per_gpu"]) == round(97577 / 256, 1)
    assert 97577 * _flops_per_token(96, 12288, 32768, 32004, 4096) > 100 * 989e12
    for row, _ in rows:
        tp, cp, pp, vpp, gpus, gbs = (int(row[k]) for k in ("tp", "cp", "pp", "vpp", "num_gpus", "global_batch_seqs"))
        layers = 96 if row["model"].startswith("Llama-175B") else 80
        dp = gpus // (tp * cp * pp)
        assert dp * tp * cp * pp == gpus and gbs % dp == 0 and int(row["dp"]) == dp
        assert vpp * pp * int(row["notes"].split("--num-layers-per-virtual-pipeline-stage ")[1].split(")")[0]) == layers
        total = int(row["notes"].split("tokens/s/GPU DERIVED = ")[1].split(" ")[0])
        assert float(row["measured_tokens_per_sec_per_gpu"]) == round(total / gpus, 1)


def _printed_figure_9_cells(row: dict) -> list[str]:
    """The README row a Figure 9 row quotes: model | SEQ_LENGTH | NUM_GPUS | B | t | c | p | l | ckpt | alpha | tokens/s."""
    return [c.strip() for c in row["notes"].split("row '")[1].split("'")[0].split("|")]


def test_kwai_rows_of_the_papers_own_method_say_not_represented():
    # CKPT=ours (recompute of MLP activation functions and norms) or OFFLOAD_ALPHA > 0 (activation offloading to host)
    for row, _ in _kwai("Figure 9 table"):
        cells = _printed_figure_9_cells(row)
        ours_or_offload = cells[8] == "ours" or float(cells[9]) > 0
        assert ("NOT REPRESENTED: the paper's method" in row["notes"]) == ours_or_offload, row["source_locator"]
    for row, _ in _kwai("Table 8") + _kwai("minimum demo"):
        ours = "CKPT=ours" in row["notes"]
        assert ("NOT REPRESENTED: the paper's method" in row["notes"]) == ours, row["source_locator"]
    # 7 of Figure 9's 41 configurations are the plain plan (CKPT=no, OFFLOAD_ALPHA=0.000): 65B on 200/192/112 GPUs and
    # 70B on 256/240/192/160 GPUs
    plain = [r for r, _ in _kwai("Figure 9 table") if "NOT REPRESENTED" not in r["notes"]]
    assert sorted((r["model"].split(" ")[0], int(r["num_gpus"])) for r in plain) == [
        ("Llama", 160), ("Llama", 192), ("Llama", 240), ("Llama", 256),
        ("Llama-65B", 112), ("Llama-65B", 192), ("Llama-65B", 200)]


# --- The tally of part A as written (counted from the rows while writing them) -----------------------------------------
KNOWN_EXCLUSIONS = ("unknown GPU", "no architecture for", "the engine does not represent the run",
                    "no measured throughput", "parallel layout (TP/PP) not stated", "the layout of an earlier file's row")
TALLY = {  # (short source, kind) -> rows
    # H800 rows whose model the catalog holds (LLaMA-7B dims, Llama 2 70B): the demo's 4 H800 cells, Figure 9's 16 70B rows
    ("kwai-remat-atc24", "unknown GPU"): 4 + 16 + 4,  # ... and the demo's 4 A800 cells
    # Llama-65B (Figure 9: 15) and Llama-175B (Figure 9: 10, Table 8: 4) are no catalog models
    ("kwai-remat-atc24", "no architecture for"): 15 + 10 + 4,
}


def _kind(status: str) -> str:
    return "used" if status == "used" else next(k for k in KNOWN_EXCLUSIONS if k in status)


def test_part_a_rows_used_and_excluded_by_kind_are_the_tally_of_the_file():
    runs = _part(EXTERNAL_FILE_10)
    assert len(runs) == len(_rows()) == sum(TALLY.values())
    assert Counter((r.source, _kind(r.status)) for r in runs) == TALLY
