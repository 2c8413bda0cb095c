"""Parameter elements one GPU holds after tensor, expert and pipeline parallelism (before ZeRO/FSDP).

Sharding, as Megatron-Core lays it out: attention, dense MLPs and shared experts are split by TP
(column/row parallel linears); the vocabulary of the embedding and output layer by TP
(VocabParallelEmbedding, ColumnParallelLinear); routed experts by EP·ETP; norms, the router and
MLA's down-projections are replicated on every TP rank. Tied embeddings with PP > 1 keep a copy of
the table on the last stage as its output layer (Megatron `setup_embeddings_and_output_layer`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..model_spec import ModelSpec
from ..params import (attention_params, dense_mlp_params, embedding_params, final_norm_params,
                      layer_norm_params, output_layer_params, router_params,
                      routed_expert_params, shared_expert_params)
from ..plans import PlanGrid
from .stages import StageLoad


def attention_replicated_params(model: ModelSpec) -> int:
    """MLA's down-projections and their norms are not split by TP (Megatron `MLASelfAttention`)."""
    if model.mla is None:
        return 0
    mla, h = model.mla, model.hidden_size
    q_down = (h * mla.q_lora_rank + mla.q_lora_rank) if mla.q_lora_rank else 0
    kv_down = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    return q_down + kv_down


def attention_gemm_params(model: ModelSpec) -> int:
    """Attention weight matrices only (no biases, no q/k/latent norms)."""
    h, heads, kv, d = model.hidden_size, model.num_attention_heads, model.kv_heads, model.head_size
    if model.mla is None:
        return h * heads * d + 2 * h * kv * d + heads * d * h
    mla = model.mla
    qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    q = (h * mla.q_lora_rank + mla.q_lora_rank * heads * qk_head) if mla.q_lora_rank else h * heads * qk_head
    kv = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
    return q + kv + heads * mla.v_head_dim * h


def mlp_gemm_params(model: ModelSpec, ffn: int) -> int:
    return (3 if model.gated_mlp else 2) * model.hidden_size * ffn


@dataclass(frozen=True)
class RankParams:
    """Elements on one GPU, one array element per plan."""

    dense: np.ndarray  # everything but routed experts: layers, embedding, output layer, final norm
    expert: np.ndarray  # routed experts
    gemm: np.ndarray  # the GEMM weights among dense + expert (what QLoRA quantises, FP8 caches)
    embedding: np.ndarray  # the embedding table (0 off the first stage)
    output: np.ndarray  # output layer + final norm (0 off the last stage)
    dense_layer: np.ndarray  # one dense-FFN transformer layer (0 if the rank has none)
    moe_layer_shared: np.ndarray  # the non-expert part of one MoE layer (0 if the rank has none)
    moe_layer_experts: np.ndarray  # the routed experts of one MoE layer on this GPU
    largest_gemm: np.ndarray  # largest single weight matrix of a block on this GPU
    largest_layer: np.ndarray  # the heavier of one dense layer and one MoE layer (an FSDP unit)

    @property
    def total(self) -> np.ndarray:
        return self.dense + self.expert


def rank_params(model: ModelSpec, grid: PlanGrid, stage: StageLoad) -> RankParams:
    tp, ep_etp = grid.tp.astype(float), (grid.ep * grid.etp).astype(float)
    h = model.hidden_size
    attn_rep = attention_replicated_params(model)
    attn = (attention_params(model) - attn_rep) / tp + attn_rep + layer_norm_params(model)
    dense_mlp = dense_mlp_params(model) / tp
    if model.moe is not None:
        moe_rest = router_params(model) + shared_expert_params(model) / tp
        experts = routed_expert_params(model) / ep_etp
        shared_gemm = model.moe.num_shared_experts * mlp_gemm_params(model, model.moe.shared_ffn) / tp
        expert_matrix = h * model.moe.expert_ffn_hidden_size / grid.etp
    else:
        moe_rest = experts = shared_gemm = expert_matrix = np.zeros(len(grid))
    n, n_moe, n_dense = stage.layers, stage.moe_layers, stage.dense_layers

    embedding = np.where(stage.has_embedding, embedding_params(model) / tp, 0.0)
    output_matrix = output_layer_params(model) or (embedding_params(model) if model.tied_embeddings else 0)
    # Tied and PP = 1: the output layer *is* the embedding, already counted on this rank.
    output_copy = np.where(stage.has_embedding, output_layer_params(model), output_matrix)
    output = np.where(stage.has_output, output_copy / tp + final_norm_params(model), 0.0)

    dense = n * attn + n_dense * dense_mlp + n_moe * moe_rest + embedding + output
    expert = n_moe * experts
    attn_gemm = attention_gemm_params(model) / tp
    gemm = n * attn_gemm + n_dense * mlp_gemm_params(model, model.ffn_hidden_size) / tp + n_moe * shared_gemm + expert
    widest_dense = max(model.num_attention_heads * model.head_size, model.ffn_hidden_size)
    largest_gemm = np.maximum(h * widest_dense / tp, np.where(n_moe > 0, expert_matrix, 0.0))
    dense_layer = np.where(n_dense > 0, attn + dense_mlp, 0.0)
    moe_layer_shared = np.where(n_moe > 0, attn + moe_rest, 0.0)
    moe_layer_experts = np.where(n_moe > 0, experts, 0.0)
    return RankParams(dense=dense, expert=expert, gemm=gemm, embedding=embedding, output=output,
                      dense_layer=dense_layer, moe_layer_shared=moe_layer_shared,
                      moe_layer_experts=moe_layer_experts, largest_gemm=largest_gemm,
                      largest_layer=np.maximum(dense_layer, moe_layer_shared + moe_layer_experts))

