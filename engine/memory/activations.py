"""Activations a transformer layer keeps for its backward pass, tensor by tensor.

Reference: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
sec. 4: a GPT layer keeps sbh·(34 + 5·a·s/h) bytes (no parallelism; 2-byte activations, 1-byte
dropout masks). We rebuild that sum from the tensors each op saves, so the same code covers GQA,
SwiGLU, MLA, QK-norm, MoE and flash attention. Departures from the paper, all deliberate:
- no dropout by default (modern LLM pre-training uses none); `dropout=True` restores the paper's
  masks so its 34 is reproduced exactly;
- flash attention by default (Dao et al. 2022): instead of the a·s² scores it keeps the output and an
  fp32 log-sum-exp per head and token; `attention="materialised"` keeps the softmax output (2 bytes
  per score; + mask and dropout output with dropout, the paper's 5as/h);
- norm statistics (fp32 rstd, and mean for LayerNorm) are counted — a few bytes per token;
- SwiGLU in eager PyTorch (torchtitan, HF models under DeepSpeed) keeps gate, up, silu(gate) and
  their product: 4 × ffn; Megatron's fused `bias_swiglu` keeps the fc1 output [gate, up] and the
  fc2 input: 3 × ffn.

Units: bytes per token of the rank's sequence shard (micro_batch · seq_len / CP tokens). Tensors that
TP replicates (norm inputs and outputs, residuals) are divided by TP only under sequence
parallelism (Korthikanti sec. 4.2.2); head- and ffn-split tensors always by TP. Megatron keeps the
sequence-sharded input of a column-parallel linear and all-gathers it again in backward; torchtitan's
SequenceParallel (the fsdp flavour) all-gathers the norm output before the linears, which then keep
the gathered copy — so there the linear inputs are not divided by TP.

Recompute modes:
- none: everything above;
- selective: Korthikanti's "core attention" recompute (Megatron's default `recompute_modules=
  [core_attn]`): drops the scores (materialised) or the log-sum-exp (flash — there is little to
  save); for the fsdp flavour it is torchtitan's per-op SAC instead (`_op_sac_save_list`: outputs of
  every other matmul, of SDPA, and the block input);
- full: only each layer's input is kept (Megatron `--recompute-granularity full
  --recompute-method uniform --recompute-num-layers 1`, torchtitan `mode = "full"`), and one layer is
  rebuilt during its backward (see `backward_working_set`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..assumptions.memory import (BF16_BYTES, DROPOUT_MASK_BYTES, FLASH_LSE_BYTES, FP8_BYTES,
                                  LAYERNORM_STATS_BYTES, MOE_ROUTING_BYTES_PER_PAIR, RMSNORM_STATS_BYTES)
from ..model_spec import ModelSpec
from ..plans import RECOMPUTE_FULL, RECOMPUTE_SELECTIVE, PlanGrid
from ..training import TrainingSetup
from ..assumptions.moe import MOE_ROUTING_IMBALANCE_HEADROOM
from ..recompute_modules import selective_modules

ACT = BF16_BYTES  # activations are kept in bf16 (also under FP8 training, except where noted)


@dataclass(frozen=True)
class ActivationOptions:
    """Switches that are not part of a Strategy."""

    attention: str = "flash"  # or "materialised"
    dropout: bool = False


def tokens_per_microbatch(setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    """Tokens of one micro-batch on this rank before sequence parallelism: b·s/CP."""
    return grid.micro_batch * setup.seq_len / grid.cp


def sp_divisor(grid: PlanGrid) -> np.ndarray:
    return np.where(grid.sp, grid.tp, 1).astype(float)


def linear_input_divisor(setup: TrainingSetup, grid: PlanGrid) -> np.ndarray:
    """How TP divides the saved input of a column-parallel linear (see module docstring)."""
    if setup.framework == "fsdp":
        return np.ones(len(grid))
    return sp_divisor(grid)


def _norm_stats(model: ModelSpec) -> int:
    return LAYERNORM_STATS_BYTES if model.norm == "layernorm" else RMSNORM_STATS_BYTES


def _gated_mlp_widths(setup: TrainingSetup) -> int:
    """ffn-wide tensors a gated MLP keeps (see module docstring)."""
    return 3 if setup.framework == "megatron" else 4


def mlp_saved_widths(model: ModelSpec, setup: TrainingSetup) -> int:
    return _gated_mlp_widths(setup) if model.gated_mlp else 2  # GELU: fc1 output and fc2 input


@dataclass(frozen=True)
class AttentionWidths:
    """Elements per token (not bytes) of one attention block's tensors."""

    q: int
    k: int
    v: int
    out: int
    heads: int
    latent: int  # MLA: compressed q/kv tensors kept for backward (TP-replicated)


def attention_widths(model: ModelSpec) -> AttentionWidths:
    heads = model.num_attention_heads
    if model.mla is None:
        d = model.head_size
        return AttentionWidths(q=heads * d, k=model.kv_heads * d, v=model.kv_heads * d, out=heads * d,
                               heads=heads, latent=0)
    mla = model.mla
    qk_head = mla.qk_nope_head_dim + mla.qk_rope_head_dim
    # q: down-projection output + its norm output; kv: down output (latent + shared rope key) + norm output.
    q_latent = 2 * mla.q_lora_rank if mla.q_lora_rank else 0
    kv_latent = (mla.kv_lora_rank + mla.qk_rope_head_dim) + mla.kv_lora_rank
    return AttentionWidths(q=heads * qk_head, k=heads * qk_head, v=heads * mla.v_head_dim,
                           out=heads * mla.v_head_dim, heads=heads, latent=q_latent + kv_latent)


def megatron_modules(model: ModelSpec, setup: TrainingSetup) -> frozenset[str]:
    """The Megatron-Core --recompute-modules `recompute=selective` means here (recompute_modules.py);
    empty for other frameworks, whose selective schemes are modelled separately."""
    return frozenset(selective_modules(model, setup)) if setup.framework == "megatron" else frozenset()


def recipe_latent_width(model: ModelSpec) -> int:
    """MLA latents kept under `mla_up_proj` recompute: the down-projection outputs (q latent, kv
    latent + shared rope key); their norm outputs are rebuilt (Transformer Engine fuses q/kv_layernorm
    into the up-projections, which the checkpoint rebuilds: multi_latent_attention.py)."""
    if model.mla is None:
        return 0
    mla = model.mla
    return (mla.q_lora_rank or 0) + mla.kv_lora_rank + mla.qk_rope_head_dim


def _norms_used(model: ModelSpec) -> int:
    """Norms whose input (and, before a linear, output) a layer keeps: 2, 1 for parallel blocks, 4 for Gemma."""
    return 1 if model.parallel_block else max(model.norms_per_layer, 1)


def _te_fp8(setup: TrainingSetup) -> bool:
    return setup.precision == "fp8" and setup.framework == "megatron"


def recomputed_norm_output_bytes(setup: TrainingSetup) -> int:
    """Bytes per element a linear still keeps of a norm output that `layernorm` recompute drops:
    under FP8, Transformer Engine's own FP8 cast of its input stays saved; in BF16 the linear saves
    the norm's output itself, which the recompute frees (Megatron CheckpointWithoutOutput)."""
    return FP8_BYTES if _te_fp8(setup) else 0


def attention_bytes_per_token(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid, seq_kv: np.ndarray,
                              options: ActivationOptions, selective: np.ndarray) -> np.ndarray:
    """Attention sub-block, with selective recompute or without. Under Megatron, selective is a list
    of modules (recompute_modules.py): `core_attn` drops the log-sum-exp (or the scores), `layernorm`
    the input norm's output, `mla_up_proj` q, k, v and the latents' norm outputs (rebuilt from the
    kept latents). Other frameworks' selective drops the core attention's tensors."""
    tp, sp = grid.tp.astype(float), sp_divisor(grid)
    w = attention_widths(model)
    selective = np.asarray(selective)
    modules = megatron_modules(model, setup)
    megatron = setup.framework == "megatron"
    qkv_input = model.hidden_size  # the norm output, shared by the q/k/v projections
    input_bytes = ACT
    if _te_fp8(setup):
        input_bytes = FP8_BYTES  # TE keeps the FP8 cast of linear inputs
    norm_rebuilt = selective & ("layernorm" in modules)
    up_rebuilt = selective & ("mla_up_proj" in modules) & (model.mla is not None)
    core_rebuilt = selective & (("core_attn" in modules) or not megatron)
    input_bytes = np.where(norm_rebuilt, recomputed_norm_output_bytes(setup), input_bytes)
    latent = np.where(up_rebuilt, recipe_latent_width(model), w.latent)
    rep = input_bytes * qkv_input / linear_input_divisor(setup, grid) + ACT * latent / sp
    up_projected = w.q + w.k + w.v if model.mla is not None else 0
    sharded = ACT * (w.q + w.k + w.v + w.out) - np.where(up_rebuilt, ACT * up_projected, 0)
    if model.qk_norm:
        sharded += ACT * (w.q + w.k)  # pre-norm q and k
    if options.attention == "flash":
        core = np.where(core_rebuilt, 0.0, FLASH_LSE_BYTES * w.heads)
    else:
        per_score = ACT + ((DROPOUT_MASK_BYTES + ACT) if options.dropout else 0)  # softmax (+ mask, dropout out)
        core = np.where(core_rebuilt, 0.0, per_score * w.heads * seq_kv)
    return rep + (sharded + core) / tp


def norms_and_residuals_bytes_per_token(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid,
                                        options: ActivationOptions, recipe: np.ndarray | bool = False) -> np.ndarray:
    """Norm inputs (the residual stream), the MLP's input and dropout masks: all TP-replicated.
    `recipe`: the norm outputs are recomputed (Megatron `layernorm` module)."""
    h, norms = model.hidden_size, _norms_used(model)
    mlp_input = 0 if model.parallel_block else h  # parallel blocks reuse the attention's norm output
    mlp_input_bytes = np.where(recipe, recomputed_norm_output_bytes(setup), FP8_BYTES if _te_fp8(setup) else ACT)
    masks = 2 * DROPOUT_MASK_BYTES * h if options.dropout else 0  # after attention and after the MLP
    residual = (ACT * norms * h + norms * _norm_stats(model) + masks) / sp_divisor(grid)
    return residual + mlp_input_bytes * mlp_input / linear_input_divisor(setup, grid)


def mlp_bytes_per_token(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid, ffn: int) -> np.ndarray:
    saved = ACT * mlp_saved_widths(model, setup) * ffn
    if setup.precision == "fp8" and setup.framework == "megatron":
        saved -= (ACT - FP8_BYTES) * ffn  # fc2 input kept in FP8
    return saved / grid.tp


def moe_bytes_per_token(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid,
                        recipe: np.ndarray | bool = False) -> np.ndarray:
    """Router, top-k dispatched tokens and expert intermediates, per token of the rank's shard.
    `recipe`: Megatron's `moe_act` recompute is on.

    With balanced routing each rank receives as many (token, expert) pairs as it sends: tokens·top_k
    (all-to-all over EP), times MOE_ROUTING_IMBALANCE_HEADROOM on the busiest rank. Expert TP shares
    its tokens across the ETP group, each rank computing ffn/ETP of every pair. Per pair: the
    dispatched input (fc1 input; Transformer Engine keeps its FP8 cast when training in FP8) and the
    ffn-wide tensors of the expert MLP. Eager MoEs (torchtitan, Hugging Face) weight the expert output
    with the routing probability, which keeps that output (h per pair). Megatron-Core applies the
    probability inside the experts' activation whatever the recompute (megatron/core/transformer/moe/
    experts.py, TEGroupedMLP.forward: `bias_act_func(fc1_output, bias, permuted_probs)` in every
    branch, since 0.13), so it keeps no expert output: fc1's output (the fused weighted SwiGLU's
    input) and fc2's input, which grouped fc2 keeps as its FP8 cast in FP8 training like a dense fc2;
    `moe_act` recompute (`recipe`, recompute_modules.py) drops that fc2 input.
    """
    moe = model.moe
    assert moe is not None
    h, k, sp = model.hidden_size, moe.top_k, sp_divisor(grid)
    router = ACT * moe.num_experts + k * MOE_ROUTING_BYTES_PER_PAIR
    input_bytes = FP8_BYTES if _te_fp8(setup) else ACT
    ffn = moe.expert_ffn_hidden_size
    if setup.framework == "megatron":  # probabilities applied inside the activation: no expert output kept
        fc1_out = 2 if model.gated_mlp else 1
        per_pair = input_bytes * h * grid.etp + ACT * fc1_out * ffn + np.where(recipe, 0.0, input_bytes * ffn)
    else:  # eager: the expert output is kept for the probability weighting
        per_pair = (input_bytes + ACT) * h * grid.etp + ACT * mlp_saved_widths(model, setup) * ffn
    experts = k * MOE_ROUTING_IMBALANCE_HEADROOM * per_pair
    shared = mlp_bytes_per_token(model, setup, grid, moe.num_shared_experts * moe.shared_ffn) if moe.num_shared_experts else 0.0
    return (router + experts) / sp + shared


def recipe_rebuilt_bytes_per_token(model: ModelSpec, grid: PlanGrid,
                                   modules: frozenset[str] = frozenset({"mla_up_proj", "moe_act"})
                                   ) -> tuple[np.ndarray, np.ndarray]:
    """(attention, MoE) tensors Megatron's fine-grained recompute rebuilds inside one layer's backward:
    the MLA up-projected q, k, v (mla_up_proj; 0 without MLA or the module) and the experts' activation
    output, top_k·ffn per token (moe_act; 0 without MoE or the module)."""
    w = attention_widths(model)
    attention = (np.full(len(grid), 0.0) if model.mla is None or "mla_up_proj" not in modules
                 else ACT * (w.q + w.k + w.v) / grid.tp)
    moe = 0.0 if model.moe is None or "moe_act" not in modules else (
        ACT * model.moe.top_k * MOE_ROUTING_IMBALANCE_HEADROOM * model.moe.expert_ffn_hidden_size / sp_divisor(grid))
    return attention, np.broadcast_to(moe, (len(grid),)).astype(float)


def torchtitan_sac_bytes_per_token(model: ModelSpec, grid: PlanGrid) -> np.ndarray:
    """torchtitan per-op SAC on a Llama block: block input, outputs of mm #1, #3, #5, #7 (wq, wv, w1,
    w2 — "every second mm" is recomputed) and of SDPA (output + log-sum-exp)."""
    tp, sp = grid.tp.astype(float), sp_divisor(grid)
    w = attention_widths(model)
    h = model.hidden_size
    block_input = ACT * h / sp
    # w2's mm output is the full-width partial sum before TP's reduce-scatter; the reduce-scatter
    # output (also on the save list) is added when TP shards the sequence.
    w2_out = ACT * h + np.where(grid.sp, ACT * h / tp, 0.0)
    kept = ACT * (w.q + w.v + w.out + model.ffn_hidden_size) / tp + FLASH_LSE_BYTES * w.heads / tp
    return block_input + kept + w2_out


def layer_input_bytes_per_token(model: ModelSpec, grid: PlanGrid) -> np.ndarray:
    """Full recompute keeps only the layer's input (sequence-sharded under SP)."""
    return ACT * model.hidden_size / sp_divisor(grid)


def _uses_torchtitan_sac(model: ModelSpec, setup: TrainingSetup) -> bool:
    return setup.framework == "fsdp" and model.mla is None and model.gated_mlp


@dataclass(frozen=True)
class LayerActivations:
    """Bytes per token of the rank's sequence shard, for one dense and one MoE layer."""

    dense_saved: np.ndarray  # kept until the layer's backward, under the plan's recompute mode
    moe_saved: np.ndarray
    dense_all: np.ndarray  # what the layer would keep without recompute (rebuilt when recomputed)
    moe_all: np.ndarray
    backward_temporaries: np.ndarray  # activation gradients inside one layer's backward
    tokens: np.ndarray  # tokens of one micro-batch on the rank (b·s/CP)


def layer_activations(model: ModelSpec, setup: TrainingSetup, grid: PlanGrid,
                      options: ActivationOptions) -> LayerActivations:
    # keys a query sees: the whole sequence (also under CP), or its document when packed documents are
    # attended per document (varlen kernels compute each document's block only)
    seq_kv = np.full(len(grid), float(setup.attention_length))
    no = np.zeros(len(grid), dtype=bool)
    selective = grid.recompute == RECOMPUTE_SELECTIVE
    full = grid.recompute == RECOMPUTE_FULL
    modules = megatron_modules(model, setup)
    # Megatron's fine-grained modules beyond core_attn: the layer rebuilds pieces in its backward
    recipe = selective & bool(modules & {"layernorm", "mla_up_proj", "moe_act"})
    base = norms_and_residuals_bytes_per_token(model, setup, grid, options)
    base_kept = norms_and_residuals_bytes_per_token(model, setup, grid, options,
                                                    selective & ("layernorm" in modules))
    attn_all = attention_bytes_per_token(model, setup, grid, seq_kv, options, no)
    attn_kept = attention_bytes_per_token(model, setup, grid, seq_kv, options, selective)
    dense_mlp = mlp_bytes_per_token(model, setup, grid, model.ffn_hidden_size)
    moe = moe_bytes_per_token(model, setup, grid) if model.moe else np.zeros(len(grid))
    moe_kept_mlp = (moe_bytes_per_token(model, setup, grid, selective & ("moe_act" in modules))
                    if model.moe else np.zeros(len(grid)))

    dense_kept = base_kept + attn_kept + dense_mlp
    moe_kept = base_kept + attn_kept + moe_kept_mlp
    # Megatron's fine-grained recompute rebuilds its pieces one at a time, each freed after use: in
    # the attention backward q, k, v (mla_up_proj), in the MoE backward the experts' activation
    # (moe_act). The layer's "all" under the recipe is what it keeps plus the larger of the two.
    rebuilt = recipe_rebuilt_bytes_per_token(model, grid, modules)
    dense_all = np.where(recipe, dense_kept + rebuilt[0], base + attn_all + dense_mlp)
    moe_all = np.where(recipe, moe_kept + np.maximum(rebuilt[0], rebuilt[1]), base + attn_all + moe)
    if _uses_torchtitan_sac(model, setup):
        dense_kept = np.where(selective, torchtitan_sac_bytes_per_token(model, grid), dense_kept)
    layer_input = layer_input_bytes_per_token(model, grid)
    return LayerActivations(
        dense_saved=np.where(full, layer_input, dense_kept),
        moe_saved=np.where(full, layer_input, moe_kept),
        dense_all=dense_all, moe_all=moe_all,
        backward_temporaries=backward_gradient_temporaries_per_token(model, grid),
        tokens=tokens_per_microbatch(setup, grid),
    )


def backward_gradient_temporaries_per_token(model: ModelSpec, grid: PlanGrid) -> np.ndarray:
    """Activation gradients alive at once inside one layer's backward, beyond its saved tensors.

    The largest moment is in the MLP: fc2's backward has produced the gradient of its input and
    released that input; the gated product's backward then writes the gradients of silu(gate) and of
    up — two more ffn-wide tensors on top of what was freed: + 2·ffn (a GELU MLP: + ffn). In attention,
    flash backward holds the output gradient and writes dq, dk, dv. MoE: the same per (token, expert)
    pair, plus the gradient of the expert outputs (h per pair). Plus the residual-stream gradient
    coming in (h, TP-replicated).
    """
    tp, sp = grid.tp.astype(float), sp_divisor(grid)
    w = attention_widths(model)
    ffn_widths = 2 if model.gated_mlp else 1
    mlp = ACT * ffn_widths * model.ffn_hidden_size / tp
    if model.moe is not None:
        m = model.moe
        per_token = m.top_k * (ffn_widths * m.expert_ffn_hidden_size + model.hidden_size * grid.etp) / sp
        mlp = np.maximum(mlp, ACT * per_token)
    attention = ACT * (2 * w.q + w.k + w.v) / tp
    return np.maximum(mlp, attention) + ACT * model.hidden_size / sp
