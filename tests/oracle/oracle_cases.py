"""The oracle comparison cases: the same model, setup and plan given to PyTorch's trackers (through
oracle_runs) and to `memory_per_gpu`, with the trackers' categories mapped onto the engine's.

Shared by tests/oracle/test_memory_oracle.py and benchmarks/memory_oracle_table.py (which prints
the table pasted into docs/memory.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from shardwise.engine.cluster import Cluster
from shardwise.engine.hardware import GPUSpec, NetworkSpec
from shardwise.engine.memory import memory_per_gpu
from shardwise.engine.model_spec import ModelSpec, MoESpec
from shardwise.engine.plans import RECOMPUTE_FULL, RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, PlanGrid
from shardwise.engine.training import TrainingSetup

from oracle_models import OracleConfig
from oracle_runs import measure_fsdp, measure_single_device

CATEGORIES = ("weights", "gradients", "optimizer", "activations", "peak")

LLAMA3_8B = OracleConfig(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=128256, layers=2)
LLAMA3_70B = OracleConfig(hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672, vocab=128256, layers=2)
MIXTRAL_8X7B = OracleConfig(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=32000, layers=2,
                            num_experts=8, top_k=2, expert_ffn=14336)
# A toy 8K vocabulary makes a layer's backward, not the loss, the peak of the step; four layers so
# that FSDP's prefetch and reduce-scatter pattern between blocks shows.
LLAMA3_8B_SMALL_VOCAB = OracleConfig(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=8192,
                                     layers=4)
LLAMA3_8B_4K_VOCAB = OracleConfig(hidden=4096, heads=32, kv_heads=8, head_dim=128, ffn=14336, vocab=4096, layers=4)
LLAMA3_70B_4_LAYERS = OracleConfig(hidden=8192, heads=64, kv_heads=8, head_dim=128, ffn=28672, vocab=128256,
                                   layers=4)

RECOMPUTE = {"none": RECOMPUTE_NONE, "selective": RECOMPUTE_SELECTIVE, "full": RECOMPUTE_FULL}


@dataclass(frozen=True)
class Case:
    name: str
    cfg: OracleConfig
    flavour: str  # deepspeed | megatron | fsdp
    seq_len: int = 4096
    micro_batch: int = 1
    recompute: str = "none"
    world_size: int = 1  # fsdp: GPUs (FSDP degree × tp)
    tp: int = 1
    zero_stage: int = 0
    grad_accum: int = 2


CASES = [
    Case("Llama-3-8B width, deepspeed ZeRO-0", LLAMA3_8B, "deepspeed"),
    Case("Llama-3-8B width, deepspeed ZeRO-0, full recompute", LLAMA3_8B, "deepspeed", recompute="full"),
    Case("Llama-3-8B width, megatron", LLAMA3_8B, "megatron"),
    Case("Llama-3-8B width, megatron, full recompute", LLAMA3_8B, "megatron", recompute="full"),
    Case("Llama-3-70B width, megatron", LLAMA3_70B, "megatron"),
    Case("Mixtral-8x7B width, megatron", MIXTRAL_8X7B, "megatron"),
    Case("Mixtral-8x7B width, deepspeed ZeRO-0 (step is the peak)", MIXTRAL_8X7B, "deepspeed"),
    Case("4K vocab, deepspeed ZeRO-0, 2 × 8K tokens (a layer's backward is the peak)", LLAMA3_8B_4K_VOCAB,
         "deepspeed", seq_len=8192, micro_batch=2),
    Case("8K vocab, megatron, full recompute", LLAMA3_8B_SMALL_VOCAB, "megatron", recompute="full"),
    Case("Llama-3-8B width, fsdp ZeRO-3, 8 ranks", LLAMA3_8B, "fsdp", world_size=8, zero_stage=3),
    Case("Llama-3-8B width, fsdp ZeRO-3, 8 ranks, full AC", LLAMA3_8B, "fsdp", world_size=8, zero_stage=3,
         recompute="full"),
    Case("Llama-3-8B width, fsdp ZeRO-3, 8 ranks, per-op SAC", LLAMA3_8B, "fsdp", world_size=8, zero_stage=3,
         recompute="selective"),
    Case("Llama-3-8B width, fsdp ZeRO-2, 4 ranks", LLAMA3_8B, "fsdp", world_size=4, zero_stage=2),
    Case("Llama-3-8B width, fsdp ZeRO-3, 8 ranks, no grad accumulation", LLAMA3_8B, "fsdp", world_size=8,
         zero_stage=3, grad_accum=1),
    Case("Llama-3-8B width, deepspeed ZeRO-0, no grad accumulation", LLAMA3_8B, "deepspeed", grad_accum=1),
    Case("Llama-3-8B width, fsdp ZeRO-3 × TP 4 (SP, loss_parallel), 8 ranks", LLAMA3_8B, "fsdp", world_size=8,
         tp=4, zero_stage=3),
    Case("Llama-3-8B width, fsdp ZeRO-3 × TP 2, 8 ranks, full AC", LLAMA3_8B, "fsdp", world_size=8, tp=2,
         zero_stage=3, recompute="full"),
    Case("Llama-3-70B width, fsdp ZeRO-3, 8 ranks, full AC", LLAMA3_70B_4_LAYERS, "fsdp", world_size=8, zero_stage=3,
         recompute="full"),
    Case("8K vocab, fsdp ZeRO-3, 4 ranks, full AC", LLAMA3_8B_SMALL_VOCAB, "fsdp", world_size=4, zero_stage=3,
         recompute="full"),
]


def model_spec(cfg: OracleConfig) -> ModelSpec:
    moe = None
    if cfg.num_experts:
        moe = MoESpec(num_experts=cfg.num_experts, top_k=cfg.top_k, expert_ffn_hidden_size=cfg.expert_ffn)
    return ModelSpec(name="oracle", num_layers=cfg.layers, hidden_size=cfg.hidden, num_attention_heads=cfg.heads,
                     num_kv_heads=cfg.kv_heads, head_dim=cfg.head_dim, ffn_hidden_size=cfg.ffn,
                     vocab_size=cfg.vocab, tied_embeddings=cfg.tied, moe=moe)


def _cluster(num_gpus: int) -> Cluster:
    link = NetworkSpec(id="test-link", name="test link", bandwidth_gbs=100, latency_us=5)
    gpu = GPUSpec(id="test-gpu", name="test GPU", memory_gib=80, bf16_tflops=989, hbm_bandwidth_gbs=3350,
                  intra_node=link)
    return Cluster(gpu=gpu, num_gpus=num_gpus, gpus_per_node=8, network=link)


def predicted(case: Case) -> dict[str, float]:
    """The engine's bytes per category; `peak` is total − other (what a tracker sees)."""
    setup = TrainingSetup(seq_len=case.seq_len,
                          global_batch=case.world_size // case.tp * case.micro_batch * case.grad_accum,
                          framework=case.flavour)
    grid = PlanGrid.build(case.world_size, setup.global_batch, tp=case.tp, zero_stage=case.zero_stage,
                          micro_batch=case.micro_batch, recompute=RECOMPUTE[case.recompute])
    mem = memory_per_gpu(model_spec(case.cfg), _cluster(case.world_size), setup, grid)
    out = {"weights": mem.weights[0], "gradients": mem.gradients[0], "optimizer": mem.optimizer[0],
           "activations": mem.activations[0]}
    out["peak"] = sum(out.values())
    return {k: float(v) for k, v in out.items()}


def measured(case: Case) -> dict[str, float]:
    """The tracker's bytes at its peak, mapped to the engine's categories."""
    if case.flavour == "fsdp":
        r = measure_fsdp(case.cfg, case.seq_len, case.micro_batch, case.world_size, tp=case.tp,
                         reshard_after_forward=case.zero_stage >= 3, recompute=case.recompute,
                         grad_accum=case.grad_accum)
        out = {
            "weights": r["Sharded Param"] + r["Unsharded Param"] + r["Buffer"] + r["All Gather"],
            "gradients": r["Sharded Grad"] + r["Unsharded Grad"] + r["Reduce Scatter"],
            "optimizer": r["OptState"],
            "activations": r["Activation"] + r["Temp"] + r["Inputs"],
        }
    else:
        r = measure_single_device(case.cfg, case.seq_len, case.micro_batch, flavour=case.flavour,
                                  recompute=case.recompute, grad_accum=case.grad_accum)
        # megatron: "Other" is the persistent fp32 main-grad buffer registered with track_external
        # (plus the token ids, a few KiB); deepspeed: only the token ids.
        other_is_grads = case.flavour == "megatron"
        out = {
            "weights": r["Parameter"] + r["Buffer"],
            "gradients": r["Gradient"] + (r["Other"] if other_is_grads else 0),
            "optimizer": r["Optstate"],
            "activations": r["Activation"] + r["Temp"] + (0 if other_is_grads else r["Other"]),
        }
    out["peak"] = float(r["Total"])
    return {k: float(v) for k, v in out.items()}
