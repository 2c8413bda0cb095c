"""external_runs_9c.csv: external set 9, part C (users' own runs posted in GitHub issue threads and pull-request
discussions), collected for session 12's judge (docs/performance.md, "Protocol for session 12"). The file is read only
through the loader every external set shares (external._load), so every earlier set's rules apply. Expected values
below are the threads' printed figures, quoted with the thread, or arithmetic on them; the counts are a tally of the
rows as written - never the engine's output. Nothing here predicts a row's throughput, and nothing fits or sets a
band on set 9."""

import re
from collections import Counter

import pytest

from shardwise.engine.calibration.external import _load
from shardwise.engine.calibration.runs import load_runs, used_runs
from support.external_file import ExternalFile

FILE = "external_runs_9c.csv"


PART = ExternalFile(FILE, lambda: _load(FILE))  # the rows as written and the runs the shared loader parses
_rows, _runs = PART.rows, PART.load


def _thread(row: dict) -> str:
    """'owner/repo#n' of the row's thread (its source is 'GitHub issue owner/repo#n')."""
    return row["source"].removeprefix("GitHub issue ")


def _one(locator_part: str, **cells):
    """(row, run) of the one row whose locator holds `locator_part` and whose cells are `cells`."""
    key = PART.key(locator_part, **cells)
    return PART.row(key), PART.run(key)


def _kind(status: str) -> str:
    for kind in ("used", "PERF PROBLEM THREAD", "sequence length not stated", "parallel layout (TP/PP) not stated",
                 "unknown GPU", "no architecture", "the source contradicts the row", "WARM-UP ONLY",
                 "no measured throughput", "is in no entry of the stack table"):
        if kind in status:
            return kind
    raise AssertionError(status)


# The tally of the file as written, counted by hand from the rows while writing them: (thread, why not used) -> rows.
# Most threads print a throughput without the sequence length (or the GPUs, or the layout): the row is written with
# what the thread states and the parser excludes it by the existing 'not stated' wording, never by a guess.
TALLY = {
    ("NVIDIA/Megatron-LM#756", "sequence length not stated"): 1,
    ("NVIDIA/Megatron-LM#1000", "PERF PROBLEM THREAD"): 1,
    ("NVIDIA/Megatron-LM#1031", "sequence length not stated"): 1,
    ("NVIDIA/Megatron-LM#396", "sequence length not stated"): 2,
    ("NVIDIA/Megatron-LM#2383", "no architecture"): 1,
    ("NVIDIA/Megatron-LM#3067", "sequence length not stated"): 2,
    ("epfLLM/Megatron-LLM#11", "sequence length not stated"): 1,
    ("epfLLM/Megatron-LLM#22", "sequence length not stated"): 1,
    ("alibaba/Megatron-LLaMA#24", "unknown GPU"): 1, ("alibaba/Megatron-LLaMA#24", "sequence length not stated"): 1,
    ("alibaba/Megatron-LLaMA#16", "unknown GPU"): 1,
    ("alibaba/Pai-Megatron-Patch#643", "unknown GPU"): 2,
    ("alibaba/Pai-Megatron-Patch#658", "unknown GPU"): 4,
    ("alibaba/Pai-Megatron-Patch#348", "unknown GPU"): 2,
    ("swiss-ai/Megatron-LM#29", "sequence length not stated"): 2,
    ("swiss-ai/Megatron-LM#23", "no architecture"): 1,
    ("swiss-ai/Megatron-LM#10", "sequence length not stated"): 2,
    ("xingchensong/TouchNet#13", "no architecture"): 3,
    ("huggingface/trl#6869", "parallel layout (TP/PP) not stated"): 1, ("huggingface/trl#6869", "no architecture"): 3,
    ("huggingface/trl#6845", "sequence length not stated"): 7,
    ("pytorch/torchtitan#1884", "sequence length not stated"): 1,
    ("pytorch/torchtitan#929", "sequence length not stated"): 1,
    ("pytorch/torchtitan#481", "sequence length not stated"): 1,
    ("NVIDIA-NeMo/Speech#8059", "sequence length not stated"): 1,
    ("NVIDIA-NeMo/Speech#14850", "sequence length not stated"): 2,
    ("NVIDIA-NeMo/Megatron-Bridge#3561", "parallel layout (TP/PP) not stated"): 4,
    ("deepspeedai/DeepSpeed#4385", "sequence length not stated"): 1,
    ("deepspeedai/DeepSpeed#2159", "sequence length not stated"): 1,
    ("SeanNaren/min-LLM#16", "sequence length not stated"): 1,
    ("allenai/OLMo#762", "sequence length not stated"): 3,
    ("ROCm/TransformerEngine#79", "sequence length not stated"): 2,
    ("NVIDIA/Megatron-LM#371", "sequence length not stated"): 2,
    ("karpathy/nanoGPT#110", "sequence length not stated"): 1,
    ("NVIDIA/Megatron-LM#449", "no architecture"): 1,
    ("pytorch/torchtitan#778", "the source contradicts the row"): 5,
    ("NVIDIA-NeMo/Megatron-Bridge#5123", "used"): 1,
    # Qwen3-32B is the catalog's qwen3-32b: runs.py CATALOG_NAMES maps the label (the lead, before any prediction);
    # step 10 alone is a warm-up figure, the OOM row prints no throughput
    ("pytorch/torchtitan#1690", "used"): 3, ("pytorch/torchtitan#1690", "WARM-UP ONLY"): 1,
    ("pytorch/torchtitan#1690", "no measured throughput"): 1,
    # PithTrain's own stack is in no entry of session 12's stack table (stacks.py), the parser's first reason now
    ("mlc-ai/pith-train#79", "is in no entry of the stack table"): 1, ("mlc-ai/pith-train#79", "PERF PROBLEM THREAD"): 1,
    # Qwen3-8B is the catalog's qwen3-8b, likewise mapped: the B300 run is used, the H200 figure the thread calls stale
    # and the TP=2 run whose layout is not stated are not
    ("awslabs/awsome-distributed-ai#1138", "used"): 1,
    ("awslabs/awsome-distributed-ai#1138", "the source contradicts the row"): 1,
    ("awslabs/awsome-distributed-ai#1138", "parallel layout (TP/PP) not stated"): 1,
    ("NVIDIA-NeMo/Megatron-Bridge#4439", "sequence length not stated"): 2,
}
# Threads whose title or first post is about a performance problem (rule 3 of SOURCES.md, set 9 part C): every row says so.
PERF_PROBLEM_THREADS = {
    "NVIDIA/Megatron-LM#756", "NVIDIA/Megatron-LM#1000", "NVIDIA/Megatron-LM#1031", "NVIDIA/Megatron-LM#396",
    "NVIDIA/Megatron-LM#2383", "epfLLM/Megatron-LLM#11", "epfLLM/Megatron-LLM#22", "alibaba/Megatron-LLaMA#24",
    "alibaba/Megatron-LLaMA#16", "alibaba/Pai-Megatron-Patch#643", "alibaba/Pai-Megatron-Patch#348",
    "pytorch/torchtitan#929", "NVIDIA-NeMo/Speech#8059", "NVIDIA-NeMo/Speech#14850", "deepspeedai/DeepSpeed#4385",
    "deepspeedai/DeepSpeed#2159", "SeanNaren/min-LLM#16", "allenai/OLMo#762", "ROCm/TransformerEngine#79",
    "NVIDIA/Megatron-LM#371", "karpathy/nanoGPT#110", "NVIDIA/Megatron-LM#449", "mlc-ai/pith-train#79",
    "NVIDIA-NeMo/Megatron-Bridge#4439",
}


def test_rows_used_and_excluded_by_kind_are_the_tally_of_the_file():
    rows, runs = _rows(), _runs()
    assert len(rows) == len(runs) == sum(TALLY.values()) == 80
    assert Counter((_thread(row), _kind(run.status)) for row, run in zip(rows, runs)) == TALLY
    # five used runs (Megatron-Bridge#5123, torchtitan#1690 x3, awsome-distributed-ai#1138: the last two through the
    # lead's Qwen3 labels); every other thread reports a performance problem, or leaves the sequence length, the GPUs
    # or the layout unstated, or runs a GPU or model the catalog lacks (SOURCES.md, set 9 part C totals)
    assert sum(run.used for run in runs) == 5
    assert len({_thread(row) for row in rows}) == 39


def test_part_c_never_reaches_the_fit_or_the_bands():
    assert not any(r.key.startswith(FILE) for r in load_runs())
    assert not any(r.key.startswith(FILE) for r in used_runs())


def test_every_row_names_its_thread_and_links_it():
    for row in _rows():
        m = re.fullmatch(r"GitHub issue ([\w.-]+/[\w.-]+)#(\d+)", row["source"])
        assert m, row["source"]
        assert re.match(rf"https://github.com/{re.escape(m.group(1))}/(issues|pull)/{m.group(2)}\b", row["source_locator"]), \
            row["source_locator"]


def test_perf_problem_threads_are_marked_on_every_row_and_none_is_used():
    for row, run in zip(_rows(), _runs()):
        marked = "PERF PROBLEM THREAD" in row["notes"]
        assert marked == (_thread(row) in PERF_PROBLEM_THREADS), row["source_locator"]
        assert not (marked and run.used)


def test_a_parsed_perf_problem_row_is_excluded_by_its_marker():
    # NVIDIA/Megatron-LM#1000 states everything the parser needs ('TP=8 PP=2 DP=1 CP=1 seq_length=4096', world size 16,
    # global_batch_size 1): it parses, and the thread's topic (rule 3), not its figure, excludes it
    row, run = _one("NVIDIA/Megatron-LM/issues/1000")
    assert run.model is not None and run.strategy.tp == 8 and run.strategy.pp == 2 and run.setup.seq_len == 4096
    assert "PERF PROBLEM THREAD" in run.status and not run.used


# --- arithmetic on the printed figures -------------------------------------------------------------------------------
def test_megatron_llama_sequence_is_derived_from_the_printed_log_line():
    # alibaba/Megatron-LLaMA#24: "iteration 22/ 1000 | elapsed time per iteration (ms): 5223.7 | average overall
    # token/sec : 50184.0 | average token/sec/GPU : 6273.0 | global batch size: 64" on 8 A800 (TP4-PP1-DP2)
    row, _ = _one("issues/24 description (2023-09-18): TP4-PP1-DP2")
    assert 50184.0 * 5.2237 / 64 == pytest.approx(4096, abs=1)
    assert 50184.0 / 8 == pytest.approx(6273.0, abs=0.1)
    assert (row["seq_len"], row["global_batch_seqs"], row["measured_tokens_per_sec_per_gpu"]) == ("4096", "64", "6273.0")
    # the TP1-PP1-DP8 run's printed figures give 8707.8 x 8 x 15.0882 s = 1.05M tokens per iteration, not 64 x 4096:
    # its batch and sequence are left unstated rather than guessed
    row, run = _one("the TP1-PP1-DP8 figures")
    assert 8707.8 * 8 * 15.0882 != pytest.approx(64 * 4096, rel=0.05)
    assert row["seq_len"] == row["global_batch_seqs"] == "" and "sequence length not stated" in run.status


@pytest.mark.parametrize("issue,cfg,gbs,seq,gpus,step_s,printed", [
    # alibaba/Pai-Megatron-Patch#643: "| tp=1, pp=2, ep=8 | 8192 | 128 | 16 | 10.361 | 6325 |" (Qwen3-30B-A3B on H800)
    ("643", "tp=1, pp=2, ep=8", 128, 8192, 16, 10.361, 6325),
    ("643", "tp=1, pp=4, ep=4", 256, 8192, 16, 20.992, 6244),
    # alibaba/Pai-Megatron-Patch#658: "| tp1, ep8, pp32, vpp3, mbs=4, recompute=full | 4096 | 4096 | 256 | 42.537 | 1540.68 |"
    ("658", "tp1, ep8, pp32, vpp3, mbs=4, recompute=full", 4096, 4096, 256, 42.537, 1540.68),
    ("658", "tp2, ep8, pp32, vpp3, mbs=4, recompute=full", 4096, 4096, 256, 43.495, 1506.76),
    ("658", "tp2, ep8, pp32, vpp3, mbs=1, recompute=select", 2048, 4096, 256, 22.42, 1461.56),
    ("658", "tp1, ep8, pp32, vpp3, mbs=1, recompute=moe", 2048, 4096, 256, 22.946, 1428.04),
])
def test_pai_megatron_tokens_per_gpu_are_the_printed_batch_over_step_time(issue, cfg, gbs, seq, gpus, step_s, printed):
    row, run = _one(f"table row '{cfg}'")
    assert f"/issues/{issue} " in row["source_locator"]
    # Tokens/GPU/Second = GlobalBatchSize x SeqLen / TimePerIter / GPUNum, to the printed rounding
    assert gbs * seq / step_s / gpus == pytest.approx(printed, rel=5e-4)
    assert float(row["measured_tokens_per_sec_per_gpu"]) == printed
    assert (int(row["global_batch_seqs"]), int(row["seq_len"]), int(row["num_gpus"])) == (gbs, seq, gpus)
    assert "unknown GPU 'H800" in run.status  # H800 is not a catalog GPU


def test_megatron_llm_rows_are_the_printed_tflops_of_the_latest_iteration_read():
    # NVIDIA/Megatron-LM#756: "iteration 73/ 100 | ... elapsed time per iteration (ms): 5829.9 | throughput per GPU
    # (TFLOP/s/GPU): 224.0 | ... global batch size: 128" (16 x H100, Mixtral 8x7B)
    row, _ = _one("issues/756")
    assert (row["measured_tflops_per_gpu"], row["global_batch_seqs"], row["num_gpus"]) == ("224.0", "128", "16")
    # NVIDIA/Megatron-LM#3067: "iteration 100/15258789 | consumed samples: 12800 | elapsed time per iteration (ms): 2559.1
    # | throughput per GPU (TFLOP/s/GPU): 337.0 | global batch size: 128": consumed samples / iteration = the batch
    row, _ = _one("Mixed Precision (BF16 Comm")
    assert 12800 / 100 == int(row["global_batch_seqs"]) and row["measured_tflops_per_gpu"] == "337.0"


def test_v100_row_states_the_derivation_it_did_not_write():
    # NVIDIA/Megatron-LM#449: "64(8*8) 32GB V100 ... global_batch_size is 256 with seq_length 2048", "iteration 200/ 500000 |
    # ... elapsed time per iteration (ms): 4270.8": per GPU 256 x 2048 / 4.2708 s / 64, quoted in notes, not written as a figure
    row, _ = _one("issues/449")
    assert f"{256 * 2048 / 4.2708 / 64:.1f}" == "1918.1" and "= 1918.1" in row["notes"]
    assert not row["measured_tokens_per_sec_per_gpu"]


@pytest.mark.parametrize("cfg,mfu,tflops,tps", [
    # pytorch/torchtitan#778, table 'No AC (seq len 4096) - 8 H100s': "bfloat16, eager mode | 0.2339 | 2.31E+14 | 231.37 |
    # 4495.0 | 28.07 GB" (MFU, FLOP/s, TFLOP/s, tokens/s, memory under four headers)
    ("bfloat16, eager mode", 0.2339, 231.37, 4495.0), ("bfloat16, torch.compile", 0.2618, 258.92, 5033.8),
    ("float8, torch.compile full model", 0.3002, 296.92, 5768.6)])
def test_torchtitan_778_columns_read_as_mfu_tflops_and_tokens_per_gpu(cfg, mfu, tflops, tps):
    row, run = _one(f"row '{cfg}'")
    # the MFU column is TFLOP/s over the 989 TFLOP/s bf16 peak torchtitan uses for H100, to the printed rounding
    assert mfu * 989 == pytest.approx(tflops, rel=0.003)
    # TFLOP/s / tokens/s is one FLOPs-per-token count for every row (Llama 3 8B at seq 4096: ~51.5e9), so the tokens/s
    # column is per GPU, like the TFLOP/s column
    assert tflops * 1e12 / tps == pytest.approx(231.37e12 / 4495.0, rel=0.002)
    assert (float(row["measured_tokens_per_sec_per_gpu"]), float(row["measured_tflops_per_gpu"])) == (tps, tflops)
    # the text says 4 H100s, the table header 8: the row is excluded by its source's own contradiction
    assert "the source contradicts the row" in run.status


def test_bridge_5123_row_is_the_printed_step_time_over_the_recipe_batch():
    # NVIDIA-NeMo/Megatron-Bridge#5123: "Performance verification on 2 nodes with 16x H100, BF16", "Bridge recipe commit:
    # 3a9559f01283190bf16a7a592c1e2c35d908c496", "Steps 41-50: 20,147.290 ms average, 299.352 model TFLOP/s/GPU";
    # recipe at that commit (recipes/qwen/h100/qwen3_moe.py qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config): seq_length
    # 4096, TP 1, PP 1, CP 1, EP 16, global_batch_size 1024, micro_batch_size 1, no recompute
    row, run = _one("Megatron-Bridge/pull/5123")
    assert run.used and run.measured_tokens_per_gpu == pytest.approx(1024 * 4096 / 20.14729 / 16, abs=0.05)
    assert (run.setup.seq_len, run.setup.global_batch, run.strategy.micro_batch) == (4096, 1024, 1)
    assert (run.strategy.tp, run.strategy.pp, run.strategy.cp, run.strategy.ep, run.strategy.recompute) == (1, 1, 1, 16, "none")
    assert (run.cluster.gpu.id, run.cluster.num_gpus, run.setup.precision) == ("h100-sxm", 16, "bf16")
    assert run.model.name == "Qwen3-30B-A3B"
    # the recipe's flex/HybridEP dispatcher, EP communication overlap and TE graphs of moe_router/moe_preprocess, as
    # bridge_moe_recipes.csv maps them (HybridEP -> deepep, scoped TE graphs -> per-layer)
    assert (run.setup.moe_dispatcher, run.setup.moe_a2a_overlap, run.setup.cuda_graphs) == ("deepep", True, "per-layer")
    # the printed model TFLOP/s is written beside it; Bridge's count per token, 299.352e12 / 13,011.4 = 23.0e9
    assert float(row["measured_tflops_per_gpu"]) * 1e12 / run.measured_tokens_per_gpu == pytest.approx(23.0e9, rel=0.01)


# pytorch/torchtitan#1690: "local batch size=2, FSDP=8, full AC ... step: 50 ... memory: 81.85GiB(86.17%) tps: 1,874
# tflops: 389.87 mfu: 39.42%" (torch.compile) and the table "16 (64) | 4096 | fsdp 4, tp 8 | Full AC ... step: 20 ... tps: 876
# tflops: 182.14 mfu: 18.42%", "32 (256) | 4096 | Fsdp8, tp 8 | Full AC ... step: 70 ... tps: 873 tflops: 181.63"
TORCHTITAN_1690 = {"local batch size=2, FSDP=8": (8, 2, 16, 1, 1874, 389.87, 39.42),
                   "16 (64) | 4096 | fsdp 4, tp 8": (32, 16, 64, 8, 876, 182.14, 18.42),
                   "32 (256) | 4096 | Fsdp8, tp 8": (64, 32, 256, 8, 873, 181.63, 18.36)}


@pytest.mark.parametrize("key", sorted(TORCHTITAN_1690))
def test_torchtitan_1690_rows_parse_as_used_with_the_catalog_label(key):
    """As written the rows are 'no architecture' (runs.py maps no 'Qwen3-32B' label); with the one catalog label the lead
    can add before any prediction (as set 8 did for OLMo-2), they parse as used runs of the printed figures."""
    from shardwise.engine.calibration import runs

    gpus, local, gbs, tp, tps, tflops, mfu = TORCHTITAN_1690[key]
    row, run = _one(f"'{key}")
    assert runs.CATALOG_NAMES["Qwen3-32B"] == "qwen3-32b"  # the lead's label (SOURCES.md, set 9 part C)
    line = next(i for i, r in enumerate(_rows(), start=2) if r["source_locator"] == row["source_locator"])
    run = next(r for r in _load(FILE) if r.key == f"{FILE}:{line}")
    assert run.used and run.model.name.lower() == "qwen3-32b" and run.measured_tokens_per_gpu == tps
    # local batch x FSDP degree = the printed global batch; one micro-batch per step; TP from the row
    assert (run.cluster.num_gpus, run.strategy.micro_batch, run.setup.global_batch, run.strategy.tp) == (gpus, local, gbs, tp)
    assert (run.setup.seq_len, run.strategy.recompute, run.strategy.zero_stage) == (4096, "full", 3)
    # the toml's '8 H100 GPUs (with 96GiB memory)': the parser's 96 GB H100; memory / its share = 95.0 GiB
    assert run.cluster.gpu.id == "h100-sxm-96gb" and 81.85 / 0.8617 == pytest.approx(95.0, abs=0.05)
    # one FLOPs-per-token count for all three (Qwen3-32B at seq 4096), and mfu x 989 TFLOP/s = tflops
    assert tflops * 1e12 / tps == pytest.approx(389.87e12 / 1874, rel=0.005)
    assert mfu / 100 * 989 == pytest.approx(tflops, rel=0.002)
    assert run.tp_comm_overlap == (tp == 1)  # no torch.compile in the TP runs: torchtitan's async TP is off


def test_catalog_labels_add_four_used_runs_and_no_earlier_layout():
    from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
    from support.external_file import assert_no_used_run_repeats_an_earlier_layout

    mine = _load(FILE)
    # Megatron-Bridge#5123, torchtitan#1690's three (its step-10 and OOM rows not) and awsome-distributed-ai#1138's B300
    # run (its H200 figure is contradicted by the thread; its TP=2 experiment states no PP or batch)
    assert sum(r.used for r in mine) == 5
    assert sorted(_thread(_rows()[int(r.key.split(":")[1]) - 2]) for r in mine if r.used) == [
        "NVIDIA-NeMo/Megatron-Bridge#5123", "awslabs/awsome-distributed-ai#1138", "pytorch/torchtitan#1690",
        "pytorch/torchtitan#1690", "pytorch/torchtitan#1690"]
    earlier = load_runs() + tuple(r for n, load in JUDGED_EXTERNAL_SETS.items() if n < 9 for r in load())
    assert_no_used_run_repeats_an_earlier_layout(mine, earlier)


def test_aws_b300_row_is_the_printed_step_time_over_the_stated_batch():
    # awslabs/awsome-distributed-ai#1138 README at the PR head (94cf02bc): B300 column 'TFLOP/s per GPU 976', 'Throughput
    # 318K tok/s', 'Step time (100 iters) 1.65s', 'Micro-batch size 4', 'Global batch size 128 (grad_accum=2)', TP 1 PP 1
    # DP 16, seq 4096, 'Selective (core_attn only)'
    from shardwise.engine.calibration import runs

    row, _ = _one("column 'B300 (p6-b300)'")
    assert float(row["measured_tokens_per_sec_per_gpu"]) == pytest.approx(128 * 4096 / 1.65 / 16, abs=0.05)
    assert 128 * 4096 / 1.65 == pytest.approx(318e3, rel=0.002)  # the printed whole-job throughput, to its rounding
    assert 4 * 2 * 16 == 128  # MBS x GA x DP = GBS
    assert runs.CATALOG_NAMES["Qwen3-8B"] == "qwen3-8b"  # the lead's label (SOURCES.md, set 9 part C)
    line = next(i for i, r in enumerate(_rows(), start=2) if r["source_locator"] == row["source_locator"])
    run = next(r for r in _load(FILE) if r.key == f"{FILE}:{line}")
    assert run.used and run.cluster.gpu.id == "b300" and run.model.name.lower() == "qwen3-8b"
    assert (run.strategy.tp, run.strategy.pp, run.strategy.micro_batch, run.setup.global_batch) == (1, 1, 4, 128)
    assert run.strategy.recompute == "selective"
    # the H200 column's figure is one the thread itself disputes (stale script): excluded by its source's contradiction
    _, h200 = _one("column 'H200 (p5en)'")
    assert "the source contradicts the row" in h200.status or "no architecture" in h200.status


def test_trl_rows_keep_step_times_out_of_the_throughput_columns():
    # huggingface/trl#6869 and #6845 print step times only ('Qwen3-30B-A3B | full FT | 8 (1 node) | ep=8 | 0.9 s');
    # #6845's sequence is printed '1M' / '2M' / '4M' (1e6- or 2^20-based not said): no throughput is derived from them
    for row in _rows():
        if _thread(row) in ("huggingface/trl#6869", "huggingface/trl#6845"):
            assert not any(row[k] for k in ("measured_tflops_per_gpu", "measured_mfu", "measured_tokens_per_sec_per_gpu"))
    for row in (r for r in _rows() if _thread(r) == "huggingface/trl#6845"):
        assert row["seq_len"] == "" and "SEQUENCE LENGTH AS PRINTED" in row["notes"]


def test_gpu_cells_never_hold_a_catalog_name_they_are_not():
    # the row parser matches substrings ('a100' in 'A800 ... 不是A100' would read an A100): the A800/H800/3090/V100 rows'
    # gpu cells name only the part, so the parser finds no catalog GPU for them
    from shardwise.engine.calibration.runs import gpu_for_row

    parts = [row for row in _rows() if any(k in row["gpu"] for k in ("A800", "H800", "3090", "V100"))]
    assert len(parts) == 13 and all(gpu_for_row(row)[0] is None for row in parts)


def test_no_used_row_shares_a_parsed_layout_with_any_earlier_row():
    """As set 8's guard counts them: every parsed earlier row, used or not (vacuous while no row of part C is used, kept
    so that a later reading which makes a row usable is checked)."""
    from shardwise.engine.calibration.external import JUDGED_EXTERNAL_SETS
    from support.external_file import assert_no_used_run_repeats_an_earlier_layout

    earlier = load_runs() + tuple(r for n, load in JUDGED_EXTERNAL_SETS.items() if n < 9 for r in load())
    assert_no_used_run_repeats_an_earlier_layout(_runs(), earlier)
