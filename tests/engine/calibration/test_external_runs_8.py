"""external_runs_8.csv (part A: papers' measured throughput tables) and, when present, external_runs_8b.csv (part B):
external set 8, first run in session 11 as its judge (docs/performance.md, "Protocol for session 11"). Expected values below
are the papers' printed figures quoted (paper, table) or arithmetic on them, and the counts are a tally of the rows as
written - never the engine's output. Nothing here predicts a row's throughput, and nothing fits or sets a band on set 8."""

import csv
import shutil
from collections import Counter

import pytest

from shardwise.engine.calibration import external
from shardwise.engine.calibration.external import (EXTERNAL_FILE_8, EXTERNAL_FILE_8B, load_external_runs,
                                                   load_external_runs_2, load_external_runs_3, load_external_runs_4,
                                                   load_external_runs_5, load_external_runs_6, load_external_runs_7,
                                                   load_external_runs_8)
from shardwise.engine.calibration.runs import DATA, gpu_for_row, load_runs
from support.external_file import (ExternalFile, assert_in_its_own_files_only,
                                   assert_judged_and_in_no_band_method_but, assert_no_used_run_repeats_an_earlier_layout)

SET_8 = ExternalFile(EXTERNAL_FILE_8, load_external_runs_8)
_rows, _key, _run, _row = SET_8.rows, SET_8.key, SET_8.run, SET_8.row


def _earlier_runs():
    return (load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3()
            + load_external_runs_4() + load_external_runs_5() + load_external_runs_6() + load_external_runs_7())


# --- Guards: set 8 has had its first run (session 11); no band method is estimated on it --------------------------
def test_set_8_is_judged_in_no_band_method_and_named_by_no_engine_module_but_the_loader():
    # Set 8 joined the judged-set tables for its first run in session 11 (docs/performance.md, "Protocol for session
    # 11"), judging engine candidate E11 and band challenger v8 against v3; only session 12's challengers v9 and v10
    # are estimated on it (band_methods.EXTERNAL_SETS_IN_BANDS).
    assert_judged_and_in_no_band_method_but(8, later=("v9", "v10", "v11", "v12"))  # v9/v10 sets 1-8, v11/v12 1-9
    assert external.EXTERNAL_PART_FILES[8] == (EXTERNAL_FILE_8, EXTERNAL_FILE_8B)


def test_set_8_never_reaches_the_fit_the_bands_or_sets_1_to_7():
    assert_in_its_own_files_only((EXTERNAL_FILE_8, EXTERNAL_FILE_8B), load_external_runs_8)


def test_set_8_sources_are_no_earlier_files_sources():
    sources = {r.source for r in load_external_runs_8()}
    assert not sources & {r.source for r in _earlier_runs()}, sources


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_7():
    assert_no_used_run_repeats_an_earlier_layout(load_external_runs_8(), _earlier_runs())


# --- The loader: part B's file joins when it exists; GH200 is not H200 --------------------------------------------
def test_part_b_rows_are_loaded_with_part_a_when_their_file_exists(tmp_path, monkeypatch):
    shutil.copy(DATA / EXTERNAL_FILE_8, tmp_path / EXTERNAL_FILE_8)
    rows_a = len(_rows())
    with open(DATA / EXTERNAL_FILE_8, newline="") as f:
        header = next(csv.reader(f))
    b_row = dict.fromkeys(header, "")
    b_row.update(source="a part-B test source", model="Llama 3.1 8B", gpu="H100 80GB SXM", num_gpus="8",
                 framework="Megatron-LM (a part-B test)", seq_len="8192", global_batch_seqs="8", tp="1", pp="1", precision="BF16",
                 measured_tokens_per_sec_per_gpu="1000", notes="")
    with open(tmp_path / EXTERNAL_FILE_8B, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerow(b_row)
        w.writerow({**b_row, "gpu": "GH200 96GB (Grace Hopper)"})
    monkeypatch.setattr(external, "DATA", tmp_path)
    runs = external.load_external_runs_8.__wrapped__()
    assert len(runs) == rows_a + 2 and runs[-2].key == f"{EXTERNAL_FILE_8B}:2" and runs[-2].used
    assert runs[-1].status.startswith("excluded: unknown GPU") and "GH200" in runs[-1].status  # not read as an H200
    assert runs[-2].source == "a part-b test source"  # no paper name of part A: runs.py's short_source
    (tmp_path / EXTERNAL_FILE_8B).unlink()
    assert len(external.load_external_runs_8.__wrapped__()) == rows_a  # no part-B file: part A alone


@pytest.mark.parametrize("name", ["GH200 96GB", "NVIDIA GH200 Grace Hopper Superchip", "gh200-144gb"])
def test_a_gh200_is_not_read_as_an_h200(name):
    gpu, _, why = gpu_for_row({"gpu": name})
    assert gpu is None and "unknown GPU" in why and "GH200" in why
    assert gpu_for_row({"gpu": "H200 141GB SXM"})[0].id == "h200"  # the H200 itself still is one


# --- FP8-LM (arXiv:2310.18313) Table 5: GPT-7B/13B/175B on H100, BF16 / FP8 (TE) / FP8 (MS-AMP) --------------------
# Printed: 'Throughput (#samples/s)' of the whole job and per-GPU 'TFLOPS'; TP, PP, DP, micro-batch; seq 2048 (Section
# 3.1.2); Table 1's batch 4M tokens (7B, 13B) and 1M tokens (175B). GPUs = TP x PP x DP: 1x1x32, 2x1x16, 8x4x4.
FP8_LM_TABLE_5 = (  # (model label, GPUs, micro-batch, precision starts with, samples/s)
    ("GPT-7B", 32, 2, "BF16", 159.2), ("GPT-7B", 32, 2, "FP8 (Transformer Engine", 224.5),
    ("GPT-7B", 32, 2, "FP8 (MS-AMP", 219.8), ("GPT-7B", 32, 4, "FP8 (MS-AMP", 230.5),
    ("GPT-13B", 32, 2, "BF16", 79.3), ("GPT-13B", 32, 2, "FP8 (Transformer Engine", 111.7),
    ("GPT-13B", 32, 2, "FP8 (MS-AMP", 109.5), ("GPT-13B", 32, 4, "FP8 (MS-AMP", 121.5),
    ("GPT3-175B", 128, 1, "BF16", 22.4), ("GPT3-175B", 128, 1, "FP8 (Transformer Engine", 28.7),
    ("GPT3-175B", 128, 1, "FP8 (MS-AMP", 27.1), ("GPT3-175B", 128, 4, "FP8 (MS-AMP", 39.3))


def test_fp8_lm_tokens_per_gpu_are_the_printed_samples_per_second_times_2048_over_the_gpus():
    rows = [r for r in _rows() if r["source"].startswith("FP8-LM paper")]
    assert len(rows) == len(FP8_LM_TABLE_5) == 12  # every row of Table 5
    for row, (model, gpus, micro, precision, samples) in zip(rows, FP8_LM_TABLE_5):
        assert (row["model"], row["num_gpus"], row["micro_batch"]) == (model, str(gpus), str(micro))
        assert row["precision"].startswith(precision) and row["seq_len"] == "2048"
        assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(samples * 2048 / gpus, abs=0.01)
        assert int(row["tp"]) * int(row["pp"]) * int(row["dp"]) == gpus


def test_fp8_lm_throughput_is_the_whole_jobs_by_the_printed_tflops():
    # 7B BF16: 159.2 samples/s x 2048 / 32 GPUs = 10,189 tokens/s/GPU; x 6 x 6.7e9 parameters (Table 1's '7B') = 410
    # TFLOP/s, below the printed 445 by about the attention FLOPs (12 x 32 layers x 4096 x 2048 per token = 3.2e9, +8 %)
    per_gpu = 159.2 * 2048 / 32
    dense = 6 * 6.7e9 * per_gpu
    attention = 12 * 32 * 4096 * 2048 * per_gpu
    assert (dense + attention) / 1e12 == pytest.approx(445, rel=0.03)


def test_fp8_lm_ms_amp_rows_are_written_and_not_represented_the_bf16_and_te_rows_used():
    for row, run in zip(_rows(), load_external_runs_8()):
        if not row["source"].startswith("FP8-LM paper"):
            continue
        if "MS-AMP" in row["precision"]:
            assert not run.used and "the engine does not represent the run: MS-AMP" in run.status
        else:
            assert run.used and run.setup.precision == ("fp8" if "FP8" in row["precision"] else "bf16"), run.key
            assert run.source == "fp8-lm-2023" and run.setup.global_batch == (512 if run.cluster.num_gpus == 128 else 2048)


# --- Zero Bubble Pipeline Parallelism (arXiv:2401.10241) Table 4 with Table 3: pure PP on 8/8/16/32 A100 80GB -----
# Table 3: (layers, heads, hidden, pipelines = GPUs, microbatch size, numbers of microbatches); sequence 1024.
ZB_TABLE_3 = {"1.5B": (22, 24, 2304, 8, 6, (24, 32, 64)), "6.2B": (30, 32, 4096, 8, 3, (24, 32, 64)),
              "14.6B": (46, 40, 5120, 16, 1, (48, 64, 128)), "28.3B": (62, 48, 6144, 32, 1, (96, 128, 256))}
# Table 4 'Samples per GPU per second', the 1F1B row (the only schedule the engine represents)
ZB_1F1B = {"1.5B": (11.8, 12.5, 13.6), "6.2B": (3.50, 3.70, 4.03), "14.6B": (1.40, 1.49, 1.64), "28.3B": (0.76, 0.80, 0.88)}


def test_zero_bubble_1f1b_rows_are_table_4_times_1024_and_the_only_ones_used():
    rows = [(row, run) for row, run in zip(_rows(), load_external_runs_8()) if row["source"].endswith("ICLR 2024) Table 4")]
    assert len(rows) == 4 * 12  # 1F1B, 1F1B-I, ZB-1p, ZB-2p x 12 settings: every cell of Table 4
    used = [(row, run) for row, run in rows if run.used]
    assert len(used) == 12 and all("1F1B row" in row["source_locator"] for row, _ in used)
    for row, run in used:
        size = row["model"].rsplit(" ", 1)[1]
        layers, heads, hidden, gpus, micro, microbatches = ZB_TABLE_3[size]
        m = int(row["global_batch_seqs"]) // micro
        samples = ZB_1F1B[size][microbatches.index(m)]
        assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(samples * 1024, abs=0.01)
        assert (run.strategy.tp, run.strategy.pp, run.cluster.num_gpus, run.strategy.micro_batch) == (1, gpus, gpus, micro)
        assert (run.model.num_layers, run.model.hidden_size, run.model.num_attention_heads) == (layers, hidden, heads)
        assert run.setup.seq_len == 1024 and run.cluster.gpu.id == "a100-80gb"
    for row, run in rows:
        if not run.used:
            assert "the engine does not represent the run" in run.status and ("1F1B-I" in row["source_locator"]
                                                                              or "ZB-" in row["source_locator"])


def test_zero_bubble_vocabulary_is_the_one_the_printed_model_sizes_imply():
    # 12 L d^2 (attention + 4x MLP) + V d (tied embeddings), rounded as the paper prints its sizes
    for size, (layers, _, hidden, *_rest) in ZB_TABLE_3.items():
        printed = float(size.rstrip("B"))
        assert round((12 * layers * hidden**2 + 32_000 * hidden) / 1e9, 1) == printed
    # a GPT-2 vocabulary (50,257) would print 14.7B and 28.4B
    assert round((12 * 46 * 5120**2 + 50_257 * 5120) / 1e9, 1) == 14.7


# Appendix tables: Table 8 (1F1B and ZB-1p with the micro-batch doubled, ZB-2p as in Table 4) and Table 9 (m <= p)
ZB_TABLE_8_1F1B = {("1.5B", 24): 12.0, ("1.5B", 32): 12.6, ("1.5B", 64): 13.8, ("6.2B", 24): 3.56, ("6.2B", 32): 3.76,
                   ("6.2B", 64): 4.09, ("14.6B", 48): 1.53, ("14.6B", 32): 1.62, ("14.6B", 128): 1.78,
                   ("28.3B", 96): 0.81, ("28.3B", 32): 0.85, ("28.3B", 256): 0.94}
ZB_TABLE_9_1F1B = {("1.5B", 2): 3.56, ("1.5B", 4): 5.74, ("1.5B", 8): 8.26, ("6.2B", 2): 1.04, ("6.2B", 4): 1.69,
                   ("6.2B", 8): 2.45, ("14.6B", 4): 0.39, ("14.6B", 8): 0.65, ("14.6B", 16): 0.95}


def _zb_1f1b(table: str) -> dict:
    out = {}
    for row, run in zip(_rows(), load_external_runs_8()):
        if row["source"].endswith(f"ICLR 2024) {table}") and "1F1B row" in row["source_locator"]:
            size = row["model"].rsplit(" ", 1)[1]
            out[(size, int(row["global_batch_seqs"]) // int(row["micro_batch"]))] = (row, run)
    return out


def test_zero_bubble_appendix_1f1b_rows_are_their_tables_times_1024():
    for table, printed, micro in (("Table 8", ZB_TABLE_8_1F1B, {"1.5B": 12, "6.2B": 6, "14.6B": 2, "28.3B": 2}),
                                  ("Table 9", ZB_TABLE_9_1F1B, {"1.5B": 6, "6.2B": 3, "14.6B": 1})):
        rows = _zb_1f1b(table)
        assert set(rows) == set(printed)
        for (size, m), (row, run) in rows.items():
            assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(printed[(size, m)] * 1024, abs=0.01)
            assert int(row["micro_batch"]) == micro[size]  # Table 8: twice Table 3's micro-batch; Table 9: Table 3's
    # Table 8 prints m = 32 for 14.6B and 28.3B, settings Table 3 does not list, while its ZB-2p cells there (1.83, 1.00)
    # are Table 4's 64- and 128-microbatch figures: written, excluded as contradicted by the source
    for size in ("14.6B", "28.3B"):
        assert "the source contradicts the row" in _zb_1f1b("Table 8")[(size, 32)][1].status
    assert sum(run.used for _, run in _zb_1f1b("Table 8").values()) == 10
    assert all(run.used for _, run in _zb_1f1b("Table 9").values())


# --- MoE Parallel Folding (arXiv:2504.14960): Mixtral-8x22B on 128-1,024 H100, MFU by method ---------------------
def _folding(table: str):
    return [(row, run) for row, run in zip(_rows(), load_external_runs_8())
            if row["source"].startswith(f"MoE Parallel Folding paper (Liu et al., NVIDIA, 2025) {table}")]


def test_folding_table_2_bf16_tflops_are_table_3_mfu_times_the_printed_peak():
    # Table 2 prints model TFLOPS (MCore 458.3, with folding 487.7 in BF16); Table 3 prints MFU (46.3 %, 49.3 %) of the
    # same 128-GPU runs against the 989.5 TFLOP/s per GPU of Section 4.1: 0.463 x 989.5 = 458.1, 0.493 x 989.5 = 487.8
    assert 0.463 * 989.5 == pytest.approx(458.3, abs=0.3) and 0.493 * 989.5 == pytest.approx(487.7, abs=0.3)
    table_2 = _folding("Table 2")
    assert [float(r["measured_tflops_per_gpu"]) for r, _ in table_2] == [458.3, 487.7, 575.1, 631.7]
    assert all(not run.used and "parallel layout (TP/PP) not stated" in run.status for _, run in table_2)


def test_folding_used_rows_are_mixtral_mcore_and_folding_runs_with_their_printed_layouts():
    used = [(row, run) for table in ("Table 3", "Table 4", "Table 5") for row, run in _folding(table) if run.used]
    assert len(used) == 2 + 8 + 8  # Table 3's two, Table 4's 4 + 4 GPU counts, Table 5's 4 + 4 sequence lengths
    for row, run in used:
        assert row["model"] == "Mixtral-8x22B" and run.setup.precision == "bf16" and run.cluster.gpu.id == "h100-sxm"
        tp, pp, cp, ep = (int(row[k]) for k in ("tp", "pp", "cp", "ep"))
        assert (run.strategy.tp, run.strategy.pp, run.strategy.cp, run.strategy.ep) == (tp, pp, cp, ep)
        # MCore without folding: the experts take the attention's TP ('EXPERT TP: n'); with folding ETP 1 as printed
        assert run.strategy.etp == (tp if "MCore w/ Folding" not in row["source_locator"] else 1)
        assert int(row["num_gpus"]) % (tp * pp * cp) == 0
    # Table 5 keeps the tokens per global batch: GBS x seq = 1,024 x 16,384 at every length
    for row, _ in _folding("Table 5"):
        assert int(row["global_batch_seqs"]) * int(row["seq_len"]) == 1024 * 16384


def test_folding_throughputs_keep_the_ratio_of_the_printed_mfus():
    # tokens/s/GPU = MFU x peak / FLOPs per token: for one model and sequence the FLOPs per token are one number, so
    # Table 4's MCore runs on 128 and 1,024 GPUs (49.4 %, 42.3 %) differ by 42.3 / 49.4 exactly
    table_4 = {(row["source_locator"].split("Mixtral-8x22B ")[1].split(" on ")[0], int(row["num_gpus"])): run
               for row, run in _folding("Table 4") if run.used}
    ratio = table_4[("MCore", 1024)].measured_tokens_per_gpu / table_4[("MCore", 128)].measured_tokens_per_gpu
    assert ratio == pytest.approx(42.3 / 49.4, rel=1e-9)
    ratio = table_4[("MCore w/ Folding", 512)].measured_tokens_per_gpu / table_4[("MCore", 512)].measured_tokens_per_gpu
    assert ratio == pytest.approx(48.9 / 45.5, rel=1e-9)


def test_folding_table_5_qwen_rows_repeat_the_mixtral_rows_cell_for_cell():
    cells = ("num_gpus", "seq_len", "cp", "tp", "ep", "pp", "global_batch_seqs", "measured_mfu")
    rows = [row for row, _ in _folding("Table 5")]
    mixtral = [tuple(r[c] for c in cells) for r in rows if r["model"] == "Mixtral-8x22B"]
    qwen = [tuple(r[c] for c in cells) for r in rows if r["model"] == "Qwen2-57B-A14B"]
    assert len(mixtral) == len(qwen) == 8 and mixtral == qwen  # Section 4.3: Qwen 38.7 % -> 35.9 %, not these
    assert all("SOURCE CONTRADICTS ROW" in r["notes"] for r in rows if r["model"] == "Qwen2-57B-A14B")


def test_the_expert_tp_marker_sets_the_experts_tensor_parallelism(tmp_path, monkeypatch):
    with open(DATA / EXTERNAL_FILE_8, newline="") as f:
        header = next(csv.reader(f))
    base = dict.fromkeys(header, "")
    base.update(source="a marker test", model="Mixtral-8x22B", gpu="H100 80GB SXM", num_gpus="128", framework="Megatron-Core (a marker test)",
                seq_len="4096", global_batch_seqs="256", tp="2", pp="8", ep="4", precision="BF16", measured_mfu="40")
    with open(tmp_path / EXTERNAL_FILE_8, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        w.writeheader()
        w.writerow({**base, "notes": "EXPERT TP: 2"})
        w.writerow(base)
    monkeypatch.setattr(external, "DATA", tmp_path)
    marked, plain = external.load_external_runs_8.__wrapped__()
    assert (marked.strategy.etp, plain.strategy.etp) == (2, 1) and marked.config.endswith("etp2")
    assert marked.used and plain.used  # two configurations, not one folded into the other


# --- The tally of the file as written (counted from the rows' notes while writing them) ------------------------------
KNOWN_EXCLUSIONS = ("the engine does not represent the run", "no architecture for", "parallel layout (TP/PP) not stated",
                    "the source contradicts the row", "same configuration as an earlier row of set 8",
                    "no measured throughput")
TALLY = {  # (short source, kind) -> rows
    ("fp8-lm-2023", "used"): 6,  # Table 5: BF16 and Transformer Engine FP8 rows of GPT-7B/13B/175B
    ("fp8-lm-2023", "the engine does not represent the run"): 6,  # Table 5: MS-AMP FP8-LM rows
    # 1F1B rows of the ICLR text's Tables 4, 8 (two contradicted) and 9, and of the ZB-V version's Tables 6 and 7
    ("zero-bubble-pp-2023", "used"): 12 + 10 + 9 + 7 + 2,
    # ICLR text - Table 4: 12 1F1B-I, 24 ZB-1p/2p; Table 7: 8 ZB-2p; Table 8: 20 ZB-1p/2p (4 more contradicted); Table 9:
    # 9 ZB-2p; ZB-V version - Table 6: 27 ZB-1p/ZB-2p*/ZB-V; Table 7: 12 ZB-1p/ZB-V
    ("zero-bubble-pp-2023", "the engine does not represent the run"): 12 + 24 + 8 + 20 + 9 + 27 + 12,
    # ZB-V version: Table 7's b = 2/6 cells repeat its Table 6; its Table 6 28.3B b 2 m 96/256 and Table 7 b 1 m 128 are
    # configurations the ICLR text's Tables 8 and 4 already hold (first row read kept)
    ("zero-bubble-pp-2023", "same configuration as an earlier row of set 8"): 3 + 2 + 1,
    ("zero-bubble-pp-2023", "the source contradicts the row"): 6,  # Table 8's m = 32 rows of 14.6B and 28.3B
    ("moe-parallel-folding-2025", "used"): 18,  # Mixtral-8x22B MCore / folding rows of Tables 3, 4, 5
    ("moe-parallel-folding-2025", "no architecture for"): 33 + 21 + 14,  # Qwen2-57B-A14B, G8T8, Llama3-8x70B
    ("moe-parallel-folding-2025", "parallel layout (TP/PP) not stated"): 3 + 8 + 4,  # Mixtral baselines, Table 2
    ("flash-attn1-paper-2022", "used"): 2,  # Table 2: GPT-2 small and medium with FlashAttention
    # Table 2: HuggingFace 2, Megatron-LM 2; Table 4: Megatron-LM 1k (unfused attention, no FlashAttention)
    ("flash-attn1-paper-2022", "the engine does not represent the run"): 2 + 2 + 1,
    ("flash-attn1-paper-2022", "same configuration as an earlier row of set 8"): 1,  # Table 4's FlashAttention 1k row
    ("flash-attn1-paper-2022", "no measured throughput"): 2,  # Table 4's 2k / 4k rows: their batch and steps not stated
}


def _kind(status: str) -> str:
    return "used" if status == "used" else next(k for k in KNOWN_EXCLUSIONS if k in status)


def test_every_row_is_used_or_excluded_with_a_stated_reason():
    # part A's rows (part B's file, when merged, is checked by its own tests and reasons)
    runs = [r for r in load_external_runs_8() if r.key.startswith(EXTERNAL_FILE_8 + ":")]
    assert all(r.used or any(reason in r.status for reason in KNOWN_EXCLUSIONS) for r in runs)


def test_rows_used_and_excluded_by_kind_are_the_tally_of_the_file():
    runs = [r for r in load_external_runs_8() if r.key.startswith(EXTERNAL_FILE_8 + ":")]
    assert len(runs) == len(_rows()) == sum(TALLY.values())
    assert Counter((r.source, _kind(r.status)) for r in runs) == TALLY
    used_sources = {r.source for r in runs if r.used}
    assert len(used_sources) >= 3 and sum(r.used for r in runs) >= 15  # the protocol's size rule, part A alone
    assert len(used_sources) == 4


# The arXiv version with ZB-V (stored text id 45548154975), Section 6.1: Table 6 (16/24/32 GPUs, b 6/2/2) and Table 7
ZBV_TABLE_6_1F1B = {("6.2B", 48): 3.38, ("6.2B", 64): 3.57, ("6.2B", 128): 3.91, ("14.6B", 72): 1.52, ("14.6B", 96): 1.61,
                    ("14.6B", 192): 1.76, ("28.3B", 96): 0.82, ("28.3B", 128): 0.87, ("28.3B", 256): 0.95}


def test_zero_bubble_v_version_1f1b_rows_and_the_configurations_earlier_rows_hold():
    rows = {}
    for row, run in zip(_rows(), load_external_runs_8()):
        if row["source"].endswith("ZB-V) Table 6") and "1F1B row" in row["source_locator"]:
            size = row["model"].rsplit(" ", 1)[1]
            rows[(size, int(row["global_batch_seqs"]) // int(row["micro_batch"]))] = (row, run)
    assert set(rows) == set(ZBV_TABLE_6_1F1B)
    for key, (row, run) in rows.items():
        assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(ZBV_TABLE_6_1F1B[key] * 1024, abs=0.01)
        assert int(row["num_gpus"]) == {"6.2B": 16, "14.6B": 24, "28.3B": 32}[key[0]] == int(row["pp"])
    # 28.3B on 32 GPUs with b 2 and m 96 / 256: the ICLR text's Table 8 ran these (0.81 / 0.94 there, 0.82 / 0.95 here):
    # one configuration, the first row read is kept
    for m in (96, 256):
        assert "same configuration as an earlier row of set 8" in rows[("28.3B", m)][1].status
    assert sum(run.used for _, run in rows.values()) == 7


# --- FlashAttention (arXiv:2205.14135) Table 2 with Appendix E.2: GPT-2 small / medium on 8 A100 40GB ---------------
def test_flash_attention_gpt2_tokens_per_gpu_are_the_runs_tokens_over_their_wall_clock():
    # E.2: effective batch 512 sequences, 400K steps, context 1,024; Table 2: 2.7 days (small), 6.9 days (medium)
    rows = [(row, run) for row, run in zip(_rows(), load_external_runs_8())
            if row["source"] == "FlashAttention paper (Dao et al., 2022) Table 2"]
    assert len(rows) == 6  # every row: HuggingFace, Megatron-LM and FlashAttention for small and medium
    used = {row["model"]: (row, run) for row, run in rows if run.used}
    assert set(used) == {"GPT-2 small", "GPT-2 medium"}
    for model, days in (("GPT-2 small", 2.7), ("GPT-2 medium", 6.9)):
        row, run = used[model]
        expected = 400_000 * 512 * 1024 / (days * 24 * 3600) / 8  # ~112,373 and ~43,972 tokens/s/GPU
        assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(expected, abs=0.01)
        assert "FlashAttention" in row["source_locator"] and run.cluster.gpu.id == "a100-40gb"
        assert (run.strategy.tp, run.strategy.pp, run.cluster.num_gpus, run.setup.global_batch) == (1, 1, 8, 512)
    # Table 2's speedups: Megatron-LM 4.7 days is 9.5 / 4.7 = 2.0x HuggingFace, FlashAttention 9.5 / 2.7 = 3.5x
    assert round(9.5 / 4.7, 1) == 2.0 and round(9.5 / 2.7, 1) == 3.5 and round(21.0 / 6.9, 1) == 3.0
    for row, run in rows:
        if not run.used:
            assert "the engine does not represent the run" in run.status  # HuggingFace and Megatron-LM (2022) attention
