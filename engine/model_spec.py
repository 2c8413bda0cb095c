"""ModelSpec: the architecture of a decoder-only transformer, as data.

Everything the memory, FLOP and communication models need, and nothing else. Frozen:
a spec is a value. Parameter counts live in `params.py`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class MoESpec(_Frozen):
    """Mixture-of-experts feed-forward blocks (Mixtral, Qwen3-MoE, DeepSeek)."""

    num_experts: int = Field(gt=1, description="routed experts per MoE layer")
    top_k: int = Field(ge=1, description="routed experts each token visits")
    expert_ffn_hidden_size: int = Field(gt=0, description="FFN width of one routed expert")
    num_shared_experts: int = Field(default=0, ge=0, description="always-on experts (DeepSeek)")
    shared_expert_ffn_hidden_size: int | None = Field(
        default=None, description="FFN width of one shared expert; defaults to the routed expert's"
    )
    first_k_dense_layers: int = Field(default=0, ge=0, description="leading layers with a dense FFN")
    layer_frequency: int = Field(default=1, ge=1, description="every n-th layer (after the dense ones) is MoE")
    n_group: int = Field(default=1, ge=1, description="expert groups for group-limited routing (DeepSeek n_group)")
    topk_group: int = Field(default=1, ge=1, description="groups a token may reach (DeepSeek topk_group); "
                                                         "n_group = topk_group = 1: no limit")

    @model_validator(mode="after")
    def _top_k_fits(self) -> "MoESpec":
        if self.top_k > self.num_experts:
            raise ValueError(f"top_k={self.top_k} exceeds num_experts={self.num_experts}")
        if self.topk_group > self.n_group:
            raise ValueError(f"topk_group={self.topk_group} exceeds n_group={self.n_group}")
        if self.num_experts % self.n_group:
            raise ValueError(f"num_experts={self.num_experts} is not a multiple of n_group={self.n_group}")
        return self

    @property
    def group_limited(self) -> bool:
        """Each token's experts come from topk_group of n_group groups (DeepSeek-V2/V3)."""
        return self.topk_group < self.n_group

    @property
    def shared_ffn(self) -> int:
        return self.shared_expert_ffn_hidden_size or self.expert_ffn_hidden_size


class MLASpec(_Frozen):
    """DeepSeek's multi-head latent attention (DeepSeek-V2 paper, section 2.1)."""

    q_lora_rank: int | None = Field(default=None, description="None: queries projected directly (V2-Lite)")
    kv_lora_rank: int = Field(gt=0)
    qk_nope_head_dim: int = Field(gt=0)
    qk_rope_head_dim: int = Field(gt=0)
    v_head_dim: int = Field(gt=0)


class ModelSpec(_Frozen):
    """A decoder-only transformer."""

    name: str
    num_layers: int = Field(gt=0, le=10_000)
    hidden_size: int = Field(gt=0, le=1_000_000)
    num_attention_heads: int = Field(gt=0)
    num_kv_heads: int | None = Field(default=None, description="GQA/MQA; None means MHA")
    head_dim: int | None = Field(default=None, description="None means hidden_size / heads")
    ffn_hidden_size: int = Field(gt=0, description="dense FFN width")
    gated_mlp: bool = Field(default=True, description="SwiGLU/GeGLU: three matrices instead of two")
    activation: str = Field(default="silu")
    vocab_size: int = Field(gt=0, le=10_000_000)
    tied_embeddings: bool = False
    norm: Literal["rmsnorm", "layernorm"] = "rmsnorm"
    norm_bias: bool = Field(default=True, description="LayerNorm has a bias (MPT's and OLMo 1's do not); RMSNorm never")
    norms_per_layer: int = Field(default=2, ge=0, description="Gemma 2/3 have 4 (pre and post)")
    qk_norm: bool = Field(default=False, description="RMSNorm on q and k (Qwen3, Gemma 3: per head; OLMo 2: full width)")
    qk_norm_full_width: bool = Field(default=False, description="q/k norm over all heads at once (OLMo 2), not per head")
    qkv_bias: bool = False
    mlp_bias: bool = False
    attention_out_bias: bool = False
    parallel_block: bool = Field(default=False, description="attention and MLP read the same input (GPT-J, Falcon)")
    sliding_window: int | None = Field(default=None, description="local attention window, if any layers use one")
    sliding_window_layer_fraction: float = Field(
        default=0.0, ge=0.0, le=1.0, description="share of layers that use the sliding window"
    )
    moe: MoESpec | None = None
    mla: MLASpec | None = None
    max_position_embeddings: int | None = None
    learned_position_embeddings: int = Field(
        default=0, ge=0, description="rows of a learned absolute position table (GPT-2/3); 0 for RoPE/ALiBi"
    )
    approximate: bool = Field(default=False, description="synthesised from a parameter count")
    source: str = Field(default="", description="where the numbers come from")

    @model_validator(mode="after")
    def _consistent(self) -> "ModelSpec":
        kv = self.kv_heads
        if self.num_attention_heads % kv:
            raise ValueError(
                f"num_attention_heads={self.num_attention_heads} is not a multiple of num_kv_heads={kv}"
            )
        if self.head_dim is None and self.mla is None and self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size={self.hidden_size} is not divisible by num_attention_heads="
                f"{self.num_attention_heads}; give head_dim explicitly"
            )
        if self.moe and self.moe.first_k_dense_layers > self.num_layers:
            raise ValueError("moe.first_k_dense_layers exceeds num_layers")
        return self

    # Derived shapes, named so formulas read like the papers.
    @property
    def kv_heads(self) -> int:
        return self.num_kv_heads or self.num_attention_heads

    @property
    def head_size(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    def is_moe(self) -> bool:
        return self.moe is not None

    @property
    def num_moe_layers(self) -> int:
        if self.moe is None:
            return 0
        candidates = self.num_layers - self.moe.first_k_dense_layers
        return (candidates + self.moe.layer_frequency - 1) // self.moe.layer_frequency

    @property
    def num_dense_layers(self) -> int:
        return self.num_layers - self.num_moe_layers
