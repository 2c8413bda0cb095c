"""Structural properties of memory_per_gpu: vectorisation, bookkeeping, and directions every
parallelism knob must move memory in (these assert relations, not engine-derived numbers)."""

from __future__ import annotations

import numpy as np
import pytest

from shardwise.engine.inputs import build_cluster
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.model_spec import MLASpec, ModelSpec, MoESpec
from shardwise.engine.plans import RECOMPUTE_FULL, RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, PlanGrid
from shardwise.engine.training import TrainingSetup

LLAMA_70B = ModelSpec(name="llama-70b", num_layers=80, hidden_size=8192, num_attention_heads=64, num_kv_heads=8,
                      ffn_hidden_size=28672, vocab_size=128256)
DEEPSEEK_LIKE = ModelSpec(
    name="mla-moe", num_layers=27, hidden_size=2048, num_attention_heads=16, ffn_hidden_size=10944, vocab_size=102400,
    moe=MoESpec(num_experts=64, top_k=6, expert_ffn_hidden_size=1408, num_shared_experts=2, first_k_dense_layers=1),
    mla=MLASpec(q_lora_rank=None, kv_lora_rank=512, qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128),
)
FRAMEWORKS = ("megatron", "deepspeed", "fsdp")


def run(model, gpus, framework="megatron", seq_len=4096, global_batch=512, mode="full", **columns):
    setup = TrainingSetup(seq_len=seq_len, global_batch=global_batch, framework=framework, mode=mode)
    grid = PlanGrid.build(gpus, global_batch, **columns)
    return memory_per_gpu(model, build_cluster("h100", gpus), setup, grid), grid


def random_columns(n, seed=0):
    rng = np.random.default_rng(seed)
    return dict(tp=rng.choice([1, 2, 4, 8], n), pp=rng.choice([1, 2, 4, 8], n), vpp=rng.choice([1, 2], n),
                cp=rng.choice([1, 2], n), ep=rng.choice([1, 2, 4], n), etp=rng.choice([1, 2], n),
                zero_stage=rng.choice([0, 1, 2, 3], n), micro_batch=rng.choice([1, 2, 4], n),
                recompute=rng.choice([0, 1, 2], n))


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("model", [LLAMA_70B, DEEPSEEK_LIKE], ids=["dense", "mla-moe"])
def test_a_grid_equals_its_plans_evaluated_one_by_one(framework, model):
    columns = random_columns(40)
    mem, _ = run(model, 512, framework, **columns)
    for i in range(0, 40, 7):
        single, _ = run(model, 512, framework, **{k: int(v[i]) for k, v in columns.items()})
        assert single.total[0] == pytest.approx(mem.total[i])
        assert single.activations[0] == pytest.approx(mem.activations[i])


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("mode", ["full", "lora", "qlora"])
def test_categories_add_up_and_details_add_up_to_categories(framework, mode):
    mem, _ = run(DEEPSEEK_LIKE, 256, framework, mode=mode, **random_columns(30, seed=1))
    total = mem.weights + mem.gradients + mem.optimizer + mem.activations + mem.other
    assert np.allclose(mem.total, total)
    for category in ("weights", "gradients", "optimizer", "activations", "other"):
        parts = sum(v for k, v in mem.details.items() if k.startswith(category + "."))
        assert np.allclose(parts, getattr(mem, category)), category
    assert all((v >= 0).all() for v in mem.details.values())


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_higher_zero_stage_never_needs_more_state(framework):
    stages = [0, 1, 2, 3] if framework != "fsdp" else [1, 2, 3]
    mem, _ = run(LLAMA_70B, 256, framework, tp=8, zero_stage=stages, recompute=RECOMPUTE_FULL)
    states = mem.weights + mem.gradients + mem.optimizer
    stored = [sum(mem.details[k][i] for k in mem.details
                  if k in ("weights.parameters", "gradients.gradients", "optimizer.adam_states"))
              for i in range(len(stages))]
    assert all(a >= b for a, b in zip(stored, stored[1:])), stored
    assert states[-1] < states[0]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_more_recompute_keeps_fewer_activations(framework):
    mem, _ = run(LLAMA_70B, 256, framework, tp=8, zero_stage=1,
                 recompute=[RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL])
    kept = mem.details["activations.layers"]
    assert kept[0] >= kept[1] > kept[2]


def test_sequence_parallelism_and_tp_reduce_activations():
    mem, _ = run(LLAMA_70B, 256, tp=[1, 8, 8], sequence_parallel=[False, False, True], zero_stage=1)
    kept = mem.details["activations.layers"]
    assert kept[0] > kept[1] > kept[2]


def test_first_stage_carries_pipeline_inflight_activations():
    # Tiny vocabulary: no logits to make the last stage heavier; the first stage holds PP micro-batches.
    model = LLAMA_70B.model_copy(update={"vocab_size": 256})
    mem, _ = run(model, 64, tp=8, pp=[2, 4, 8], zero_stage=1, recompute=RECOMPUTE_NONE)
    per_layer = mem.details["activations.layers"] / (80 / np.array([2, 4, 8]))
    assert per_layer[0] < per_layer[1] < per_layer[2]  # 2, 4, 8 micro-batches in flight


def test_qlora_base_is_smaller_than_lora_base_is_smaller_than_full_states():
    full, _ = run(LLAMA_70B, 8, zero_stage=0, tp=8)
    lora, _ = run(LLAMA_70B, 8, zero_stage=0, tp=8, mode="lora")
    qlora, _ = run(LLAMA_70B, 8, zero_stage=0, tp=8, mode="qlora")
    assert qlora.weights[0] < lora.weights[0] < full.weights[0] + full.gradients[0] + full.optimizer[0]
    assert lora.optimizer[0] < 0.01 * full.optimizer[0]


def test_unknown_attention_option_is_a_clear_error():
    setup = TrainingSetup()
    grid = PlanGrid.build(8, 8)
    with pytest.raises(ValueError, match="attention must be"):
        memory_per_gpu(LLAMA_70B, build_cluster("h100", 8), setup, grid, attention="paged")


def test_other_is_context_nccl_and_fragmentation_only():
    mem, _ = run(LLAMA_70B, 64, tp=8, pp=2, zero_stage=1)
    assert set(k for k in mem.details if k.startswith("other.")) == {
        "other.cuda_context", "other.nccl_buffers", "other.allocator_fragmentation"}
