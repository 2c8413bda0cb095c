"""How calibration rows are read: the expectations come from the rows' own text and the
frameworks' documented defaults, not from the loader."""

from __future__ import annotations

from shardwise.engine.calibration.runs import load_runs


def _run(key: str):
    return next(r for r in load_runs() if r.key == key)


def test_bridge_lora_rows_are_lora_with_bridges_default_rank():
    # measured_runs.csv:348 says "task=LoRA Performance" (Llama-3-70B, 8 GB300). Megatron-Bridge's
    # LoRA (megatron/bridge/peft/lora.py) defaults to dim=32 on linear_qkv/proj/fc1/fc2.
    run = _run("measured_runs.csv:348")
    assert run.used
    assert run.setup.mode == "lora"
    assert run.setup.lora_rank == 32
    assert run.group.endswith("| lora")  # not ranked against pre-training plans


def test_bridge_sft_rows_stay_full_fine_tuning():
    run = _run("measured_runs.csv:343")  # "task=SFT Performance": all weights train
    assert run.used and run.setup.mode == "full"


def test_rows_whose_batch_contradicts_itself_are_excluded():
    # Playbook row 1459: micro-batch 1 × GradAcc=64 × DP 64 = 4,096 sequences, but the row (and
    # its own note) says GBS = 256: the row cannot describe one run.
    run = _run("ultrascale_playbook_sweep_1b_8b.csv:1459")
    assert not run.used
    assert "inconsistent batch" in run.status
    # A consistent neighbour: 1 × GradAcc=4 × DP 64 = 256.
    assert _run("ultrascale_playbook_sweep_1b_8b.csv:1434").used


def test_torchtitan_rowwise_fp8_rows_are_marked_and_tensorwise_are_not():
    # measured_runs.csv:246 is labelled "fp8 rowwise", :244 "fp8 tensorwise" (same plan): torchtitan
    # measured the rowwise recipe 27 % slower (3,708 vs 5,078 tokens/s per GPU).
    rowwise, tensorwise = _run("measured_runs.csv:246"), _run("measured_runs.csv:244")
    assert rowwise.fp8_rowwise and not tensorwise.fp8_rowwise
    assert rowwise.strategy == tensorwise.strategy and rowwise.setup == tensorwise.setup


def test_bridge_moe_rows_carry_what_their_perf_recipe_ran():
    # Qwen3-30B-A3B, 8 GB300, MXFP8, 26.08 (measured_runs.csv:286): Megatron-Bridge@067f987df0
    # perf_recipes/qwen/gb300/qwen3_moe.py qwen3_30b_a3b_pretrain_8gpu_gb300_fp8mx_config calls
    # _enable_hybridep_full_iteration_mxfp8: cuda_graph_impl="full_iteration", flex/HybridEP,
    # overlap_moe_expert_parallel_comm=True.
    full = _run("measured_runs.csv:286")
    assert full.cuda_graphs == "full_iteration"
    assert full.setup.moe_dispatcher == "deepep" and full.setup.moe_a2a_overlap
    # DeepSeek-V3, 256 B200, MXFP8, 26.04.01 (line 370, PP8 VP2 EP32): the perf config at 8339cbb6d,
    # DEEPSEEK_V3_PRETRAIN_CONFIG_B200_FP8_MX_V2 = deepep, moe_a2a_overlap=True, TE graphs of
    # attn/router/preprocess only (the experts still launch from the host).
    partial = _run("measured_runs.csv:370")
    assert partial.cuda_graphs == "partial"
    assert partial.setup.moe_dispatcher == "deepep" and partial.setup.moe_a2a_overlap
    # Qwen3-235B, 256 B200, 26.04.01 (line 384): the config sets no flex backend and no overlap.
    plain = _run("measured_runs.csv:384")
    assert plain.setup.moe_dispatcher == "alltoall" and not plain.setup.moe_a2a_overlap
    # 25.11 rows (line 536) predate the config files we could match: nothing is assumed for them.
    unmapped = _run("measured_runs.csv:536")
    assert unmapped.cuda_graphs == "none" and unmapped.setup.moe_dispatcher == "alltoall"
    assert not unmapped.setup.moe_a2a_overlap
def test_bridge_fine_tuning_rows_are_packed_squad():
    # Bridge's fine-tuning performance recipes pack SQuAD samples (`packed_sequence=True`,
    # scripts/performance/configs/llama/llama3_llm_finetune.py); ~180 tokens per sample
    # (runs.BRIDGE_SQUAD_MEAN_DOC_LEN documents the estimate). Pre-training rows are not packed.
    for key in ("measured_runs.csv:348", "measured_runs.csv:343"):
        assert _run(key).setup.mean_doc_len == 180
    pretraining = [r for r in load_runs() if r.used and r.source == "megatron-bridge" and r.setup.mode == "full"
                   and "| lora" not in r.group and r.key not in ("measured_runs.csv:343", "measured_runs.csv:345",
                                                                  "measured_runs.csv:347")]
    assert pretraining and all(r.setup.mean_doc_len is None for r in pretraining)


def test_playbook_rows_plan_as_nanotron():
    # The Ultra-Scale Playbook sweep ran nanotron (its rows' framework column); since nanotron is a
    # framework one can plan for, the rows are predicted as nanotron plans with nanotron's profile.
    runs = [r for r in load_runs() if r.used and r.source == "playbook-sweep"]
    assert runs and all(r.setup.framework == "nanotron" and r.host_framework == "nanotron" for r in runs)
