"""external_runs_2.csv: held-out set 2, published measured runs collected for the first run of a new band method.
Expected values below are read from the source text (quoted as printed, with its repo@commit:path or URL), or
are arithmetic on those printed cells - never the engine's output. Nothing here predicts a row's throughput."""

import pytest

from shardwise.engine.calibration.external import (EXTERNAL_FILE, EXTERNAL_FILE_2, load_external_runs,
                                                   load_external_runs_2)
from shardwise.engine.calibration.runs import load_runs, used_runs
from support.external_file import ExternalFile

KNOWN_EXCLUSIONS = (
    "superseded by a later revision of the same release's page",
    "printed layout inconsistent",
    "same configuration measured with a newer release",
    "hybrid Mamba-Transformer",
    "no architecture for",
    "inconsistent batch",
    "bracketed figure of an 'a (b)' cell",
)
DOCS = "https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/"


SET_2 = ExternalFile(EXTERNAL_FILE_2, load_external_runs_2)
_rows, _run, _row = SET_2.rows, SET_2.run, SET_2.row


def _line_of(locator_part: str, model: str, **cells) -> str:
    return SET_2.key(locator_part, model=model, **cells)


def test_every_row_is_used_or_excluded_with_a_stated_reason():
    SET_2.assert_used_or_excluded(KNOWN_EXCLUSIONS, at_least=20)


def test_every_row_cites_a_commit_and_path_or_the_page_url_and_heading():
    for r in _rows():
        loc = r["source_locator"]
        if loc.startswith("https://"):
            assert loc.startswith(DOCS) and "'Container: NeMo " in loc and "'System: DGX-" in loc, loc
        else:
            repo_commit, _, path = loc.partition(":")
            assert "@" in repo_commit and len(repo_commit.split("@")[1]) == 10 and path, loc


def test_set_2_never_reaches_the_fit_the_bands_or_set_1():
    assert not any(r.key.startswith(EXTERNAL_FILE_2) for r in load_runs())
    assert not any(r.key.startswith(EXTERNAL_FILE_2) for r in used_runs())
    assert not {r.source for r in load_runs()} & {"nemo-automodel", "nemo-perf-summary"}
    assert all(r.key.startswith(EXTERNAL_FILE + ":") for r in load_external_runs())


def test_no_row_repeats_a_set_1_source_release_and_configuration():
    set1 = {(r.source, r.release, r.group, r.config) for r in load_external_runs() if r.group}
    for r in load_external_runs_2():
        assert (r.source, r.release, r.group, r.config) not in set1 or not r.group, r.key


# --- NeMo AutoModel docs/performance-summary.md(x) -----------------------------------------------
AM_LATEST = "NVIDIA-NeMo/Automodel@cb9765441e:docs/performance-summary.mdx"


def test_automodel_llama3_70b_pretraining_as_printed():
    # NVIDIA-NeMo/Automodel@cb9765441e:docs/performance-summary.mdx line 25, as printed:
    # | Llama3 70B | 64 | 128 | 1 | 1 | 4 | 8192 | 1 | 1 | 2 | - | - | 32 | TE + fsdp2_prefetch | 18.90 | 389 | 866.77 |
    # (Model, #GPUs, GBS, MBS, LBS, GA, Seq Length, TP, PP, CP, EP, VP, FSDP, Kernel Optimizations,
    #  Time per Global Step (s), Model TFLOPs/sec/GPU, Tokens/sec/GPU)
    key = _line_of(AM_LATEST, "Llama3 70B", num_gpus=64)
    r = _run(key)
    assert r.used and r.measured_tokens_per_gpu == 866.77 and r.throughput_basis == "reported"
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.zero_stage) == (1, 1, 2, 3)  # FSDP2: ZeRO-3
    assert r.setup.seq_len == 8192 and r.setup.global_batch == 128 and r.setup.precision == "bf16"
    assert r.setup.framework == "fsdp"
    assert (r.model.num_layers, r.model.hidden_size) == (80, 8192)  # Llama 3.1 70B (models.csv: L80 d8192)
    # TP1 x PP1 x CP2 x FSDP32 = 64 = #GPUs; GBS = LBS 1 x GA 4 x FSDP 32 = 128
    # step time check: 128 x 8192 / 18.90 s / 64 GPUs = 866.9 tokens/s/GPU (printed 866.77)
    assert 128 * 8192 / 18.90 / 64 == pytest.approx(866.77, rel=1e-3)  # step time printed rounded to 0.01 s
    assert _row(key)["dp"] == "32"


def test_automodel_deepseek_v3_pipeline_row_keeps_printed_ga_out_of_the_batch_check():
    # same file line 19: | DeepSeek V3 671B | 1024 | 8192 | 1 | 8 | 4 | 4096 | 1 | 4 | 1 | 64 | 8 | 256 | TE + DeepEP | 37.87 | 216 | 865 |
    # GA counts local batches (LBS 8 = 8 micro-batches of 1): GBS = 8 x 4 x 256 = 8192, not MBS x GA x DP = 1024
    key = _line_of(AM_LATEST, "DeepSeek V3 671B", num_gpus=1024)
    r = _run(key)
    assert r.used and r.measured_tokens_per_gpu == 865
    assert (r.strategy.pp, r.strategy.vpp, r.strategy.ep, r.strategy.micro_batch) == (4, 8, 64, 1)
    assert r.setup.global_batch == 8 * 4 * 256 == 8192
    assert "GA=" not in _row(key)["notes"]  # the row parser's micro-batch GA check must not read the printed GA


def test_automodel_lora_row_is_a_lora_run():
    # same file, Fine-Tuning (LoRA) table line 37:
    # | Llama3 70B | 8 | 32 | 2 | 2 | 4 | 4096 | 2 | 1 | 1 | - | 1 | 4 | TE + triton + fsdp2_prefetch | 15.00 | 316 | 1091.85 |
    r = _run(_line_of(AM_LATEST, "Llama3 70B", num_gpus=8))
    assert r.used and r.setup.mode == "lora" and r.measured_tokens_per_gpu == 1091.85
    # 32 x 4096 / 15.00 s / 8 GPUs = 1,092.3 tokens/s/GPU (printed 1091.85, step time rounded)
    assert 32 * 4096 / 15.00 / 8 == pytest.approx(1091.85, rel=1e-3)


def test_automodel_remeasured_row_is_superseded_by_the_revision_that_printed_the_new_number():
    # NVIDIA-NeMo/Automodel@89e3a9fdd6:docs/performance-summary.md line 16 (first revision, 2025-10-06):
    # | Qwen3 MoE 30B | 8 | 512 | 4 | 4 | 16 | 4096 | 1 | 1 | 1 | 8 | - | 8 | TE + DeepEP | 22.14 | 212 | 11,842 |
    # @8d9bfb90e3 (2025-10-08) prints the same layout at 21.773 s, 12,040 tokens/s/GPU
    old = _run(_line_of("@89e3a9fdd6", "Qwen3 MoE 30B"))
    assert old.status == "excluded: superseded by a later revision of the same release's page (8d9bfb90e3)"
    assert old.measured_tokens_per_gpu == 11842  # parsed all the same
    assert _run(_line_of(AM_LATEST, "Qwen3 MoE 30B")).measured_tokens_per_gpu == 12040


def test_automodel_row_whose_layout_does_not_multiply_out_is_excluded():
    # NVIDIA-NeMo/Automodel@c0e4fe1bc3:docs/performance-summary.md, LoRA table, as printed:
    # | Qwen2.5 32B | 8 | 32 | 1 | 8 | 2 | 4096 | 1 | 4 | 1 | - | 8 | 1 | 2 | 8.40 | 261 | 1950.93 |
    # TP1 x PP4 x CP1 x FSDP1 = 4, not the printed 8 GPUs (the row has a stray '2' in the kernel column)
    r = _run(_line_of("@c0e4fe1bc3", "Qwen2.5 32B", num_gpus=8))
    assert r.status == "excluded: printed layout inconsistent: TP x PP x CP x DP = 4, #GPUs printed 8"


def test_nemotron_v3_hybrids_are_written_and_excluded():
    r = _run(_line_of(AM_LATEST, "Nemotron V3 Super 120B (26.02)"))
    assert r.status == "excluded: hybrid Mamba-Transformer: no Mamba layers in ModelSpec"


# --- NeMo performance summary pages (docs.nvidia.com, stored excerpts) ---------------------------
def test_nemo_2502_b200_llama3_70b_as_printed():
    # https://docs.nvidia.com/nemo-framework/user-guide/latest/performance/performance_summary.html,
    # 'Container: NeMo 25.02', 'System: DGX-B200', as printed:
    # LLAMA3-70B | 64 | 128 | 1 | 8192 | 2 | 4 | 2 | 5 | 1 | 32 | 3062 | 1474 |
    # (Model, #-GPUs, GBS, MBS, Sequence Length, TP, PP, CP, VP, EP, GA, Tokens / sec / GPU, Model TFLOP / sec / GPU)
    key = _line_of("'Container: NeMo 25.02' / 'System: DGX-B200'", "LLAMA3-70B")
    r = _run(key)
    assert r.used and r.measured_tokens_per_gpu == 3062 and r.cluster.gpu.id == "b200"
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.vpp) == (2, 4, 2, 5)
    assert r.setup.precision == "fp8"  # page: "pre-training performance of various models at FP8 precision"
    # dp derived = 64 / (2 x 4 x 2) = 4; MBS 1 x GA 32 x DP 4 = 128 = GBS
    assert _row(key)["dp"] == "4" and 1 * 32 * 4 == r.setup.global_batch


def test_nemo_2504_gb200_fsdp_row():
    # .../performance/archive/25.04-performance-summary.html, 'Container: NeMo 25.04', 'System: DGX-GB200':
    # LLAMA3-70B | 64 | 128 | 1 | 8192 | 1 | 1 | 1 | 1 | 1 | 1 | 2 | 4035 | 1943 |   (FSDP = 1: use FSDP)
    r = _run(_line_of("'Container: NeMo 25.04'", "LLAMA3-70B"))
    assert r.measured_tokens_per_gpu == 4035 and r.cluster.gpu.id == "gb200"
    assert r.strategy.zero_stage == 3 and r.strategy.tp == 1  # FSDP over all 64 GPUs: MBS 1 x GA 2 x DP 64 = 128
    # NeMo 25.07's page prints this layout again (the main figures of 'LLAMA3-70B | 64 | 128 | 1 | 8192 | 1 (0) |
    # 1 (2) | 1 (4) | 1 (2) | 1 (5) | 1 | 2 (32) | 4066 (2605)'): the newer release's row is the one kept
    assert r.status == "excluded: same configuration measured with a newer release"
    assert _run(_line_of("'Container: NeMo 25.07'", "LLAMA3-70B", measured_tokens_per_sec_per_gpu=4066)).used


def test_swapped_gbs_mbs_as_printed_fails_the_batch_check():
    # 25.02 DGX-B200 table: Mixtral-8x22B | 256 | 1 | 64 | 65536 | 2 | 4 | 8 | 14 | 8 | 16 | 2232 | 824 |
    # GBS 1, MBS 64 as printed: MBS 64 x GA 16 x DP 256/(2*4*8)=4 = 4,096, not 1
    r = _run(_line_of("'Container: NeMo 25.02' / 'System: DGX-B200'", "Mixtral-8x22B"))
    assert r.status.startswith("excluded: inconsistent batch")


def test_nemo_2507_cell_with_a_bracketed_figure_gives_two_rows():
    # .../performance/performance-summary.html, 'Container: NeMo 25.07', 'System: DGX-GB200', as printed:
    # LLAMA3.1-405B | 128 | 64 | 1 | 8192 | 1 (0) | 2 (4) | 1 (8) | 1 (2) | 1 (8) | 1 | 1 (32) | 706 (638) | 1854 (1675) |
    main = _run(_line_of("'Container: NeMo 25.07'", "LLAMA3.1-405B", measured_tokens_per_sec_per_gpu=706))
    assert main.used and (main.strategy.tp, main.strategy.pp, main.strategy.zero_stage) == (2, 1, 3)
    # main layout: TP2 x PP1 x CP1 x DP64 = 128; MBS 1 x GA 1 x DP 64 = 64 = GBS
    bracket = _run(_line_of("'Container: NeMo 25.07'", "LLAMA3.1-405B", measured_tokens_per_sec_per_gpu=638))
    assert bracket.status.startswith("excluded: bracketed figure of an 'a (b)' cell")
    assert (bracket.strategy.tp, bracket.strategy.pp, bracket.strategy.cp, bracket.strategy.vpp) == (4, 8, 2, 8)


def test_same_configuration_in_an_older_release_is_deduplicated():
    # LLAMA3-8B on 8 GB200, GBS 128, MBS 2, TP/PP/CP/VP 1: 33099 in NeMo 25.04, 31737 in NeMo 25.07 (newest kept)
    old = _run(_line_of("'Container: NeMo 25.04'", "LLAMA3-8B"))
    assert old.status == "excluded: same configuration measured with a newer release"


# --- arithmetic on every row's printed cells ------------------------------------------------------
def test_nemo_page_rows_derive_dp_from_the_printed_layout():
    for r in _rows():
        if r["source_locator"].startswith(DOCS):
            tp, pp, cp = int(r["tp"]), int(r["pp"]), int(r["cp"])
            assert int(r["dp"]) == int(r["num_gpus"]) // (tp * pp * cp), r["source_locator"]
            assert "dp derived" in r["notes"] and "GA=" in r["notes"]


def test_automodel_rows_step_time_agrees_with_printed_throughput():
    # GBS x seq / (time per global step) / #GPUs against the printed Tokens/sec/GPU, all from one printed row;
    # the step time is printed to 2-3 decimals, so agreement within 0.5 % is what the rounding allows
    import re
    checked = 0
    for r in _rows():
        if r["source_locator"].startswith("NVIDIA-NeMo/Automodel@"):
            step = float(re.search(r"measured step time ([0-9.]+) s", r["notes"]).group(1))
            derived = int(r["global_batch_seqs"]) * int(r["seq_len"]) / step / int(r["num_gpus"])
            assert derived == pytest.approx(float(r["measured_tokens_per_sec_per_gpu"]), rel=5e-3), r["source_locator"]
            checked += 1
    assert checked == 23


def test_automodel_rows_whose_local_batch_does_not_make_the_global_batch_are_not_used():
    # LBS x GA x FSDP against GBS, every AutoModel row; the used ones must add up
    import re
    for key, r in ((f"{EXTERNAL_FILE_2}:{i}", r) for i, r in enumerate(_rows(), start=2)):
        if r["source_locator"].startswith("NVIDIA-NeMo/Automodel@"):
            printed = re.search(r"printed GA (\d+) counts local batches \(LBS (\d+)", r["notes"])
            ga, lbs = int(printed.group(1)), int(printed.group(2))
            if lbs * ga * int(r["dp"]) != int(r["global_batch_seqs"]):
                assert not _run(key).used, key


def test_automodel_pipeline_lora_row_with_a_batch_that_does_not_add_up():
    # NVIDIA-NeMo/Automodel@c0e4fe1bc3:docs/performance-summary.md line 31, as printed:
    # | Llama3 70B | 8 | 32 | 1 | 4 | 4 | 4096 | 2 | 4 | 1 | - | 10 | 1 | - | 24.87 | 190 | 658.62 |
    # TP2 x PP4 x FSDP1 = 8 GPUs (layout adds up), but LBS 4 x GA 4 x FSDP 1 = 16, not the printed GBS 32
    r = _run(_line_of("@c0e4fe1bc3", "Llama3 70B", num_gpus=8))
    assert r.status == "excluded: inconsistent batch: LBS x GA x DP = 16 as printed, global batch printed 32"
