"""LoRA and QLoRA: a frozen base plus small trainable adapters.

Frozen base (no gradients, no optimizer states): bf16 for LoRA; for QLoRA the GEMM weights of the
layers are NF4 — 4 bits plus double-quantised constants, 0.127 bits/param (Dettmers et al. 2023,
"QLoRA", sec. 3) — while embeddings, the output layer and norms stay bf16 (bitsandbytes skips the LM
head; norms are not Linear layers). The base is sharded only where the framework shards parameters
(ZeRO-3, FSDP).

Adapters: every targeted linear W (d_in → d_out) gets A (r × d_in) and B (d_out × r), r·(d_in + d_out)
parameters, kept in fp32 with fp32 gradients and AdamW moments (see layouts.adapter_layout).
Target names follow Hugging Face PEFT (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj,
down_proj) or Megatron-Core's fused modules (linear_qkv, linear_proj, linear_fc1, linear_fc2); MLP
targets apply to dense MLPs, shared experts and every routed expert.
"""

from __future__ import annotations

import numpy as np

from ..assumptions.memory import BF16_BYTES, NF4_BITS_PER_PARAM, NF4_DOUBLE_QUANT_CONSTANT_BITS_PER_PARAM
from ..model_spec import ModelSpec
from ..plans import PlanGrid
from ..training import TrainingSetup
from .activations import attention_widths
from .stages import StageLoad

NF4_BYTES_PER_PARAM = (NF4_BITS_PER_PARAM + NF4_DOUBLE_QUANT_CONSTANT_BITS_PER_PARAM) / 8


def _linear_shapes(model: ModelSpec, ffn: int) -> dict[str, tuple[int, int]]:
    h = model.hidden_size
    w = attention_widths(model)
    mlp = {"gate_proj": (h, ffn), "up_proj": (h, ffn), "down_proj": (ffn, h)} if model.gated_mlp else \
        {"up_proj": (h, ffn), "down_proj": (ffn, h)}
    # Megatron-Core's fused modules (one adapter per module): linear_qkv = q|k|v, linear_fc1 = gate|up
    fc1 = (h, (2 if model.gated_mlp else 1) * ffn)
    megatron = {"linear_qkv": (h, w.q + w.k + w.v), "linear_proj": (w.out, h), "linear_fc1": fc1,
                "linear_fc2": (ffn, h)}
    return {"q_proj": (h, w.q), "k_proj": (h, w.k), "v_proj": (h, w.v), "o_proj": (w.out, h), **mlp, **megatron}


ATTENTION_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "linear_qkv", "linear_proj")


def adapter_params(model: ModelSpec, targets: tuple[str, ...], rank: int, ffn: int, *, attention: bool) -> int:
    """Adapter elements for the attention targets (attention=True) or the MLP targets of one MLP."""
    total = 0
    for name, (d_in, d_out) in _linear_shapes(model, ffn).items():
        if name in targets and (name in ATTENTION_TARGETS) == attention:
            total += rank * (d_in + d_out)
    return total


def adapter_params_on_rank(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid,
                           stage: StageLoad) -> tuple[np.ndarray, np.ndarray]:
    """(dense, expert) adapter elements on one GPU; split like the layers they adapt."""
    r, targets = setup.lora_rank, setup.lora_targets
    tp = grid.tp.astype(float)
    attention = adapter_params(model, targets, r, 0, attention=True)
    dense_mlp = adapter_params(model, targets, r, model.ffn_hidden_size, attention=False)
    dense = (stage.layers * attention + stage.dense_layers * dense_mlp) / tp
    expert = np.zeros(len(grid))
    if model.moe is not None:
        m = model.moe
        shared = m.num_shared_experts * adapter_params(model, targets, r, m.shared_ffn, attention=False)
        routed = m.num_experts * adapter_params(model, targets, r, m.expert_ffn_hidden_size, attention=False)
        dense = dense + stage.moe_layers * shared / tp
        expert = stage.moe_layers * routed / (grid.ep * grid.etp)
    return dense, expert


def frozen_base_bytes(setup: TrainingSetup, gemm_elements: np.ndarray, all_elements: np.ndarray) -> np.ndarray:
    """Bytes of the frozen base on one GPU, before ZeRO-3/FSDP sharding."""
    if setup.mode == "qlora":
        return gemm_elements * NF4_BYTES_PER_PARAM + (all_elements - gemm_elements) * BF16_BYTES
    return all_elements * BF16_BYTES
