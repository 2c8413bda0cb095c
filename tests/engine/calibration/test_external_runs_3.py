"""external_runs_3.csv: held-out set 3, published measured runs, judged once in session 8 (band methods v4 vs v5).
Expected values below are read from the source text (quoted as printed, with its repo@commit:path or paper table),
or are arithmetic on those printed cells - never the engine's output. Nothing here predicts a row's throughput,
and nothing fits or sets a band on set 3 (only external_check and the benchmarks report it)."""

from pathlib import Path

import pytest

from shardwise.engine.calibration.external import (EXTERNAL_FILE, EXTERNAL_FILE_2, EXTERNAL_FILE_3,
                                                   load_external_runs, load_external_runs_2, load_external_runs_3)
from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS
from shardwise.engine.calibration.runs import load_runs, used_runs
from support.external_file import ExternalFile

KNOWN_EXCLUSIONS = (
    "unknown GPU",  # MegaScale names no GPU model ('NVIDIA Ampere'); FlagPerf A800/H800 are not in the catalog
    "no architecture for",
    "printed layout inconsistent",
)
SET_3_SOURCES = {"flash-attn-training", "mt-nlg-2022", "llama3-herd-2024", "megascale-2024", "flagperf"}


SET_3 = ExternalFile(EXTERNAL_FILE_3, load_external_runs_3)
_rows, _key, _run, _row = SET_3.rows, SET_3.key, SET_3.run, SET_3.row


def test_every_row_is_used_or_excluded_with_a_stated_reason():
    SET_3.assert_used_or_excluded(KNOWN_EXCLUSIONS, at_least=15)


def test_every_row_cites_a_commit_and_path_or_a_paper_table():
    for r in _rows():
        loc = r["source_locator"]
        if "@" not in loc.split(":")[0]:  # a paper's table, read from a stored text of the paper
            assert "arXiv:" in loc and "Table " in loc and " row" in loc, loc
        else:
            repo_commit, _, path = loc.partition(":")
            assert "@" in repo_commit and len(repo_commit.split("@")[1].split()[0]) == 10 and path, loc


def test_set_3_never_reaches_the_fit_the_bands_or_sets_1_and_2():
    assert not any(r.key.startswith(EXTERNAL_FILE_3) for r in load_runs())
    assert not any(r.key.startswith(EXTERNAL_FILE_3) for r in used_runs())
    assert not {r.source for r in load_runs()} & SET_3_SOURCES
    assert all(r.key.startswith(EXTERNAL_FILE + ":") for r in load_external_runs())
    assert all(r.key.startswith(EXTERNAL_FILE_2 + ":") for r in load_external_runs_2())
    assert {r.source for r in load_external_runs_3()} == SET_3_SOURCES


def test_no_row_repeats_a_set_1_or_set_2_source_release_and_configuration():
    seen = {(r.source, r.release, r.group, r.config) for r in load_external_runs() + load_external_runs_2() if r.group}
    for r in load_external_runs_3():
        assert not r.group or (r.source, r.release, r.group, r.config) not in seen, r.key
    assert not SET_3_SOURCES & {r.source for r in load_external_runs() + load_external_runs_2()}


def test_set_3_is_judged_never_fitted_and_never_in_the_bands_it_judged():
    # Set 3 had its first run in session 8 (docs/performance.md, "Session 8: external set 3's first run"),
    # judging v4 against v5: neither may be estimated on it (v6, written after that run, is); no fit or
    # calibration module reads it except through the loaders' table of judged sets.
    assert 3 not in EXTERNAL_SETS_IN_BANDS.get("v4", ()) and 3 not in EXTERNAL_SETS_IN_BANDS["v5"]
    root = Path(__file__).resolve().parents[3]
    reporters = ("external.py", "runs.py", "external_check.py")  # the loader, the parser, the report
    for path in (root / "engine").rglob("*.py"):
        if path.name not in reporters:
            text = path.read_text(encoding="utf-8", errors="ignore")
            assert "external_runs_3" not in text and "EXTERNAL_FILE_3" not in text, path


# --- Dao-AILab/flash-attention training/README.md --------------------------------------------------
FA = "Dao-AILab/flash-attention@4a6eaa9f27:training/README.md"


def test_flash_attention_gpt3_1_3b_as_printed():
    # Dao-AILab/flash-attention@4a6eaa9f27:training/README.md, 'Training speed', 8 x A100 80GB, as printed:
    # | GPT3-1.3B | 1M                  | 169k                     |              1.64 |
    # (Model | Batch size (tokens) | Through put (tokens/sec) | Hours / 1B tokens)
    r = _run(_key(FA, model="GPT3-1.3B"))
    assert r.used and r.measured_tokens_per_gpu == 169000 / 8 == 21125  # aggregate over the node's 8 GPUs
    assert 1e9 / 169e3 / 3600 == pytest.approx(1.64, abs=0.005)  # the printed hours / 1B tokens agree
    # configs/experiment/pile/gpt3xl-flash.yaml at the same commit: global_batch_size 512 (x 2048 = 1,048,576 = '1M'),
    # batch_size "(1 if gpu_mem < 24 else (2 if < 40 else (4 if < 80 else 8)))" -> 8 on an 80 GB A100, GA = 512 / (8 x 8)
    assert (r.setup.global_batch, r.setup.seq_len, r.strategy.micro_batch) == (512, 2048, 8)
    assert 512 // (8 * 8) == 8 and "GA=8" in _row(r.key)["notes"]
    assert (r.strategy.tp, r.strategy.pp, r.strategy.zero_stage) == (1, 1, 1)  # DDPStrategyZero1
    assert (r.model.num_layers, r.model.hidden_size, r.model.num_attention_heads) == (24, 2048, 16)
    assert r.cluster.gpu.id == "a100-80gb" and r.cluster.num_gpus == 8


def test_flash_attention_small_models_run_plain_ddp():
    # gpt3s-flash.yaml: strategy null (Lightning DDP), batch_size 32 at >= 40 GB, global_batch_size 256 (0.5M tokens)
    r = _run(_key(FA, model="GPT3-125M"))
    assert r.strategy.zero_stage == 0 and r.strategy.micro_batch == 32 and r.setup.global_batch == 256
    assert r.measured_tokens_per_gpu == 1310e3 / 8


# --- MT-NLG 530B (quoted by cli99/llm-analysis) -----------------------------------------------------
def test_mt_nlg_step_time_gives_the_throughput():
    # cli99/llm-analysis@b60b392f74:examples/megatron-turing-nlg/README.md: "with global batch size 1920 on 280, 350,
    # and 420 DGX A100 servers ..., the latency per iteration observed is 60.1, 50.2, and 44.4 seconds respectively.
    # These correspond to 126, 121, and 113 TFLOP/s per GPU"; run_train.sh: --tp_size 8 --pp_size 35
    for gpus, step in ((2240, 60.1), (2800, 50.2), (3360, 44.4)):
        r = _run(_key("cli99/llm-analysis", num_gpus=gpus))
        assert r.used and r.measured_tokens_per_gpu == pytest.approx(1920 * 2048 / step / gpus, abs=0.005)
        assert (r.strategy.tp, r.strategy.pp, r.setup.global_batch) == (8, 35, 1920)
        assert _row(r.key)["dp"] == str(gpus // (8 * 35))
    assert 1920 * 2048 / 60.1 / 2240 == pytest.approx(29.21, abs=0.01)


# --- Llama 3 Herd of Models, Table 4 ------------------------------------------------------------------
def test_llama3_table_4_row_1_as_printed():
    # arXiv:2407.21783 Table 4, as printed:
    # GPUs TP CP PP DP Seq. Len. Batch size/DP Tokens/Batch TFLOPs/GPU BF16 MFU
    # 8,192 8 1 16 64 8,192 32 16M 430 43%
    r = _run(_key("Table 4", num_gpus=8192))
    assert r.used and (r.strategy.tp, r.strategy.pp, r.strategy.cp) == (8, 16, 1)
    assert r.setup.global_batch == 32 * 64 == 2048 and 2048 * 8192 == 16_777_216  # '16M' tokens per batch
    assert 8 * 1 * 16 * 64 == 8192
    assert r.throughput_basis.startswith("from model TFLOP/s/GPU")  # 430 TFLOP/s as printed; no token rate printed
    assert r.cluster.network.id == "roce-400g"


def test_llama3_table_4_long_context_row_does_not_multiply_out_as_printed():
    # 16,384 8 16 16 4 131,072 16 16M 380 38%  -> 8 x 16 x 16 x 4 = 8,192 GPUs, and 16 x 4 x 131,072 = 8.4M tokens
    r = _run(_key("Table 4", num_gpus=16384, cp=16))
    assert r.status == "excluded: printed layout inconsistent: TP x PP x CP x DP = 8192, #GPUs printed 16384"


# --- MegaScale (NSDI '24), Tables 2 and 3 ---------------------------------------------------------------
def test_megascale_rows_are_written_and_excluded_for_the_unnamed_gpu():
    # Table 2, as printed (Batch Size 768, Megatron-LM): GPUs 256 | Iteration Time 40.0 s | Throughput 39.3k tokens/s | MFU 53.0%
    key = _key("Table 2", num_gpus=256, measured_mfu="53.0")
    row = _row(key)
    assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(39.3e3 / 256, abs=0.05)
    assert 768 * 2048 / 40.0 / 256 == pytest.approx(39.3e3 / 256, rel=0.002)  # the printed step time agrees
    assert (row["tp"], row["pp"], row["vpp"], row["dp"]) == ("8", "8", "6", "4")  # Table 1; 'six interleaving stages'
    assert _run(key).status.startswith("excluded: unknown GPU")  # 'more than 10,000 NVIDIA Ampere GPUs'
    assert sum("MegaScale" in r["source"] for r in _rows()) == 16 + 9


# --- FlagPerf NVIDIA training cases -------------------------------------------------------------------
L8 = "FlagOpen/FlagPerf@93730d1849:training/nvidia/llama3_8B-megatron/README.md '性能指标'"


def test_flagperf_llama3_8b_two_node_row_as_printed():
    # FlagOpen/FlagPerf@93730d1849:training/nvidia/llama3_8B-megatron/README.md, as printed:
    # | H100二机16卡（2x8）     | bf16      | PP1DP8TP2   | /      | 7914      | True       | 62/80 | 38.4%       |
    # README: LBS 1, seq 8192, global batch 512 (4M tokens); pretrain_llama3.sh --global-batch-size 512
    r = _run(_key(L8, num_gpus=16, precision="BF16"))
    assert r.used and r.measured_tokens_per_gpu == 7914 and r.measured_memory_gib == 62
    assert (r.strategy.tp, r.strategy.pp, r.strategy.zero_stage) == (2, 1, 1)
    assert r.setup.global_batch == 512 and 512 // (1 * 8) == 64 and "GA=64" in _row(r.key)["notes"]


def test_flagperf_a800_rows_are_not_read_as_a100():
    # the table labels the row 'A100单机8卡（1x8）' but the README's hardware is 'NVIDIA_A800-SXM4-80GB'
    r = _run(_key(L8, num_gpus=8, tp=1, pp=2, measured_tokens_per_sec_per_gpu="3698.7"))
    assert r.status == "excluded: unknown GPU 'NVIDIA A800-SXM4-80GB (DGX A800)'"


def test_flagperf_fp8_mfu_range_is_not_written_as_a_number():
    # | H100单机8卡（1x8）      | bf16+fp8  | PP1DP4TP2   | /      | 10486     | True       | 74/80 | 25.4%-50.6% |
    r = _run(_key(L8, num_gpus=8, measured_tokens_per_sec_per_gpu="10486"))
    assert r.used and r.setup.precision == "fp8" and _row(r.key)["measured_mfu"] == ""


def test_flagperf_llama3_70b_as_printed():
    # FlagOpen/FlagPerf@ddd8f62ac2:training/nvidia/llama3_70B-megatron/README.md:
    # | H100八机64卡（8x8）     | bf16      | PP4DP2TP8   | /      | 851      | True       | 55/80 | 36.1%       |
    r = _run(_key("llama3_70B-megatron", num_gpus=64))
    assert r.used and r.measured_tokens_per_gpu == 851
    assert (r.strategy.tp, r.strategy.pp) == (8, 4) and 8 * 4 * 2 == 64 and r.setup.global_batch == 512
