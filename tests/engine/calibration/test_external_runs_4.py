"""external_runs_4.csv: external set 4, published measured runs, judged once in session 8 (band methods v5 vs v6).
Expected values below are read from the source text (quoted as printed, with its repo@commit:path), or are
arithmetic on those printed cells - never the engine's output. Nothing here predicts a row's throughput, and
nothing fits or sets a band on set 4 (only external_check and the benchmarks report it)."""

from pathlib import Path

import pytest

from shardwise.engine.calibration.external import (EXTERNAL_FILE, EXTERNAL_FILE_2, EXTERNAL_FILE_3, EXTERNAL_FILE_4,
                                                   load_external_runs, load_external_runs_2, load_external_runs_3,
                                                   load_external_runs_4)
from shardwise.engine.calibration.runs import load_runs, used_runs
from support.external_file import ExternalFile

KNOWN_EXCLUSIONS = (
    "no architecture for",  # fms-fsdp's 34b (L48 d8192 h64 kv8 ffn22016) is no catalog model
    "recompute: block-level activation checkpointing of an unstated fraction",
    "parallel layout (TP/PP) not stated",  # Megatron-LLaMA prints no TP/PP for its tables
    "superseded by a later revision",
    "same configuration measured with a newer release",
    "printed layout inconsistent",
    "the source contradicts the row",
    "no measured throughput",  # torchtitan's 'OOM' rows
    "repeat run",  # MLPerf's result_1, result_2 of a system whose result_0 is used
    "unknown GPU",  # MLPerf's L40S LoRA systems
)
SET_4_SOURCES = {"fms-fsdp", "colossal-ai", "megatron-llama", "torchtitan-docs-2024", "mlperf-training-v4.0",
                 "mlperf-training-v3.1", "mlperf-training-v3.1-azure"}


SET_4 = ExternalFile(EXTERNAL_FILE_4, load_external_runs_4)
_rows, _key, _run, _row = SET_4.rows, SET_4.key, SET_4.run, SET_4.row


def test_every_row_is_used_or_excluded_with_a_stated_reason():
    SET_4.assert_used_or_excluded(KNOWN_EXCLUSIONS, at_least=33)


def test_every_row_cites_a_repository_commit_and_path():
    for r in _rows():
        repo_commit, _, path = r["source_locator"].partition(":")
        assert "@" in repo_commit and len(repo_commit.split("@")[1]) == 10, r
        assert ".md '" in path or ("result_" in path and "/config_" in path), r


def test_set_4_never_reaches_the_fit_the_bands_or_sets_1_to_3():
    assert not any(r.key.startswith(EXTERNAL_FILE_4) for r in load_runs())
    assert not any(r.key.startswith(EXTERNAL_FILE_4) for r in used_runs())
    assert not {r.source for r in load_runs()} & SET_4_SOURCES
    assert all(r.key.startswith(EXTERNAL_FILE + ":") for r in load_external_runs())
    assert all(r.key.startswith(EXTERNAL_FILE_2 + ":") for r in load_external_runs_2())
    assert all(r.key.startswith(EXTERNAL_FILE_3 + ":") for r in load_external_runs_3())
    assert {r.source for r in load_external_runs_4()} == SET_4_SOURCES


def test_no_used_row_repeats_a_layout_of_the_calibration_data_or_sets_1_to_3():
    def layout(r):
        return (r.model.name, r.cluster.gpu.id, r.cluster.num_gpus, r.setup.seq_len, r.setup.precision,
                r.strategy.tp, r.strategy.pp, r.strategy.cp, r.strategy.vpp, r.strategy.ep)
    earlier = load_runs() + load_external_runs() + load_external_runs_2() + load_external_runs_3()
    seen = {layout(r) for r in earlier if r.model and r.cluster and r.setup and r.strategy}
    for r in load_external_runs_4():
        assert not r.used or layout(r) not in seen, r.key
    assert not SET_4_SOURCES & {r.source for r in earlier}


def test_set_4_is_judged_and_never_in_the_bands_it_judged():
    # Set 4 had its first run in session 8 (docs/performance.md, "Session 8: external set 4's first run"),
    # judging v5 against v6: neither may be estimated on it (v7 and v8, written after that run, are: "Protocol for
    # session 9", "Protocol for session 11"); no engine module but the loader names it.
    from shardwise.engine.calibration.band_methods import EXTERNAL_SETS_IN_BANDS

    assert 4 not in EXTERNAL_SETS_IN_BANDS["v5"] and 4 not in EXTERNAL_SETS_IN_BANDS["v6"]
    # session 12: challengers v9 and v10 take sets 1-8 as items (after their first runs)
    assert [m for m, sets in EXTERNAL_SETS_IN_BANDS.items() if 4 in sets] == ["v7", "v8", "v9", "v10", "v11", "v12"]
    root = Path(__file__).resolve().parents[3]
    for path in (root / "engine").rglob("*.py"):
        if path.name not in ("external.py", "runs.py"):
            text = path.read_text(encoding="utf-8", errors="ignore")
            for name in ("external_runs_4", "EXTERNAL_FILE_4", "load_external_runs_4"):
                assert name not in text, (path, name)


# --- foundation-model-stack/fms-fsdp README.md ------------------------------------------------------
FMS_COMPILE = "fms-fsdp@ed74fd5dde:README.md"


def test_fms_fsdp_7b_with_compile_as_printed():
    # foundation-model-stack/fms-fsdp@ed74fd5dde:README.md 'Training throughput benchmarks', as printed:
    # | 7b | HSDP | Y | No AC | 2 | 4550 | 9600 |
    # (Model Size | Sharding Strategy | Compile | Activation Checkpointing | Batch Size |
    #  tokens/sec/GPU A100 80G 128 GPUs with 400Gbps | tokens/sec/GPU H100 96 GPUs with 800 Gbps)
    a100 = _run(_key(FMS_COMPILE, model="LLAMA2-7B", num_gpus=128))
    h100 = _run(_key(FMS_COMPILE, model="LLAMA2-7B", num_gpus=96))
    assert a100.used and a100.measured_tokens_per_gpu == 4550 and a100.cluster.gpu.id == "a100-80gb"
    assert h100.used and h100.measured_tokens_per_gpu == 9600 and h100.cluster.gpu.id == "h100-sxm"
    # HSDP: sharded within each 8-GPU node, replicated across 128 / 8 = 16 (A100) and 96 / 8 = 12 (H100) nodes
    assert (a100.strategy.hsdp_replicas, h100.strategy.hsdp_replicas) == (128 // 8, 96 // 8)
    assert a100.strategy.zero_stage == 3 and a100.strategy.recompute == "none"
    # batch_size is per GPU and there is no gradient accumulation (train_utils.py: tokens per step =
    # batch_size x world_size x seq_length); seq_length 4096 in train_config
    assert (a100.setup.global_batch, a100.setup.seq_len, a100.strategy.micro_batch) == (2 * 128, 4096, 2)


def test_fms_fsdp_7b_earlier_measurements_of_the_same_plan_give_way_to_the_newest():
    # the same 7b plan (HSDP, no AC, batch 2 on 128 A100) printed 3760 (2024-02-21..26), 3650 (2024-02-27), 3700 (2024-03-13)
    assert _run(_key("fms-fsdp@e82195e520", model="LLAMA2-7B")).status == \
        "excluded: same configuration measured with a newer release"
    assert _run(_key("fms-fsdp@4ffb9bdfa3", model="LLAMA2-7B", num_gpus=128)).status == \
        "excluded: same configuration measured with a newer release"
    old = _run(_key("fms-fsdp@cf6e42c7be", model="LLAMA2-7B"))
    assert old.measured_tokens_per_gpu == 3650 and old.status.startswith("excluded: superseded")


def test_fms_fsdp_70b_batch_6_runs_full_ac():
    # fms-fsdp@e82195e520:README.md, as printed: | 70b | FSDP | True | 6 | 380| 850 |
    # scripts/70b.sh @82731b2f89 (the README's 'Example Script'): --fsdp_activation_checkpointing=True
    # --selective_checkpointing=1 (every block) --sharding_strategy=fsdp --batch_size=6
    a100 = _run(_key("fms-fsdp@e82195e520", model="LLAMA2-70B", num_gpus=128))
    h100 = _run(_key("fms-fsdp@e82195e520", model="LLAMA2-70B", num_gpus=96))
    assert (a100.measured_tokens_per_gpu, h100.measured_tokens_per_gpu) == (380, 850)
    assert a100.strategy.recompute == "full" and a100.strategy.hsdp_replicas == 1
    assert (a100.setup.global_batch, h100.setup.global_batch) == (6 * 128, 6 * 96)
    assert _row(a100.key)["measured_mfu"] == "69"  # '| 70B | 6 | 0.69 | 0.49 |' (MFU A100 / H100)


def test_fms_fsdp_selective_ac_rows_are_excluded():
    # | 13b | FSDP | Y | Selective AC | 2 | 2150 | 4850 |: fms-fsdp's selective_checkpointing is the fraction of
    # blocks wrapped in activation checkpointing, and the README does not say which fraction
    r = _run(_key(FMS_COMPILE, model="LLAMA2-13B", num_gpus=128))
    assert float(_row(r.key)["measured_tokens_per_sec_per_gpu"]) == 2150
    assert r.status == "excluded: recompute: block-level activation checkpointing of an unstated fraction of the blocks"


# --- hpcaitech/ColossalAI README.md 'Colossal-AI Benchmark' ------------------------------------------
CAI = "ColossalAI@e5fdefa6cf:README.md"


def test_colossal_ai_7b_h200_as_printed():
    # | H200 | 8 | 7B | zero2(dp8) | 36 | 4096 | 17.13 samp/s | 534.18 | 119040.02 |
    r = _run(_key(CAI, gpu="H200", num_gpus=8))
    assert r.used and r.measured_tokens_per_gpu == pytest.approx(17.13 * 4096 / 8)  # samples/s of the whole job
    assert r.setup.global_batch == 36 * 8 and r.strategy.zero_stage == 2 and r.cluster.gpu.id == "h200"
    assert r.model.name == "Llama-2-7B"  # benchmark.py '7b': LlamaConfig defaults (L32 d4096 h32 ffn11008 vocab32000)


def test_colossal_ai_rows_that_do_not_add_up_are_excluded():
    # | B200 | 8 | 7B | zero1(dp2)+tp2+pp4 | 128 | ...: 2 x 2 x 4 = 16 GPUs, not 8
    assert _run(_key(CAI, gpu="B200")).status == \
        "excluded: printed layout inconsistent: TP x PP x CP x DP = 16, #GPUs printed 8"
    # | H200 | 16 | 70B | zero1(dp2)+tp2+pp4 | ...: the text says 'For the 70B model on 16 cards, the B200 ...'
    r = _run(_key(CAI, gpu="H200", num_gpus=16, tp=2))
    assert r.status.startswith("excluded: the source contradicts the row: the row prints H200")


# --- alibaba/Megatron-LLaMA README.md ----------------------------------------------------------------
def test_megatron_llama_rows_are_written_without_a_layout():
    # alibaba/Megatron-LLaMA@e3d671a53d:README.md, as printed:
    # | Megatron-LLaMA with OverlappedDistributedOptimizer | 1890 (23.9 days) | 1845 (12.2 days) |
    key = _key("Megatron-LLaMA@e3d671a53d", num_gpus=512, measured_tokens_per_sec_per_gpu=1845)
    assert _run(key).status == "excluded: parallel layout (TP/PP) not stated"
    # 1845 tokens/s/GPU x 512 GPUs x 12.2 days ~ 1T tokens (the LLaMA-13B budget the README reproduces)
    assert 1845 * 512 * 12.2 * 86400 == pytest.approx(1.0e12, rel=0.01)
    assert sum("Megatron-LLaMA" in r["source"] for r in _rows()) == 8


# --- pytorch/torchtitan docs/performance.md, 2024 revisions (not the benchmark files in measured_runs.csv) ----------
TT = "torchtitan@"


def test_torchtitan_docs_llama2_13b_on_64_a100_as_printed():
    # pytorch/torchtitan@3faaa1a0de:docs/performance.md 'Llama 2 performance numbers', as printed:
    # | 13B | 2 | no | 2162 | 61.1%	|   (Model size | Batch size | Activation checkpointing | WPS | MFU)
    r = _run(_key(TT, model="LLAMA2-13B", recompute="none"))
    assert r.used and r.measured_tokens_per_gpu == 2162 and r.cluster.gpu.id == "a100-80gb"
    # 'global batch size = local batch size 2 * number of FSDP ranks 64 = 128'; llama2_13b.toml seq_len = 4096
    assert (r.setup.global_batch, r.strategy.micro_batch, r.setup.seq_len) == (2 * 64, 2, 4096)
    assert (r.strategy.tp, r.strategy.zero_stage) == (1, 3) and r.source == "torchtitan-docs-2024"


def test_torchtitan_docs_oom_and_per_layer_ac_rows_are_written_and_excluded():
    # | 70B | 2 | selective op | OOM | OOM |
    r = _run(_key(TT, model="LLAMA2-70B", micro_batch=2, recompute="selective (per-op SAC)"))
    assert r.status == "excluded: no measured throughput"
    # | 8B | 1 | selective layer | 2904 | 56.8% |: every N-th layer checkpointed, N not given
    r = _run(_key(TT, model="LLAMA3-8B", measured_tokens_per_sec_per_gpu=2904))
    assert r.status.startswith("excluded: recompute: block-level activation checkpointing of an unstated fraction")


def test_torchtitan_docs_405b_rows_on_128_h100():
    # pytorch/torchtitan@4d88a8a44f:docs/performance.md 'Llama 3.1 performance numbers', as printed:
    # | 405B | 2 | full | 109 | 29.0%[^1] | None
    # | 405B | 2 | full | 177 | 23.46%[^2] | Float8
    # | 405B | 2 | full | 185 | 24.52% | Float8 + Async TP
    # 'global batch size = local batch size 2 * number of FSDP ranks 16 = 32'; llama3_405b.toml tensor_parallel_degree = 8
    plain = _run(_key("torchtitan@4d88a8a44f", measured_tokens_per_sec_per_gpu=109))
    fp8 = _run(_key("torchtitan@4d88a8a44f", measured_tokens_per_sec_per_gpu=177))
    async_tp = _run(_key("torchtitan@4d88a8a44f", measured_tokens_per_sec_per_gpu=185))
    assert all(r.used for r in (plain, fp8, async_tp))
    assert (plain.strategy.tp, plain.cluster.num_gpus // plain.strategy.tp, plain.setup.global_batch) == (8, 16, 2 * 16)
    assert (plain.setup.precision, fp8.setup.precision, async_tp.setup.precision) == ("bf16", "fp8", "fp8")
    # async TP is the only difference between the Float8 rows: both kept, as two configurations
    assert (fp8.tp_comm_overlap, async_tp.tp_comm_overlap) == (False, True) and fp8.config != async_tp.config
    # 9515a140b0 printed '| 405B | 2 | full | 118 | 37.1%[^1] | None'; 3faaa1a0de ('Fix the performance number for 405B') 109
    old = _run(_key("torchtitan@9515a140b0", measured_tokens_per_sec_per_gpu=118))
    assert old.status.startswith("excluded: superseded")


# --- mlcommons/training_results_v4.0, NVIDIA GPT-3 175B ------------------------------------------------------------
ML = "training_results_v4.0@6fe954378e:NVIDIA/results/"


def test_mlperf_gpt3_512_gpus_from_the_logs_timestamps():
    # NVIDIA/results/eos_n64_ngc24.04_nemo/gpt3/result_0.txt: SYSJSON "number_of_nodes":"64", "accelerators_per_node":"8",
    # MLLOG global_batch_size 2304, gradient_accumulation_steps 72, max_sequence_length 2048; 24 training blocks of
    # epoch_count 51904512 tokens (= 11 steps x 2304 x 2048), block_start->block_stop summing to 2878.141 s
    r = _run(_key(ML + "eos_n64_ngc24.04_nemo/gpt3/result_0.txt"))
    assert 24 * 51904512 == 1245708288 == 24 * 11 * 2304 * 2048  # the log's trained_samples (tokens)
    assert r.used and r.measured_tokens_per_gpu == pytest.approx(1245708288 / 2878.141 / 512, abs=0.01)
    # config_DGXH100_64x8x128x4x8_mbs2.sh: TP 4, PP 8, INTERLEAVED_PIPELINE 4, MICRO_BATCH_SIZE 2; DP = 512 / 32 = 16
    assert (r.strategy.tp, r.strategy.pp, r.strategy.vpp, r.strategy.micro_batch) == (4, 8, 4, 2)
    assert 2 * 72 * (512 // 32) == 2304 == r.setup.global_batch and r.setup.precision == "fp8"


def test_mlperf_gpt3_family_and_repeat_runs():
    used = {r.cluster.num_gpus: r for r in load_external_runs_4()
            if r.used and r.source == "mlperf-training-v4.0" and r.model.name == "GPT-3-175B"}
    assert sorted(used) == [64 * 8, 1344 * 8, 1452 * 8]  # one GPT-3 175B family on three GPU counts
    assert (used[10752].strategy.pp, used[10752].strategy.vpp, used[10752].setup.global_batch) == (6, 8, 6 * 10752 // 24)
    repeats = [r for r in load_external_runs_4() if r.source == "mlperf-training-v4.0" and not r.used
               and r.model_label == "GPT3-175B"]
    assert len(repeats) == 6 and all(r.status.startswith("excluded: repeat run") for r in repeats)


ML31 = "training_results_v3.1@d06288b2bd:"


def test_mlperf_v31_gpt3_one_layout_on_six_gpu_counts():
    # NVIDIA/results/eos-dfw_n512_ngc23.09_nemo/gpt3/result_0.txt: global_batch_size 2048, gradient_accumulation_steps 16;
    # systems/eos-dfw_n512_ngc23.09_nemo.json: 512 nodes x 8; config_DGXH100_512x8x16x4x8_mbs1.sh: MINIBS=16, TP 4, PP 8, MBS 1
    r = _run(_key(ML31 + "NVIDIA/results/eos-dfw_n512_ngc23.09_nemo/gpt3/result_0.txt"))
    assert r.used and r.cluster.num_gpus == 512 * 8 and 16 * (4096 // 32) == 2048 == r.setup.global_batch
    assert 1 * 16 * (4096 // 32) == 2048  # MBS x GA x DP
    # 24 blocks, 1,207,959,552 tokens in 469.905 s of training blocks
    assert r.measured_tokens_per_gpu == pytest.approx(1207959552 / 469.905 / 4096, abs=0.01)
    assert (r.strategy.tp, r.strategy.pp, r.strategy.vpp) == (4, 8, 12)  # VP: conf/custom.yaml default 12
    nvidia = sorted(x.cluster.num_gpus for x in load_external_runs_4() if x.used and x.source == "mlperf-training-v3.1")
    assert nvidia == [96 * 8, 512 * 8, 768 * 8, 1024 * 8, 1280 * 8, 1344 * 8]


def test_mlperf_v31_run_whose_config_contradicts_its_log_is_excluded():
    # config_DGXH100_64x8x192x4x8_mbs1.sh hard-sets MINIBS=192 (global batch 192 x 16 = 3072); the eos_n64 logs print 2048
    r = _run(_key(ML31 + "NVIDIA/results/eos_n64_ngc23.09_nemo/gpt3/result_0.txt"))
    assert r.status.startswith("excluded: the source contradicts the row: the system's config sets MINIBS 192")
    # the v4.0 config's MINIBS is a default ("MINIBS:=128") the run overrode: 2304 = 144 x 16, not a contradiction
    assert _run(_key(ML + "eos_n64_ngc24.04_nemo/gpt3/result_0.txt")).used
    azure = _run(_key(ML31 + "Azure+NVIDIA/results/ND_H100_v5_n1344_pytorch/gpt3/result_0.txt"))
    assert azure.used and azure.source == "mlperf-training-v3.1-azure" and azure.cluster.num_gpus == 10752


def test_mlperf_llama2_70b_lora_from_the_printed_block_throughputs():
    # NVIDIA/results/eos_n8_ngc24.04_nemo/llama2_70b_lora/result_0.txt, MLLOG as printed (samples_count / step, throughput):
    # block 0->1536 12.030848484473074, 1536->1920 12.574887846175782, 1920->2304 12.543625463046812,
    # 2304->2688 12.514045837035033, 2688->3072 12.536894545016608, 3072->3456 12.566953735983171 samples/s
    blocks = [(1536, 12.030848484473074), (384, 12.574887846175782), (384, 12.543625463046812),
              (384, 12.514045837035033), (384, 12.536894545016608), (384, 12.566953735983171)]
    samples_per_s = sum(n for n, _ in blocks) / sum(n / t for n, t in blocks)  # each block's train-batch time summed
    r = _run(_key(ML + "eos_n8_ngc24.04_nemo/llama2_70b_lora/result_0.txt"))
    assert r.used and r.setup.mode == "lora" and r.setup.seq_len == 8192
    assert r.measured_tokens_per_gpu == pytest.approx(samples_per_s * 8192 / 64, abs=0.01)
    # config_DGXH100_8x8x1xtp4pp1cp2.sh: TP 4, PP 1, CP 2, MINIBS 1 -> DP = 64 / 8 = 8, global batch 8 (log: 8, GA 1)
    assert (r.strategy.tp, r.strategy.cp, r.setup.global_batch) == (4, 2, 8)
    lora = sorted(x.cluster.num_gpus for x in load_external_runs_4()
                  if x.used and x.setup.mode == "lora" and x.cluster.gpu.id == "h100-sxm")
    assert lora == [8, 64, 1024]
