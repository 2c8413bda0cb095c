"""memory_per_gpu against peak memory measured in published training runs (calibration/measured_runs.csv).

Apples to apples: torchtitan logs `torch.cuda.max_memory_reserved()` (torchtitan components/metrics.py:
"memory: {max_reserved_gib}"), i.e. tensors plus the caching allocator's fragmentation, without the
CUDA context and NCCL's own buffers. So we compare it with total − cuda_context − nccl_buffers.
The Ultra-Scale Playbook ran nanotron, which is none of our three flavours; its layout (bf16 params,
fp32 gradient accumulation, ZeRO-1 over DP) is Megatron's, so we use `megatron` and hold it to a
looser band. Errors are reported in docs/memory.md (benchmarks/memory_measured_runs.py).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from shardwise.engine.inputs import build_cluster
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.model_catalog import get_model
from shardwise.engine.model_spec import ModelSpec
from shardwise.engine.plans import RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, PlanGrid
from shardwise.engine.training import TrainingSetup

GIB = 2**30
REPO = Path(__file__).resolve().parents[3]
CANDIDATES = [REPO.parent / "shared" / "calibration", REPO / "engine" / "calibration" / "data"]
CALIBRATION = next((p for p in CANDIDATES if (p / "measured_runs.csv").exists()), None)

# The Playbook's models (nanotron scripts/scaling_benchmarks.py, as the CSV's arch_notes give them).
PLAYBOOK = {
    "Llama-like 1B (playbook)": ModelSpec(name="playbook-1b", num_layers=16, hidden_size=2048, num_attention_heads=32,
                                          ffn_hidden_size=8192, vocab_size=131072, tied_embeddings=True),
    "Llama-like 8B (playbook)": ModelSpec(name="playbook-8b", num_layers=32, hidden_size=4096, num_attention_heads=32,
                                          ffn_hidden_size=14336, vocab_size=131072),
}


def rows():
    if CALIBRATION is None:
        pytest.skip("calibration data not found")
    with open(CALIBRATION / "measured_runs.csv", newline="") as f:
        return [r for r in csv.DictReader(f) if r["measured_peak_mem_gb"]]


def tracked_peak_plus_fragmentation(model, framework, gpus, seq_len, global_batch, **plan) -> float:
    setup = TrainingSetup(seq_len=seq_len, global_batch=global_batch, framework=framework)
    grid = PlanGrid.build(gpus, global_batch, **plan)
    mem = memory_per_gpu(model, build_cluster("h100", gpus), setup, grid)
    d = mem.details
    return float(mem.total[0] - d["other.cuda_context"][0] - d["other.nccl_buffers"][0])


def eager_torchtitan_rows():
    """torchtitan Dec 2024, Llama 3.1 8B, FSDP2 only, bf16, no torch.compile: the configuration the
    fsdp flavour describes (compiled runs fuse the loss and norms; FP8 changes the saved tensors)."""
    return [r for r in rows() if r["source"].startswith("torchtitan benchmarks (Dec 2024)")
            and r["precision"] == "bf16" and "compile" not in r["notes"].split(";")[0] and r["tp"] == "1"]


def test_torchtitan_eager_fsdp_rows_are_present():
    found = eager_torchtitan_rows()
    assert [(r["num_gpus"], r["measured_peak_mem_gb"]) for r in found] == [("8", "82.4"), ("128", "67.0")]


@pytest.mark.parametrize("index", [0, 1])
def test_torchtitan_llama31_8b_fsdp_within_15_percent(index):
    row = eager_torchtitan_rows()[index]
    gpus, micro_batch = int(row["num_gpus"]), int(row["micro_batch"])
    predicted = tracked_peak_plus_fragmentation(
        get_model("Llama-3.1-8B"), "fsdp", gpus, int(row["seq_len"]), int(row["global_batch_seqs"]),
        zero_stage=3, micro_batch=micro_batch, recompute=RECOMPUTE_SELECTIVE)  # per-op SAC
    measured = float(row["measured_peak_mem_gb"]) * GIB  # GiB, max over GPUs
    assert predicted == pytest.approx(measured, rel=0.15)


def playbook_rows():
    return [r for r in rows() if "Playbook" in r["source"]]


def playbook_errors(framework: str = "megatron") -> list[float]:
    errors = []
    for r in playbook_rows():
        zero = int(r["zero_stage_or_fsdp"][-1])
        predicted = tracked_peak_plus_fragmentation(
            PLAYBOOK[r["model"]], framework, int(r["num_gpus"]), int(r["seq_len"]), int(r["global_batch_seqs"]),
            tp=int(r["tp"]), pp=int(r["pp"]), zero_stage=zero, micro_batch=int(r["micro_batch"]),
            recompute=RECOMPUTE_NONE)
        measured = float(r["measured_peak_mem_gb"]) * 1e9  # "GB" as labelled
        errors.append((predicted - measured) / measured)
    return errors


def test_playbook_best_configurations_within_a_loose_band():
    errors = playbook_errors()
    assert len(errors) == 14
    assert max(abs(e) for e in errors) < 0.35
    assert sorted(abs(e) for e in errors)[len(errors) // 2] < 0.25  # median


def test_playbook_best_configurations_as_nanotron():
    """The same 14 runs with the `nanotron` flavour (issue 13: its layout from its source plus the
    fitted NANOTRON_SAVED_ACTIVATION_FACTOR), compared as the sweep reports memory:
    torch.cuda.max_memory_allocated / 2^30 against the tensor peak (total − other). Today: median
    |error| 10 %, 13 of 14 within ±25 % (the exception, 1B TP2 PP2 mb2 at 8.4 GB, +56 %)."""
    errors = []
    for r in playbook_rows():
        zero = int(r["zero_stage_or_fsdp"][-1])
        gpus, global_batch = int(r["num_gpus"]), int(r["global_batch_seqs"])
        setup = TrainingSetup(seq_len=int(r["seq_len"]), global_batch=global_batch, framework="nanotron")
        grid = PlanGrid.build(gpus, global_batch, tp=int(r["tp"]), pp=int(r["pp"]), zero_stage=zero,
                              micro_batch=int(r["micro_batch"]), recompute=RECOMPUTE_NONE)
        mem = memory_per_gpu(PLAYBOOK[r["model"]], build_cluster("h100", gpus), setup, grid)
        predicted = float(mem.total[0] - mem.other[0]) / GIB
        errors.append(predicted / float(r["measured_peak_mem_gb"]) - 1)
    assert len(errors) == 14
    assert sorted(abs(e) for e in errors)[len(errors) // 2] < 0.12  # median; 18 % as megatron
    assert sum(abs(e) <= 0.25 for e in errors) >= 12
