"""external_runs.csv: published measured runs held out of the fit and the bands. Expected values below are
read from the source text (quoted as printed, with its repo@commit:path), never from the engine."""

import pytest

from shardwise.engine.calibration.external import EXTERNAL_FILE, load_external_runs
from shardwise.engine.calibration.runs import load_runs, used_runs
from support.external_file import ExternalFile

KNOWN_EXCLUSIONS = (
    "superseded by a later revision of the same release's page",
    "printed layout inconsistent",
    "parallel layout (TP/PP) not stated",
    "same configuration measured with a newer release",
    "NVFP4 precision is not modelled",
    "hybrid Mamba-Transformer",
    "no architecture for",
    "architecture not given by the source",
    "no measured throughput",
    "global batch not stated",
    "architecture not given by the stored sources",
    "JAX/XLA framework",
    "inconsistent batch",
    "sequence length not stated",
)


SET_1 = ExternalFile(EXTERNAL_FILE, load_external_runs)
_rows, _run = SET_1.rows, SET_1.run


def _line_of(locator_part: str, model: str, **cells) -> str:
    return SET_1.key(locator_part, model=model, **cells)


def test_every_row_is_used_or_excluded_with_a_stated_reason():
    SET_1.assert_used_or_excluded(KNOWN_EXCLUSIONS, at_least=20)


def test_every_row_cites_a_commit_and_path():
    for r in _rows():
        repo_commit, _, path = r["source_locator"].partition(":")
        assert "@" in repo_commit and len(repo_commit.split("@")[1]) == 10 and path, r["source_locator"]


def test_external_runs_never_reach_the_fit_or_the_bands():
    calibration_keys = {r.key for r in load_runs()}
    assert not any(k.startswith(EXTERNAL_FILE) for k in calibration_keys)
    assert not any(r.key.startswith(EXTERNAL_FILE) for r in used_runs())
    sources = {r.source for r in load_runs()}
    assert not sources & {"nemo-perf-summary", "nemo-long-sequence", "dgxc-benchmarking"}


# --- hand checks against the source text -----------------------------------------------------------
def test_nemo_2407_gpt3_5b_as_printed():
    # NVIDIA/NeMo@8e3d65dcfe:docs/source/performance/performance_summary.md line 14, as printed:
    # | GPT3-5B | 64 | 2048 | 4 | 2048 | 1 | 1 | 1 | 1 | 23406 | 765 | ***5*** |
    # (Model, #-GPUs, GBS, MBS, Sequence Length, TP, PP, CP, VP, Tokens / sec / GPU, Model TFLOP / sec / GPU)
    r = _run(_line_of("@8e3d65dcfe", "GPT3-5B"))
    assert r.used
    assert r.measured_tokens_per_gpu == 23406 and r.throughput_basis == "reported"
    assert r.cluster.num_gpus == 64 and r.setup.seq_len == 2048 and r.setup.global_batch == 2048
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.micro_batch) == (1, 1, 1, 4)
    assert r.setup.precision == "fp8"  # page: "pre-training performance ... at FP8 precision"
    # dp derived = GPUs / (TP * PP * CP) = 64 / (1 * 1 * 1) = 64
    assert _rows()[int(r.key.split(":")[1]) - 2]["dp"] == "64"


def test_nemo_2407_llama3_70b_dp_is_derived_from_the_layout():
    # same page line 25: | LLAMA3-70B | 64 | 128 | 1 | 8192 | 4 | 4 | 2 | 5 | 1524 | 734 | ***74*** |
    key = _line_of("@8e3d65dcfe", "LLAMA3-70B")
    r = _run(key)
    assert r.measured_tokens_per_gpu == 1524
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.vpp) == (4, 4, 2, 5)
    # dp = 64 / (4 * 4 * 2) = 2
    assert _rows()[int(key.split(":")[1]) - 2]["dp"] == "2"


def test_nemo_2407_lora_row_is_a_lora_run():
    # same page, Finetuning table line 40: | LLAMA2-7B | LoRA | 8 | 32 | 1 | 4096 | 1 | 1 | 24824 | 663 | ***0.8*** |
    r = _run(_line_of("@8e3d65dcfe", "LLAMA2-7B", measured_tokens_per_sec_per_gpu="24824"))
    assert r.used and r.setup.mode == "lora" and r.setup.global_batch == 32 and r.setup.seq_len == 4096


def test_earlier_revisions_of_the_2407_page_are_superseded():
    # NVIDIA/NeMo@4c73f77670 (2024-08-14), same line 14: | GPT3-5B | 64 | 2048 | 4 | 2048 | ... | 22521 | 736 |
    r = _run(_line_of("@4c73f77670", "GPT3-5B"))
    assert r.status == "excluded: superseded by a later revision of the same release's page (8e3d65dcfe)"
    assert r.measured_tokens_per_gpu == 22521  # kept parsed: revisions of one release show run-to-run spread


def test_long_sequence_h100_row_throughput_from_model_tflops():
    # NVIDIA/NeMo@19fadb67b0:docs/source/performance/performance_long_sequence.md, 'LLAMA2-7B (FP8) - H100',
    # the 128K row as printed: <td>128</td> <td>128</td> <td>32</td> <td>424</td> <td>4</td> <td>1</td>
    # <td>8</td> <td>4</td> <td>555</td>  (SeqLen K, #GPUs, Batch Size, without-CP TFLOPS, TP, PP, DP, CP, with-CP TFLOPS)
    r = _run(_line_of("@19fadb67b0", "LLAMA2-7B", num_gpus=128, tp=4))
    assert r.used
    assert r.setup.seq_len == 128 * 1024 == 131072  # SeqLen (K) 128 x 1024, derived
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp) == (4, 1, 4) and r.setup.global_batch == 32
    # TP x PP x CP x DP = 4 x 1 x 4 x 8 = 128 = #GPUs
    # tokens/s/GPU = model TFLOP/s / Megatron FLOPs per token (Narayanan et al. 2021 eq. 3 as Megatron-LM
    # generalises it: 6 x GEMM weights incl. logits + 12 x L x s x heads x head_dim for attention counted full).
    # Llama 2 7B (L32 d4096 h32 MHA, ffn 11008 SwiGLU, vocab 32000 untied):
    #   GEMM weights per layer = 3*4096^2 (QKV) + 4096^2 (out) + 3*4096*11008 (gated MLP) = 202,375,168
    #   all GEMM weights = 32 * 202,375,168 + 32,000 * 4096 (logits) = 6,607,077,376
    #   attention = 32 * 6 * 131,072 * 32 * (128 + 128) = 206,158,430,208
    #   per token = 6 * 6,607,077,376 + 206,158,430,208 = 245,800,894,464
    #   tokens/s/GPU = 555e12 / 245,800,894,464 = 2,257.9
    assert r.throughput_basis == "from model TFLOP/s/GPU (Megatron formula)"
    assert r.measured_tokens_per_gpu == pytest.approx(2257.9, abs=0.1)


def test_long_sequence_without_cp_cells_are_kept_but_have_no_layout():
    # same table, 128K row, "Without CP" TFLOPS / GPU 424: the page says only that the most performant
    # configuration without CP was used, not which one.
    r = _run(_line_of("@19fadb67b0", "LLAMA2-7B", num_gpus=128, measured_tflops_per_gpu=424))
    assert r.status == "excluded: parallel layout (TP/PP) not stated"


def test_b200_long_sequence_latest_revision_does_not_multiply_out():
    # NVIDIA/NeMo@19fadb67b0 'LLAMA3-8B (FP8) - B200', 8K row as printed:
    # <td>8</td> <td>8</td> <td>512</td> <td>1,671</td> <td>1</td> <td>1</td> <td>2</td> <td>1</td> <td>1,671</td>
    # TP x PP x DP x CP = 1 x 1 x 2 x 1 = 2, but # of GPUs printed 8
    r = _run(_line_of("@19fadb67b0", "LLAMA3-8B", num_gpus=8, tp=1))
    assert r.status == "excluded: printed layout inconsistent: TP x PP x CP x DP = 2, #GPUs printed 8"


# --- NVIDIA/dgxc-benchmarking READMEs ---------------------------------------------------------------
def _dgxc(locator_part: str, model: str, gpus: int, precision: str):
    return _run(_line_of(locator_part, model, num_gpus=gpus, precision=precision))


def test_dgxc_llama31_70b_title_layout_and_derived_tokens_per_gpu():
    # NVIDIA/dgxc-benchmarking@1b9bb6b3cf (v25.03):llama3.1/README_70b.md lines 58-61, as printed:
    # | Llama 3.1 70b FP8 (TP=4, PP=4, CP=2, VP=5, MBS=1, GA=64) | Throughput on 64x H100 GPUs (GBS=128) | ...
    # | Training step time (seconds per step)   | 10.46  | ...
    # | Throughput in tokens per second         | 100275 | ...
    r = _dgxc("@1b9bb6b3cf:llama3.1/README_70b.md", "Llama 3.1 70B", 64, "FP8")
    assert r.status in ("used", "excluded: same configuration measured with a newer release")
    row = _rows()[int(r.key.split(":")[1]) - 2]
    # tokens/s/GPU = 100,275 / 64 GPUs = 1,566.8 (DERIVED)
    assert row["measured_tokens_per_sec_per_gpu"] == "1566.8"
    # the README's own formula: 8192 x 128 / 10.46 s = 100,245 tokens/s, the printed 100,275 within rounding of the step time
    assert 8192 * 128 / 10.46 == pytest.approx(100275, rel=1e-3)
    # dp derived = 64 / (TP4 x PP4 x CP2) = 2; MBS 1 x GA 64 x DP 2 = 128 = GBS
    assert (row["tp"], row["pp"], row["cp"], row["vpp"], row["dp"], row["global_batch_seqs"]) == ("4", "4", "2", "5", "2", "128")


def test_dgxc_layout_from_the_readme_layout_table():
    # NVIDIA/dgxc-benchmarking@0efdb235ac (v25.04.02):llama3.1/README.md, layout table row as printed:
    # | 70b  | FP8       | 64   | 8192   | 80     | 4   | 8   | 1   | NA  | 2   | 5   | 1   | 128  | 64 |
    # (Size, Precision, GPUs, SeqLen, Layers, TP, PP, CP, EP, DP, VP, MBS, GBS, GA); results table lines 103-106:
    # | Llama 3.1 70b FP8 | 64x H100 GPUs | ... ; | Training step time (seconds per step) | 9.86 | ... ;
    # | Throughput in tokens per second | 106346 | ...
    r = _dgxc("@0efdb235ac:llama3.1/README.md", "Llama 3.1 70B", 64, "FP8")
    assert r.used
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.vpp, r.strategy.micro_batch) == (4, 8, 1, 5, 1)
    assert r.setup.seq_len == 8192 and r.setup.global_batch == 128
    # TP4 x PP8 x CP1 x DP2 = 64 = #GPUs; tokens/s/GPU = 106,346 / 64 = 1,661.7
    assert r.measured_tokens_per_gpu == pytest.approx(1661.7)


def test_dgxc_reduced_layer_proxy_keeps_the_printed_layer_count():
    # NVIDIA/dgxc-benchmarking@1b9bb6b3cf (v25.03):llama3.1/README_405b.md, BF16 table, 32-GPU column:
    # | Layers | 7 | ... ; | GBS | 126 | ... ; | PP | 1 | ... ; title (TP=8, PP=9, CP=2, VP=7, MBS=1, GA=63)
    r = _dgxc("@1b9bb6b3cf:llama3.1/README_405b.md", "Llama 3.1 405B proxy (L7)", 32, "BF16")
    assert r.used
    assert r.model.num_layers == 7 and r.model.hidden_size == 16384  # Llama 3.1 405B otherwise
    # in-table PP 1 overrides the title's PP=9: dp = 32 / (8 x 1 x 2) = 2; MBS 1 x GA 63 x DP 2 = 126 = GBS
    assert (r.strategy.tp, r.strategy.pp, r.strategy.cp) == (8, 1, 2) and r.setup.global_batch == 126


def test_dgxc_printed_global_batch_that_does_not_add_up_is_excluded():
    # NVIDIA/dgxc-benchmarking@0efdb235ac (v25.04.02):nemo_megatron/README_175b.md layout table, as printed:
    # | 175b | BF16/FP8  | 512  | 2048   | 96     | 4   | 8   | 1   | NA  | 16  | 6   | 1   | 1204 | 64  |
    # MBS 1 x GA 64 x DP 16 = 1,024, not the printed GBS 1,204
    r = _dgxc("@0efdb235ac:nemo_megatron/README_175b.md", "GPT3-175B", 512, "BF16")
    assert r.status.startswith("excluded: inconsistent batch")


def test_dgxc_jax_rows_are_kept_and_excluded():
    jax = [r for r in load_external_runs() if r.release.startswith(("MaxText", "PaxML"))]
    assert jax and all(r.status.startswith("excluded: JAX/XLA framework") for r in jax)
