"""Exact parameter counts of a ModelSpec, term by term.

Each function counts the weights of one named part, so memory and FLOP models can
shard them differently (attention and dense MLP by TP, experts by EP·ETP, embeddings
on the first/last pipeline stage).
"""

from __future__ import annotations

from dataclasses import dataclass

from .model_spec import ModelSpec


def norm_params(model: ModelSpec) -> int:
    """One normalisation layer: a scale, plus a bias for LayerNorm (unless it has none, as in MPT)."""
    return model.hidden_size * (2 if model.norm == "layernorm" and model.norm_bias else 1)


def attention_params(model: ModelSpec) -> int:
    """Q, K, V and output projections of one layer (biases and q/k norms included)."""
    h, heads, kv, d = model.hidden_size, model.num_attention_heads, model.kv_heads, model.head_size
    if model.mla is not None:
        # DeepSeek-V2 paper, eq. 9-14: low-rank joint KV compression, optional low-rank Q.
        mla = model.mla
        qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        if mla.q_lora_rank:
            q = h * mla.q_lora_rank + mla.q_lora_rank + mla.q_lora_rank * heads * qk_head  # down, norm, up
        else:
            q = h * heads * qk_head
        kv_down = h * (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank  # down (+ shared rope key), norm
        kv_up = mla.kv_lora_rank * heads * (mla.qk_nope_head_dim + mla.v_head_dim)
        out = heads * mla.v_head_dim * h
        return q + kv_down + kv_up + out
    q = h * heads * d
    k_and_v = 2 * h * kv * d
    out = heads * d * h
    bias = (heads * d + 2 * kv * d) if model.qkv_bias else 0
    out_bias = h if model.attention_out_bias else 0
    # Qwen3/Gemma 3 normalise each head (a d-vector each for q and k); OLMo 2 normalises all heads at once.
    qk_norms = ((heads + kv) * d if model.qk_norm_full_width else 2 * d) if model.qk_norm else 0
    return q + k_and_v + out + bias + out_bias + qk_norms


def mlp_params(model: ModelSpec, ffn_hidden_size: int) -> int:
    """One feed-forward block of the given width: up (and gate) plus down projection."""
    h = model.hidden_size
    matrices = 3 if model.gated_mlp else 2
    bias = ((matrices - 1) * ffn_hidden_size + h) if model.mlp_bias else 0
    return matrices * h * ffn_hidden_size + bias


def dense_mlp_params(model: ModelSpec) -> int:
    return mlp_params(model, model.ffn_hidden_size)


def router_params(model: ModelSpec) -> int:
    assert model.moe is not None
    return model.hidden_size * model.moe.num_experts


def routed_expert_params(model: ModelSpec) -> int:
    """All routed experts of one MoE layer (sharded by EP·ETP)."""
    assert model.moe is not None
    return model.moe.num_experts * mlp_params(model, model.moe.expert_ffn_hidden_size)


def shared_expert_params(model: ModelSpec) -> int:
    assert model.moe is not None
    return model.moe.num_shared_experts * mlp_params(model, model.moe.shared_ffn)


def layer_norm_params(model: ModelSpec) -> int:
    return model.norms_per_layer * norm_params(model)


def embedding_params(model: ModelSpec) -> int:
    return model.vocab_size * model.hidden_size


def position_embedding_params(model: ModelSpec) -> int:
    """A learned absolute position table (GPT-2/3); RoPE and ALiBi have no parameters."""
    return model.learned_position_embeddings * model.hidden_size


def output_layer_params(model: ModelSpec) -> int:
    """The LM head, zero when tied to the embedding (it is then shared, not stored twice)."""
    return 0 if model.tied_embeddings else model.vocab_size * model.hidden_size


def final_norm_params(model: ModelSpec) -> int:
    return norm_params(model)


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by where they live, for sharding."""

    attention: int  # all layers
    dense_mlp: int  # all dense-FFN layers
    router: int
    routed_experts: int  # all MoE layers, all experts
    shared_experts: int
    norms: int  # per-layer norms, all layers
    embedding: int
    output_layer: int
    final_norm: int
    position_embedding: int = 0  # learned absolute positions (GPT-2/3), first pipeline stage

    @property
    def total(self) -> int:
        return (self.attention + self.dense_mlp + self.router + self.routed_experts + self.shared_experts
                + self.norms + self.embedding + self.output_layer + self.final_norm + self.position_embedding)

    @property
    def non_expert(self) -> int:
        """Everything but the routed experts: replicated across EP, sharded by TP."""
        return self.total - self.routed_experts


def param_breakdown(model: ModelSpec) -> ParamBreakdown:
    moe_layers, dense_layers = model.num_moe_layers, model.num_dense_layers
    return ParamBreakdown(
        attention=model.num_layers * attention_params(model),
        dense_mlp=dense_layers * dense_mlp_params(model),
        router=moe_layers * router_params(model) if model.moe else 0,
        routed_experts=moe_layers * routed_expert_params(model) if model.moe else 0,
        shared_experts=moe_layers * shared_expert_params(model) if model.moe else 0,
        norms=model.num_layers * layer_norm_params(model),
        embedding=embedding_params(model),
        output_layer=output_layer_params(model),
        final_norm=final_norm_params(model),
        position_embedding=position_embedding_params(model),
    )


def total_params(model: ModelSpec) -> int:
    return param_breakdown(model).total


def active_params(model: ModelSpec) -> int:
    """Parameters one token touches: top-k of the routed experts instead of all of them.

    Counts the embedding table in full, as model cards do (Mixtral's 12.9 B, DeepSeek-V3's 37 B).
    """
    b = param_breakdown(model)
    if model.moe is None:
        return b.total
    per_expert = mlp_params(model, model.moe.expert_ffn_hidden_size)
    active_routed = model.num_moe_layers * model.moe.top_k * per_expert
    return b.total - b.routed_experts + active_routed
