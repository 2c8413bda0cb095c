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
