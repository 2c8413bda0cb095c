"""FLOPs of a training step, from the architecture.

A GEMM of an (m×k) by (k×n) matrix costs 2·m·k·n FLOPs, so a weight matrix with P entries
costs 2·P FLOPs per token forward and 4·P backward (data and weight gradient) — the familiar
6·N per token (Kaplan et al. 2020; Narayanan et al. 2021, appendix). Attention adds the
QK^T and softmax·V products, which grow with the sequence length.

shardwise's MFU definition (`model_flops_per_token`):
  * every GEMM a token passes through: attention projections, the dense MLP or the top-k
    routed plus shared experts (active parameters only), the router, and the logit layer;
    not the embedding lookup (a gather, no FLOPs);
  * the attention core with causal masking counted as HALF of the full s×s score matrix
    (what FlashAttention actually computes; sliding-window layers count their window);
    with packed documents (`TrainingSetup.mean_doc_len`, intra-document masking) the callers pass
    the document length, `setup.attention_length`, as the length attention spans;
  * forward + backward (3× forward), without recomputation;
  * LoRA/QLoRA: the frozen base skips its weight-gradient GEMMs (2× forward instead of 3×),
    adapters count 3× their forward.
Hardware FLOPs (HFU) add what recomputation repeats (`hardware_flops_per_token`).
`megatron_flops_per_token` and `llm_foundry_flops_per_token` reproduce those frameworks'
formulas (both count causal attention as full) so their reported MFU/TFLOP/s can be compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from .model_spec import ModelSpec
from .params import attention_params, total_params
from .training import TrainingSetup

RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL = "none", "selective", "full"


# --- Per-layer shapes ------------------------------------------------------------------------
def attention_dims(model: ModelSpec) -> tuple[int, int, int]:
    """(heads, query/key head dim, value head dim) of the attention core."""
    if model.mla is not None:
        return (model.num_attention_heads, model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim,
                model.mla.v_head_dim)
    return model.num_attention_heads, model.head_size, model.head_size


def attended_keys_per_query(seq_len: int, window: int | None = None, causal: bool = True) -> float:
    """Average keys each query scores against. Causal: (s+1)/2 ≈ s/2; a causal window w < s:
    mean over positions i of min(i, w) = w − w²/(2s) (ignoring the +1 terms); non-causal: s."""
    if not causal:
        return float(seq_len if window is None else min(window, seq_len))
    if window is None or window >= seq_len:
        return seq_len / 2
    return window - window * window / (2 * seq_len)


def attention_core_flops_per_token_layer(model: ModelSpec, seq_len: int, causal: bool = True,
                                         window: int | None = None) -> float:
    """Forward FLOPs per token of one layer's QK^T and softmax·V (Vaswani et al. 2017)."""
    heads, d_qk, d_v = attention_dims(model)
    keys = attended_keys_per_query(seq_len, window, causal)
    return 2.0 * keys * heads * (d_qk + d_v)


def attention_core_flops_per_token(model: ModelSpec, seq_len: int, causal: bool = True) -> float:
    """Forward FLOPs per token of all layers' attention cores (sliding-window layers use their window)."""
    full_layers = model.num_layers
    windowed = 0.0
    if model.sliding_window and model.sliding_window_layer_fraction > 0:
        n_win = round(model.num_layers * model.sliding_window_layer_fraction)
        full_layers -= n_win
        windowed = n_win * attention_core_flops_per_token_layer(model, seq_len, causal, model.sliding_window)
    return full_layers * attention_core_flops_per_token_layer(model, seq_len, causal) + windowed


@dataclass(frozen=True)
class MatmulParams:
    """Weight entries one token multiplies through in the forward pass, by part."""

    attention: int  # projections, all layers (incl. MLA low-rank factors)
    mlp: int  # dense MLPs, plus the top-k routed and the shared experts of MoE layers
    router: int
    logits: int  # the output layer (counted even when tied to the embedding: it is a GEMM)

    @property
    def layers(self) -> int:
        return self.attention + self.mlp + self.router

    @property
    def total(self) -> int:
        return self.layers + self.logits


def matmul_params(model: ModelSpec) -> MatmulParams:
    """GEMM weights per token. Norm scales and biases are elementwise, not GEMMs: excluded."""
    h = model.hidden_size
    attn = model.num_layers * (attention_params(model) - _attention_non_gemm_params(model))
    mlp = model.num_dense_layers * _mlp_gemm_params(model, model.ffn_hidden_size)
    router = 0
    if model.moe is not None:
        moe = model.moe
        per_layer = moe.top_k * _mlp_gemm_params(model, moe.expert_ffn_hidden_size)
        per_layer += moe.num_shared_experts * _mlp_gemm_params(model, moe.shared_ffn)
        mlp += model.num_moe_layers * per_layer
        router = model.num_moe_layers * h * moe.num_experts
    return MatmulParams(attention=attn, mlp=mlp, router=router, logits=model.vocab_size * h)


def _mlp_gemm_params(model: ModelSpec, ffn: int) -> int:
    return (3 if model.gated_mlp else 2) * model.hidden_size * ffn


def _attention_non_gemm_params(model: ModelSpec) -> int:
    """Biases and norm scales inside attention_params (not multiplied per token as a GEMM)."""
    if model.mla is not None:
        return (model.mla.q_lora_rank or 0) + model.mla.kv_lora_rank  # the two latent norms
    heads, kv, d = model.num_attention_heads, model.kv_heads, model.head_size
    bias = (heads * d + 2 * kv * d) if model.qkv_bias else 0
    out_bias = model.hidden_size if model.attention_out_bias else 0
    qk_norms = 2 * d if model.qk_norm else 0
    return bias + out_bias + qk_norms


# --- LoRA adapters -------------------------------------------------------------------------------
# Target names: PEFT's (one adapter per projection) and Megatron-Core's fused modules (one adapter per
# module: linear_qkv = q, k and v in one GEMM; linear_fc1 = gate and up; Megatron-Bridge
# megatron/bridge/peft/lora.py, NeMo 2 nemo/collections/llm/peft/lora.py). A Megatron-stack run adapts
# whole fused modules, so its recipe is written in Megatron names (calibration/runs.py reads them).
PEFT_ATTENTION_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj")
PEFT_MLP_TARGETS = ("gate_proj", "up_proj", "down_proj")
MEGATRON_ATTENTION_TARGETS = ("linear_qkv", "linear_proj")
MEGATRON_MLP_TARGETS = ("linear_fc1", "linear_fc2")


def lora_target_dims(model: ModelSpec, target: str, ffn: int) -> tuple[int, int]:
    """(in, out) features of the projection a LoRA target name (PEFT or Megatron spelling) adapts."""
    h, heads, kv, d = model.hidden_size, model.num_attention_heads, model.kv_heads, model.head_size
    _, d_qk, d_v = attention_dims(model)
    up = 2 if model.gated_mlp else 1
    dims = {
        "q_proj": (h, heads * d_qk), "k_proj": (h, kv * d), "v_proj": (h, kv * d), "o_proj": (heads * d_v, h),
        "gate_proj": (h, ffn), "up_proj": (h, ffn), "down_proj": (ffn, h),
        "linear_qkv": (h, heads * d_qk + 2 * kv * d), "linear_proj": (heads * d_v, h),
        "linear_fc1": (h, up * ffn), "linear_fc2": (ffn, h),
    }
    return dims.get(target, (0, 0))


def lora_targets_by_block(model: ModelSpec, setup: TrainingSetup) -> tuple[list[str], list[str]]:
    """The LoRA targets that exist in this model: (attention projections, MLP projections)."""
    attn = [t for t in setup.lora_targets if t in PEFT_ATTENTION_TARGETS + MEGATRON_ATTENTION_TARGETS]
    mlp = [t for t in setup.lora_targets if t in PEFT_MLP_TARGETS + MEGATRON_MLP_TARGETS]
    if not model.gated_mlp:  # a plain MLP has no gate projection
        mlp = [t for t in mlp if t != "gate_proj"]
    return attn, mlp


def lora_adapter_params_per_token(model: ModelSpec, setup: TrainingSetup) -> float:
    """Adapter weight entries a token multiplies through (A: in×r, B: r×out per target)."""
    if setup.mode == "full":
        return 0.0
    r = setup.lora_rank
    attn_targets, mlp_targets = lora_targets_by_block(model, setup)
    per_attn = sum(r * sum(lora_target_dims(model, t, 0)) for t in attn_targets)
    total = model.num_layers * per_attn
    dense_mlp = sum(r * sum(lora_target_dims(model, t, model.ffn_hidden_size)) for t in mlp_targets)
    total += model.num_dense_layers * dense_mlp
    if model.moe is not None:
        moe = model.moe
        routed = sum(r * sum(lora_target_dims(model, t, moe.expert_ffn_hidden_size)) for t in mlp_targets)
        shared = sum(r * sum(lora_target_dims(model, t, moe.shared_ffn)) for t in mlp_targets)
        total += model.num_moe_layers * (moe.top_k * routed + moe.num_shared_experts * shared)
    return float(total)


# --- Per-token totals ----------------------------------------------------------------------
def forward_flops_per_token(model: ModelSpec, seq_len: int, setup: TrainingSetup | None = None) -> float:
    """One forward pass, per token: GEMMs + causal attention core (+ LoRA adapters)."""
    adapters = lora_adapter_params_per_token(model, setup) if setup is not None else 0.0
    return 2.0 * (matmul_params(model).total + adapters) + attention_core_flops_per_token(model, seq_len)


def model_flops_per_token(model: ModelSpec, seq_len: int, setup: TrainingSetup | None = None) -> float:
    """Training FLOPs per token, shardwise's MFU numerator (definition in the module docstring)."""
    mm = matmul_params(model)
    attention = attention_core_flops_per_token(model, seq_len)
    if setup is None or setup.mode == "full":
        return 6.0 * mm.total + 3.0 * attention
    adapters = lora_adapter_params_per_token(model, setup)
    # Frozen base: forward (2P) + data gradient (2P); adapters train fully (6P).
    return 4.0 * mm.total + 6.0 * adapters + 3.0 * attention


def recompute_flops_per_token(model: ModelSpec, seq_len: int, recompute: str,
                              setup: TrainingSetup | None = None) -> float:
    """FLOPs per token that activation recomputation repeats.

    selective (Korthikanti et al. 2022): the attention core's forward again;
    full: every transformer layer's forward again (not the logit layer)."""
    if recompute == RECOMPUTE_SELECTIVE:
        return attention_core_flops_per_token(model, seq_len)
    if recompute == RECOMPUTE_FULL:
        adapters = lora_adapter_params_per_token(model, setup) if setup is not None else 0.0
        return 2.0 * (matmul_params(model).layers + adapters) + attention_core_flops_per_token(model, seq_len)
    return 0.0


def hardware_flops_per_token(model: ModelSpec, seq_len: int, recompute: str,
                             setup: TrainingSetup | None = None) -> float:
    """HFU numerator per token: model FLOPs plus recomputation."""
    return model_flops_per_token(model, seq_len, setup) + recompute_flops_per_token(model, seq_len, recompute, setup)


# --- Other frameworks' conventions, for comparing with their reported numbers -------------------
def megatron_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """Megatron-LM's `num_floating_point_operations` per token (Narayanan et al. 2021 eq. 3,
    generalised to GQA, SwiGLU and MoE in megatron/training/training.py): 6× the GEMM weights
    incl. the logit layer, plus causal attention counted as FULL: 12·L·s·(heads·head_dim)."""
    mm = matmul_params(model)
    heads, d_qk, d_v = attention_dims(model)
    attention = model.num_layers * 6.0 * seq_len * heads * (d_qk + d_v)
    return 6.0 * mm.total + attention


def llm_foundry_flops_per_token(model: ModelSpec, seq_len: int) -> float:
    """llm-foundry's `flops_per_batch` per token: 6·(all parameters, embedding included) plus
    12·L·d_model·s (attention counted as full); llmfoundry/models/mpt/modeling_mpt.py."""
    return 6.0 * total_params(model) + 12.0 * model.num_layers * model.hidden_size * seq_len


def convert_mfu(mfu: float, model: ModelSpec, seq_len: int, from_convention: str,
                to_convention: str = "shardwise") -> float:
    """Re-express an MFU (or model TFLOP/s) reported under one FLOP convention in another.
    Conventions: 'shardwise', 'megatron', 'llm_foundry'. Same measured time, other numerator."""
    per_token = {
        "shardwise": lambda: model_flops_per_token(model, seq_len),
        "megatron": lambda: megatron_flops_per_token(model, seq_len),
        "llm_foundry": lambda: llm_foundry_flops_per_token(model, seq_len),
    }
    for name in (from_convention, to_convention):
        if name not in per_token:
            raise ValueError(f"unknown FLOP convention {name!r}; use one of {sorted(per_token)}")
    return mfu * per_token[to_convention]() / per_token[from_convention]()


__all__ = [
    "attention_core_flops_per_token", "attention_dims", "convert_mfu", "forward_flops_per_token",
    "hardware_flops_per_token", "llm_foundry_flops_per_token", "matmul_params", "megatron_flops_per_token",
    "lora_trainable_params", "model_flops_per_token", "recompute_flops_per_token",
]


def lora_trainable_params(model: ModelSpec, setup: TrainingSetup) -> int:
    """Adapter parameters (every expert of an MoE layer carries its own adapters)."""
    if setup.mode == "full":
        return 0
    r = setup.lora_rank
    attn, mlp = lora_targets_by_block(model, setup)
    total = model.num_layers * sum(r * sum(lora_target_dims(model, t, 0)) for t in attn)
    total += model.num_dense_layers * sum(r * sum(lora_target_dims(model, t, model.ffn_hidden_size)) for t in mlp)
    if model.moe is not None:
        moe = model.moe
        experts = moe.num_experts * sum(r * sum(lora_target_dims(model, t, moe.expert_ffn_hidden_size)) for t in mlp)
        shared = moe.num_shared_experts * sum(r * sum(lora_target_dims(model, t, moe.shared_ffn)) for t in mlp)
        total += model.num_moe_layers * (experts + shared)
    return int(total)
