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
from shardwise.engine.calibration.external import (EXTERNAL_FILE_9, EXTERNAL_FILE_9B, SET_9_FILES, load_external_runs,
                                                   load_external_runs_2, load_external_runs_3, load_external_runs_4,
                                                   load_external_runs_5, load_external_runs_6, load_external_runs_7,
                                                   load_external_runs_8, load_external_runs_9)
from shardwise.engine.calibration.runs import DATA, load_runs
from support.external_file import (ExternalFile, assert_in_its_own_files_only,
                                   assert_judged_and_in_no_band_method_but, assert_no_used_run_repeats_an_earlier_layout)

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


# --- Guards: set 9 has had its first run (session 12); no band method is estimated on it ----------------------------
def test_set_9_is_judged_in_no_band_method_and_named_by_no_engine_module_but_the_loader():
    # Set 9 joined the judged-set tables for its first run in session 12 (docs/performance.md, "Protocol for session
    # 12"), judging band challengers v9 and v10 against v3; no method's bands held it then. Session 13's challengers
    # v11 and v12 (written after that first run, "Protocol for session 13") hold sets 1-9.
    assert_judged_and_in_no_band_method_but(9, later=("v11", "v12"))
    assert external.EXTERNAL_PART_FILES[9] == SET_9_FILES == (EXTERNAL_FILE_9, EXTERNAL_FILE_9B, external.EXTERNAL_FILE_9C)


def test_set_9_never_reaches_the_fit_the_bands_or_sets_1_to_8():
    assert_in_its_own_files_only(SET_9_FILES, load_external_runs_9)


def test_set_9_sources_are_no_earlier_files_sources():
    sources = {r.source for r in load_external_runs_9()}
    assert not sources & {r.source for r in _earlier_runs()}, sources


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_8():
    assert_no_used_run_repeats_an_earlier_layout(load_external_runs_9(), _earlier_runs())


# --- The loader: part B's file joins when it exists, one configuration keeps one row --------------------------------
def test_part_b_rows_are_loaded_with_part_a_when_their_file_exists(tmp_path, monkeypatch):
    shutil.copy(DATA / EXTERNAL_FILE_9, tmp_path / EXTERNAL_FILE_9)
    rows_a = len(_rows())
    with open(DATA / EXTERNAL_FILE_9, newline="") as f:
        header = next(csv.reader(f))
    b_row = dict.fromkeys(header, "")
    b_row.update(source="a part-B test source", model="Llama 3.1 8B", gpu="H100 80GB SXM", num_gpus="8",
                 framework="torchtitan (a part-B test stack)", seq_len="8192", global_batch_seqs="8", tp="1", pp="1", precision="BF16",
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
    # the two-part reading is shared (_load_parts): set 8's run count is its SOURCES.md total, 287 + 76 rows; 87 used
    # as collected, 99 since session 12's gpus_per_node reading lifted KempnerForge's 12 multi-node rows
    runs = load_external_runs_8()
    assert len(runs) == 287 + 76 and sum(r.used for r in runs) == 87 + 12


# --- TorchTitan paper (arXiv:2410.06511, ICLR 2025 text): Tables 1-6 on 8-512 H100 ----------------------------------
# Printed per GPU ('Stats per GPU'): Throughput (Tok/Sec) and Memory (GiB); Table 4 prints FSDP 4, TP 8, PP 16 and
# global batch 128 for Llama 3.1 405B on 512 GPUs: 4 x 8 x 16 = 512.
def _torchtitan():
    return [(row, run) for row, run in zip(_rows(), load_external_runs_9()) if row["source"].startswith("TorchTitan paper")]


def test_torchtitan_paper_rows_are_its_six_tables_as_printed():
    rows = _torchtitan()
    printed = {"Table 1": [6258, 6674, 9409], "Table 2": [5645, 6482, 9319], "Table 3": [897, 1010], "Table 4": [100, 130],
               "Table 5": [3890, 2540, 1071, 548], "Table 6": [76, 47, 31, 16]}
    for table, figures in printed.items():
        assert [float(r["measured_tokens_per_sec_per_gpu"]) for r, _ in rows if r["source"].endswith(table)] == figures
    # Table 1's comparison column: +6.64 % and +50.35 % over 6,258 (the paper's own arithmetic on its cells)
    assert 6674 / 6258 - 1 == pytest.approx(0.0664, abs=5e-4) and 9409 / 6258 - 1 == pytest.approx(0.5035, abs=5e-4)
    # Table 4: FSDP 4 x TP 8 x PP 16 = 512 GPUs; local batch 32 x FSDP 4 = global batch 128
    (row, run), = [(r, u) for r, u in rows if r["source"].endswith("Table 4") and u.used]
    assert 4 * 8 * 16 == int(row["num_gpus"]) and 32 * 4 == int(row["global_batch_seqs"])
    assert (run.strategy.tp, run.strategy.pp, run.cluster.num_gpus, run.setup.precision) == (8, 16, 512, "fp8")
    assert run.measured_tokens_per_gpu == 100 and run.source == "torchtitan-paper-2024"


def test_torchtitan_paper_rows_of_the_calibration_benchmark_file_are_written_and_excluded():
    # Tables 5 and 6 print the calibration file's figures unchanged (measured_runs.csv lines 224-227, 232-235: 3,890 ...
    # 548 and 76 ... 16): re-prints; Tables 1-3 re-measure the calibration plans (other figures, same layout)
    for row, run in _torchtitan():
        table = row["source"].rsplit(" ", 1)[1]
        if table in ("5", "6"):
            assert "a re-print of an earlier file's run" in run.status
        elif table in ("1", "2", "3"):
            assert "the layout of an earlier file's row" in run.status
    assert sum(run.used for _, run in _torchtitan()) == 1


# --- DistFlashAttn paper (arXiv:2310.03294): Table 1 and Table 4, per-iteration seconds on 1-2 DGX A100 boxes -------
def _distflash(table="Table"):
    return [(row, run) for row, run in zip(_rows(), load_external_runs_9())
            if row["source"].startswith(f"DistFlashAttn paper (Li et al., 2023) {table}")]


def test_distflashattn_tokens_per_gpu_are_one_sequence_over_the_printed_seconds():
    # Table 1, Megatron-LM, 1x8, LLaMA-7B: 8K/16K/32K per GPU (64K/128K/256K total) in 6.81/20.93/72.75 s
    used = [(row, run) for row, run in _distflash("Table 1") if run.used]
    assert len(used) == 3
    for (row, run), (total_k, secs) in zip(used, ((64, 6.81), (128, 20.93), (256, 72.75))):
        assert run.setup.seq_len == total_k * 1024 and run.setup.global_batch == 1
        assert run.measured_tokens_per_gpu == pytest.approx(total_k * 1024 / secs / 8, abs=0.01)
        assert (run.strategy.tp, run.strategy.pp, run.cluster.num_gpus, run.strategy.recompute) == (8, 1, 8, "full")
        assert run.model.name == "Llama-2-7B" and run.cluster.gpu.id == "a100-80gb"
        assert not run.tp_comm_overlap  # 'vanilla TP': Megatron-LM's --tp-comm-overlap is opt-in, none stated


def test_distflashattn_one_sequence_per_iteration_is_what_the_printed_time_allows():
    # 64K tokens of LLaMA-7B in 6.81 s on 8 A100: 6 x 6.7e9 x 65,536 (dense) + 6 x 32 layers x 65,536 x 4,096 per token
    # (causal attention, forward + backward) x 65,536 tokens = 6.0e15 FLOP, i.e. 110 TFLOP/s per GPU (35 % of 312)
    # without the recompute; two sequences per iteration would need 220 (with recompute ~290) of the A100's 312
    tokens = 65_536
    flops = 6 * 6.7e9 * tokens + 6 * 32 * tokens * 4096 * tokens
    per_gpu = flops / 6.81 / 8 / 1e12
    assert 100 < per_gpu < 120 and 2 * per_gpu * 4 / 3 > 0.9 * 312


def test_distflashattn_megatron_is_tp_over_all_gpus_as_its_text_says():
    # Section 4.2: LLaMA-33H 'needs to pad 15 dummy heads to support a parallelism degree of 16' on the 2-box runs: 33 + 15
    # = 48 = 3 x 16; on one box TP 8 pads 33 to 40
    assert (33 + 15) % 16 == 0 and -(-33 // 8) * 8 == 40
    for row, run in _distflash("Table 1"):
        if row["framework"].startswith("Megatron-LM"):
            assert int(row["tp"]) == int(row["num_gpus"])
            if row["num_gpus"] == "16" and row["model"] == "LLaMA-7B":
                assert "the engine does not represent the run: TP 16 across two boxes" in run.status


# --- The tally of the file as written (counted from the rows' notes while writing them) ------------------------------
KNOWN_EXCLUSIONS = ("the engine does not represent the run", "no architecture for", "parallel layout (TP/PP) not stated",
                    "the layout of an earlier file's row", "a re-print of an earlier file's run")
TALLY = {  # (short source, kind) -> rows
    ("torchtitan-paper-2024", "used"): 1,  # Table 4 1F1B: Llama 3.1 405B FSDP 4 x TP 8 x PP 16 on 512 H100
    ("torchtitan-paper-2024", "the layout of an earlier file's row"): 3 + 3 + 2,  # Tables 1-3 re-measure calibration plans
    ("torchtitan-paper-2024", "a re-print of an earlier file's run"): 4 + 4,  # Tables 5 and 6 = calibration figures
    ("torchtitan-paper-2024", "the engine does not represent the run"): 1,  # Table 4 interleaved 1F1B (stages not stated)
    ("distflashattn-2023", "used"): 3,  # Table 1 Megatron-LM LLaMA-7B on one DGX A100 box, 64K-256K
    ("distflashattn-2023", "the engine does not represent the run"): 3,  # Megatron-LM LLaMA-7B on two boxes (100 Gb/s)
    # LLaMA-GQA (Table 1: 2 methods x 2 box counts x 3 lengths) and LLaMA-33H (Table 1: 12, Table 4: 4)
    ("distflashattn-2023", "no architecture for"): 12 + 12 + 4,
    # DISTFLASHATTN's own LLaMA-7B rows (Table 1: 6, Table 4: 2) and Ulysses' (Table 4: 2): no TP/PP layout
    ("distflashattn-2023", "parallel layout (TP/PP) not stated"): 6 + 2 + 2,
}


def _kind(status: str) -> str:
    return "used" if status == "used" else next(k for k in KNOWN_EXCLUSIONS if k in status)


def test_every_part_a_row_is_used_or_excluded_with_a_stated_reason():
    assert all(r.used or any(reason in r.status for reason in KNOWN_EXCLUSIONS) for r in _part_a())


def test_part_a_rows_used_and_excluded_by_kind_are_the_tally_of_the_file():
    runs = _part_a()
    assert len(runs) == len(_rows()) == sum(TALLY.values())
    assert Counter((r.source, _kind(r.status)) for r in runs) == TALLY
