"""Test-only PyTorch models used as an independent memory oracle (never imported by the engine).

Plain eager PyTorch, Llama-style (RMSNorm, GQA attention through F.scaled_dot_product_attention with
`enable_gqa=True`, RoPE, SwiGLU) and an MoE variant (softmax router, top-k, SwiGLU experts).
They are built under FakeTensorMode so real widths cost no memory.

Deliberate choices make the eager CPU code behave like the GPU kernels the engine assumes:
- RMSNorm is a custom autograd Function that saves its input and the fp32 reciprocal RMS, as the
  fused CUDA kernels do (torch's own `_fused_rms_norm` on CUDA, Apex/TE `FusedRMSNorm`); the CPU
  decomposition of `nn.RMSNorm` would keep fp32 copies of the whole activation.
- For the megatron flavour, fused SwiGLU, fused weight-gradient GEMMs (into `main_grad`) and Megatron's
  cross-entropy are autograd Functions that save what Megatron's kernels save.
- MoE routing is force-balanced (every expert gets exactly tokens·top_k/experts rows), as in the
  Megatron-Bridge benchmarks; data-dependent shapes do not exist under fake tensors.
On CPU, `F.scaled_dot_product_attention` dispatches to `_scaled_dot_product_flash_attention_for_cpu`,
which, like FlashAttention on GPU, saves only q, k, v, the output and an fp32 log-sum-exp, and
handles GQA without expanding K/V.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


@dataclass(frozen=True)
class OracleConfig:
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    vocab: int
    layers: int
    tied: bool = False
    num_experts: int = 0  # 0: dense MLP
    top_k: int = 1
    expert_ffn: int = 0
    fused_swiglu: bool = False  # Megatron-style: keep fc1 output, recompute silu in backward


# Fused kernels keep no activation-sized temporaries; eager CPU code would. The norm works on row
# chunks so its fp32 temporaries are a fraction of one activation, like a fused kernel's.
BACKWARD_ROW_CHUNKS = 8


def _row_chunks(n_rows: int):
    step = -(-n_rows // BACKWARD_ROW_CHUNKS)
    return [(i, min(i + step, n_rows)) for i in range(0, n_rows, step)]


class _RMSNormFn(torch.autograd.Function):
    """Saves the input and the fp32 reciprocal RMS (as torch's CUDA `_fused_rms_norm`, Apex, TE)."""

    @staticmethod
    def forward(ctx, x, weight, eps):
        rows = x.reshape(-1, x.shape[-1])
        result = torch.empty_like(x)  # returned as is: FSDP2 warns about modules returning views
        out = result.view(-1, x.shape[-1])
        rstd = torch.empty(rows.shape[0], 1, dtype=torch.float32)
        for a, b in _row_chunks(rows.shape[0]):
            xf = rows[a:b].float()
            rstd[a:b] = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
            out[a:b] = (xf * rstd[a:b]).to(x.dtype) * weight
        ctx.save_for_backward(x, weight, rstd)
        return result

    @staticmethod
    def backward(ctx, grad_out):
        x, weight, rstd = ctx.saved_tensors
        rows, grads = x.reshape(-1, x.shape[-1]), grad_out.reshape(-1, x.shape[-1])
        grad_x = torch.empty_like(rows)
        grad_w = torch.zeros(x.shape[-1], dtype=torch.float32)
        for a, b in _row_chunks(rows.shape[0]):
            xhat = rows[a:b].float() * rstd[a:b]
            g = grads[a:b].float()
            grad_w += (g * xhat).sum(0)
            g = g * weight.float()
            grad_x[a:b] = (rstd[a:b] * (g - xhat * (g * xhat).mean(-1, keepdim=True))).to(x.dtype)
        return grad_x.view_as(x), grad_w.to(weight.dtype), None


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-5):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        from torch.distributed.tensor import DTensor

        if isinstance(x, DTensor):  # under sequence parallelism: normalise the local rows
            weight = self.weight.to_local() if isinstance(self.weight, DTensor) else self.weight
            out = _RMSNormFn.apply(x.to_local(), weight, self.eps)
            return DTensor.from_local(out, x.device_mesh, x.placements)
        return _RMSNormFn.apply(x, self.weight, self.eps)


class _SwiGLUFn(torch.autograd.Function):
    """Megatron's bias_swiglu fusion: saves the fc1 output [gate, up] only; the backward writes the
    gradient of [gate, up] and keeps no other full-size temporary (a fused kernel)."""

    @staticmethod
    def forward(ctx, gate_up):
        ctx.save_for_backward(gate_up)
        gate, up = gate_up.chunk(2, dim=-1)
        return F.silu(gate) * up

    @staticmethod
    def backward(ctx, grad_out):
        (gate_up,) = ctx.saved_tensors
        return _swiglu_grad(gate_up, grad_out)


def _swiglu_grad(gate_up, grad_out):
    """d up = g·silu(gate); d gate = g·up·σ(gate)·(1 + gate − silu(gate)), written straight into
    the output buffer with in-place ops (no other full-size temporary, as in a fused kernel)."""
    gate, up = gate_up.chunk(2, dim=-1)
    grad = torch.empty_like(gate_up)
    d_gate, d_up = grad.chunk(2, dim=-1)
    torch.sigmoid(gate, out=d_gate)
    torch.mul(gate, d_gate, out=d_up)  # silu(gate), as scratch
    d_up.neg_().add_(gate).add_(1)  # 1 + gate − silu
    d_gate.mul_(d_up).mul_(up).mul_(grad_out)
    torch.sigmoid(gate, out=d_up)
    d_up.mul_(gate).mul_(grad_out)
    return grad


class _FusedWgradLinearFn(torch.autograd.Function):
    """Megatron's linear with gradient_accumulation_fusion: the weight gradient GEMM accumulates
    straight into the fp32 `main_grad` buffer; no weight gradient tensor is produced."""

    @staticmethod
    def forward(ctx, x, weight):
        ctx.save_for_backward(x)
        ctx.weight = weight  # the parameter itself (it carries main_grad), not a saved copy
        return x @ weight.t()

    @staticmethod
    def backward(ctx, grad_out):
        (x,), weight = ctx.saved_tensors, ctx.weight
        # bf16 GEMM accumulating into the fp32 buffer (fake tensors accept the mixed dtypes, as the GPU
        # kernel does)
        weight.main_grad.addmm_(grad_out.reshape(-1, grad_out.shape[-1]).t(), x.reshape(-1, x.shape[-1]))
        return grad_out @ weight, None


def use_fused_wgrad_linears(model: nn.Module) -> None:
    """Route every nn.Linear through _FusedWgradLinearFn (its weight needs a `main_grad`)."""
    for module in model.modules():
        if isinstance(module, nn.Linear):
            module.forward = (lambda m: (lambda x: _FusedWgradLinearFn.apply(x, m.weight)))(module)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class Attention(nn.Module):
    def __init__(self, c: OracleConfig):
        super().__init__()
        self.c = c
        self.wq = nn.Linear(c.hidden, c.heads * c.head_dim, bias=False)
        self.wk = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=False)
        self.wv = nn.Linear(c.hidden, c.kv_heads * c.head_dim, bias=False)
        self.wo = nn.Linear(c.heads * c.head_dim, c.hidden, bias=False)

    def forward(self, x, cos, sin):
        b, s, _ = x.shape
        d = self.c.head_dim
        q = self.wq(x).view(b, s, -1, d).transpose(1, 2)
        k = self.wk(x).view(b, s, -1, d).transpose(1, 2)
        v = self.wv(x).view(b, s, -1, d).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        return self.wo(o.transpose(1, 2).reshape(b, s, -1))


class FeedForward(nn.Module):
    def __init__(self, hidden: int, ffn: int, fused: bool):
        super().__init__()
        self.fused = fused
        if fused:
            self.w13 = nn.Linear(hidden, 2 * ffn, bias=False)
        else:
            self.w1 = nn.Linear(hidden, ffn, bias=False)
            self.w3 = nn.Linear(hidden, ffn, bias=False)
        self.w2 = nn.Linear(ffn, hidden, bias=False)

    def forward(self, x):
        if self.fused:
            return self.w2(_SwiGLUFn.apply(self.w13(x)))
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class _WeightedSwiGLUFn(torch.autograd.Function):
    """Megatron-Core's weighted_bias_swiglu (TEGroupedMLP, experts.py): the routing probability is
    applied inside the activation, so the expert output needs no weighting later. Saves the fc1
    output and the per-row probabilities only; the backward rebuilds silu(gate)·up for the
    probabilities' gradient and frees it before writing the gradient of [gate, up]."""

    @staticmethod
    def forward(ctx, gate_up, probs):
        ctx.save_for_backward(gate_up, probs)
        gate, up = gate_up.chunk(2, dim=-1)
        return F.silu(gate) * up * probs.unsqueeze(-1)

    @staticmethod
    def backward(ctx, grad_out):
        gate_up, probs = ctx.saved_tensors
        gate, up = gate_up.chunk(2, dim=-1)
        act = F.silu(gate) * up
        g_probs = torch.einsum("nf,nf->n", grad_out, act)
        del act
        grad_out.mul_(probs.unsqueeze(-1))  # in place, as the fused kernel keeps no scaled copy
        return _swiglu_grad(gate_up, grad_out), g_probs


class MoE(nn.Module):
    """Top-k softmax router, experts as separate SwiGLU MLPs (Hugging Face Mixtral/Qwen-MoE style),
    force-balanced dispatch: the (token, expert) pairs sorted by expert split evenly. The megatron
    flavour applies the probability inside the experts' activation, as Megatron-Core does."""

    def __init__(self, c: OracleConfig):
        super().__init__()
        self.c = c
        self.router = nn.Linear(c.hidden, c.num_experts, bias=False)
        self.experts = nn.ModuleList(FeedForward(c.hidden, c.expert_ffn, c.fused_swiglu)
                                     for _ in range(c.num_experts))

    def forward(self, x):
        b, s, h = x.shape
        e, k = self.c.num_experts, self.c.top_k
        flat = x.reshape(b * s, h)
        probs = torch.softmax(self.router(flat), dim=-1)
        top_p, top_i = torch.topk(probs, k, dim=-1)
        order = torch.argsort(top_i.flatten())
        token_ids = order // k
        dispatched = flat[token_ids].view(e, b * s * k // e, h)  # balanced: T·k/E rows per expert
        pair_probs = top_p.flatten()[order]
        if self.c.fused_swiglu:  # Megatron-Core: the probability is applied inside the experts' activation
            rows = pair_probs.view(e, -1)
            weighted = torch.cat([ex.w2(_WeightedSwiGLUFn.apply(ex.w13(dispatched[i]), rows[i]))
                                  for i, ex in enumerate(self.experts)])
        else:  # Hugging Face / torchtitan: the expert output is weighted (and so kept)
            out = torch.cat([expert(dispatched[i]) for i, expert in enumerate(self.experts)])
            weighted = out * pair_probs.unsqueeze(-1)
        # scatter_add, as torchtitan's MoE (its backward keeps only the index; index_add's keeps `source`)
        combined = torch.zeros_like(flat).scatter_add(0, token_ids.unsqueeze(-1).expand(-1, h), weighted)
        return combined.view(b, s, h)


class Block(nn.Module):
    def __init__(self, c: OracleConfig):
        super().__init__()
        self.attention_norm = RMSNorm(c.hidden)
        self.attention = Attention(c)
        self.ffn_norm = RMSNorm(c.hidden)
        self.feed_forward = MoE(c) if c.num_experts else FeedForward(c.hidden, c.ffn, c.fused_swiglu)

    def forward(self, x, cos, sin):
        x = x + self.attention(self.attention_norm(x), cos, sin)
        return x + self.feed_forward(self.ffn_norm(x))


class Transformer(nn.Module):
    def __init__(self, c: OracleConfig, seq_len: int):
        super().__init__()
        self.c = c
        self.checkpoint_blocks = False  # full activation checkpointing, one block at a time
        self.tok_embeddings = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden)
        self.output = nn.Linear(c.hidden, c.vocab, bias=False)
        if c.tied:
            self.output.weight = self.tok_embeddings.weight
        inv = 1.0 / (10000 ** (torch.arange(0, c.head_dim, 2).float() / c.head_dim))
        angles = torch.outer(torch.arange(seq_len).float(), inv)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        for layer in self.layers:
            if self.checkpoint_blocks:
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, use_reentrant=False)
            else:
                x = layer(x, cos, sin)
        return self.output(self.norm(x))


def cross_entropy_loss(logits, labels):
    """torchtitan's loss (components/loss.py) and HF's ForCausalLMLoss: upcast to fp32, then CE."""
    return F.cross_entropy(logits.flatten(0, 1).float(), labels.flatten(0, 1))


class _MegatronCrossEntropyFn(torch.autograd.Function):
    """Megatron's vocab-parallel cross-entropy at TP = 1 (tensor_parallel/cross_entropy.py): an fp32
    copy of the logits, shifted and exp'ed in place, saved as the softmax; the backward writes the
    gradient into that buffer."""

    @staticmethod
    def forward(ctx, logits, labels):
        x = logits.float()
        x.sub_(x.max(dim=-1, keepdim=True).values)
        x.exp_()
        sum_exp = x.sum(dim=-1)
        target = x.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        loss = torch.log(sum_exp) - torch.log(target)
        x.div_(sum_exp.unsqueeze(-1))
        ctx.save_for_backward(x, labels)
        return loss.mean()

    @staticmethod
    def backward(ctx, grad_out):
        softmax, labels = ctx.saved_tensors
        grad = softmax
        grad.scatter_add_(-1, labels.unsqueeze(-1), -torch.ones_like(labels, dtype=grad.dtype).unsqueeze(-1))
        grad.mul_(grad_out / labels.numel())
        return grad, None


def megatron_cross_entropy_loss(logits, labels):
    return _MegatronCrossEntropyFn.apply(logits.flatten(0, 1), labels.flatten(0, 1))
