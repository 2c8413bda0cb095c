"""Test-only DeepSeek-style model (MLA attention + routed/shared-expert MoE) run as Megatron-Core's
MoE recipe runs it, to check the engine's memory for `recompute=selective` on MoE/MLA models
(engine/recompute_modules.py) against PyTorch's MemTracker. Never imported by the engine.

Megatron-Core's fine-grained recompute (`--recompute-modules core_attn layernorm mla_up_proj
moe_act`) frees a module's output after its consumers have used it and rebuilds it in backward
(CheckpointWithoutOutput). Plain PyTorch has no such primitive, so each recomputed region is one
autograd unit that saves only what Megatron keeps:
- layernorm + the q/kv down-projections: `torch.utils.checkpoint` of norm → down-projections saves
  the residual input; its outputs, the MLA latents, are kept (the next region's inputs);
- mla_up_proj + core_attn: a checkpoint from the latents through the up-projections, the query/key
  assembly and SDPA to the attention output, which o_proj keeps;
- the MLP-side norm: one autograd Function computes the norm and everything that reads its output
  (router logits, the shared expert's fc1, the dispatch gather) and saves only its input;
- moe_act, probabilities in the activation (Megatron-Core >= 0.13): one Function for the weighted
  SwiGLU and fc2 of the experts saves fc1's output and the per-pair probabilities only.
Everything else is as in oracle_models (fused-wgrad linears into main_grad, Megatron's cross-entropy,
force-balanced routing). SDPA on CPU needs equal q/k and v head sizes: inside the recomputed region v
is padded to the q/k size and the output sliced back — it changes no kept tensor.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint

from oracle_models import RMSNorm, _RMSNormFn, _SwiGLUFn


@dataclass(frozen=True)
class MLAMoEConfig:
    hidden: int
    heads: int
    q_lora: int
    kv_lora: int
    nope: int
    rope: int
    v_head: int
    vocab: int
    layers: int
    num_experts: int
    top_k: int
    expert_ffn: int
    shared_ffn: int


def _wgrad(weight: torch.Tensor, grad_out: torch.Tensor, x: torch.Tensor) -> None:
    """Megatron's gradient_accumulation_fusion: the weight gradient GEMM adds into main_grad."""
    weight.main_grad.addmm_(grad_out.reshape(-1, grad_out.shape[-1]).t(), x.reshape(-1, x.shape[-1]))


class _NoSave:
    """A stand-in autograd ctx for running a Function's forward kernel inside another Function."""

    def save_for_backward(self, *tensors):
        pass


class _NormThenReaders(torch.autograd.Function):
    """RMSNorm whose output is read by the router, the shared expert's fc1 and the dispatch gather,
    and then freed (Megatron `layernorm` recompute): saves the norm's input only."""

    @staticmethod
    def forward(ctx, x, norm_w, router_w, shared_w13, token_ids, eps):
        n = _RMSNormFn.forward(_NoSave(), x, norm_w, eps)  # the norm kernel; its output is not kept
        logits = n @ router_w.t()
        shared = n @ shared_w13.t()
        dispatched = n.reshape(-1, n.shape[-1])[token_ids]
        ctx.save_for_backward(x, norm_w, token_ids)
        ctx.router_w, ctx.shared_w13, ctx.eps = router_w, shared_w13, eps
        return logits, shared, dispatched

    @staticmethod
    def backward(ctx, g_logits, g_shared, g_dispatched):
        x, norm_w, token_ids = ctx.saved_tensors
        with torch.enable_grad():
            xd = x.detach().requires_grad_(True)
            wd = norm_w.detach().requires_grad_(True)
            n = RMSNormRecompute.apply(xd, wd, ctx.eps)
        flat = n.detach().reshape(-1, n.shape[-1])
        _wgrad(ctx.router_w, g_logits, flat)
        _wgrad(ctx.shared_w13, g_shared, flat)
        g_n = (g_logits @ ctx.router_w).reshape(-1, n.shape[-1])
        g_n.addmm_(g_shared.reshape(-1, g_shared.shape[-1]), ctx.shared_w13)
        g_n.index_add_(0, token_ids, g_dispatched)
        del flat
        gx, gw = torch.autograd.grad(n, (xd, wd), g_n.view_as(n))
        return gx, gw, None, None, None, None


class RMSNormRecompute(torch.autograd.Function):
    """The norm rebuilt inside a backward: same kernel as oracle_models' RMSNorm."""

    @staticmethod
    def forward(ctx, x, w, eps):
        return _RMSNormFn.forward(ctx, x, w, eps)

    @staticmethod
    def backward(ctx, g):
        return _RMSNormFn.backward(ctx, g)


class _WeightedSwiGLUThenFc2(torch.autograd.Function):
    """Experts' activation with the routing probability applied inside it, then fc2 (Megatron-Core
    weighted_bias_swiglu + `moe_act` recompute): saves fc1's output and the probabilities; fc2's
    input is rebuilt in backward."""

    @staticmethod
    def forward(ctx, gate_up, probs, w2):
        gate, up = gate_up.chunk(2, dim=-1)
        act = F.silu(gate) * up * probs.unsqueeze(-1)
        out = torch.bmm(act, w2.transpose(1, 2))
        ctx.save_for_backward(gate_up, probs)
        ctx.w2 = w2
        return out

    @staticmethod
    def backward(ctx, g_out):
        gate_up, probs = ctx.saved_tensors
        w2 = ctx.w2
        gate, up = gate_up.chunk(2, dim=-1)
        act = F.silu(gate) * up  # rebuilt (moe_act)
        w2.main_grad.add_(torch.bmm(g_out.transpose(1, 2), act * probs.unsqueeze(-1)))
        g_act = torch.bmm(g_out, w2)
        g_probs = (g_act * act).sum(-1)
        g_act.mul_(probs.unsqueeze(-1))
        del act
        g_gate_up = _SwiGLUFn.backward(type("C", (), {"saved_tensors": (gate_up,)})(), g_act)
        return g_gate_up, g_probs, None


class _GroupedFc1(torch.autograd.Function):
    """Experts' fc1 as one grouped GEMM (TE GroupedLinear): saves its input, wgrad into main_grad."""

    @staticmethod
    def forward(ctx, x, w13):
        ctx.save_for_backward(x)
        ctx.w13 = w13
        return torch.bmm(x, w13.transpose(1, 2))

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        ctx.w13.main_grad.add_(torch.bmm(g.transpose(1, 2), x))
        return torch.bmm(g, ctx.w13), None


class MLA(nn.Module):
    def __init__(self, c: MLAMoEConfig):
        super().__init__()
        self.c = c
        self.norm = RMSNorm(c.hidden)
        self.q_down = nn.Linear(c.hidden, c.q_lora, bias=False)
        self.q_norm = RMSNorm(c.q_lora)
        self.q_up = nn.Linear(c.q_lora, c.heads * (c.nope + c.rope), bias=False)
        self.kv_down = nn.Linear(c.hidden, c.kv_lora + c.rope, bias=False)
        self.kv_norm = RMSNorm(c.kv_lora)
        self.kv_up = nn.Linear(c.kv_lora, c.heads * (c.nope + c.v_head), bias=False)
        self.o = nn.Linear(c.heads * c.v_head, c.hidden, bias=False)

    def _norm_down(self, x):
        n = self.norm(x)
        return self.q_down(n), self.kv_down(n)

    def _up_core(self, q_lat, kv_lat):
        c = self.c
        b, s, _ = q_lat.shape
        q = self.q_up(self.q_norm(q_lat)).view(b, s, c.heads, c.nope + c.rope).transpose(1, 2)
        kv = self.kv_up(self.kv_norm(kv_lat[..., :c.kv_lora])).view(b, s, c.heads, c.nope + c.v_head)
        k_nope, v = kv.split([c.nope, c.v_head], dim=-1)
        k_pe = kv_lat[..., c.kv_lora:].unsqueeze(2).expand(b, s, c.heads, c.rope)
        k = torch.cat([k_nope, k_pe], dim=-1).transpose(1, 2)
        v = F.pad(v, (0, c.nope + c.rope - c.v_head)).transpose(1, 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)[..., :c.v_head]
        return o.transpose(1, 2).reshape(b, s, c.heads * c.v_head)

    def forward(self, x):
        q_lat, kv_lat = torch.utils.checkpoint.checkpoint(self._norm_down, x, use_reentrant=False)
        o = torch.utils.checkpoint.checkpoint(self._up_core, q_lat, kv_lat, use_reentrant=False)
        return self.o(o)


class MoE(nn.Module):
    """Softmax router, top-k, force-balanced dispatch (as oracle_models.MoE), grouped experts, one
    shared expert; combined with scatter_add (its backward keeps only the index)."""

    def __init__(self, c: MLAMoEConfig):
        super().__init__()
        self.c = c
        self.norm = RMSNorm(c.hidden)
        self.router = nn.Parameter(torch.empty(c.num_experts, c.hidden))
        self.w13 = nn.Parameter(torch.empty(c.num_experts, 2 * c.expert_ffn, c.hidden))
        self.w2 = nn.Parameter(torch.empty(c.num_experts, c.hidden, c.expert_ffn))
        self.shared_w13 = nn.Parameter(torch.empty(2 * c.shared_ffn, c.hidden))
        self.shared_w2 = nn.Linear(c.shared_ffn, c.hidden, bias=False)

    def forward(self, x):
        b, s, h = x.shape
        e, k = self.c.num_experts, self.c.top_k
        with torch.no_grad():  # the routing decision: indices only (their cost is the router's)
            flat = x.reshape(b * s, h)
            order_src = torch.topk(flat[:, :e], k, dim=-1).indices
            order = torch.argsort(order_src.flatten())
            token_ids = order // k
        logits, shared, dispatched = _NormThenReaders.apply(x, self.norm.weight, self.router, self.shared_w13,
                                                            token_ids, self.norm.eps)
        probs = torch.softmax(logits.reshape(b * s, e), dim=-1)
        top_p, top_i = torch.topk(probs, k, dim=-1)
        pair_probs = top_p.flatten()[order].view(e, b * s * k // e)
        routed = _GroupedFc1.apply(dispatched.view(e, b * s * k // e, h), self.w13)
        out = _WeightedSwiGLUThenFc2.apply(routed, pair_probs, self.w2)
        combined = torch.zeros_like(flat).scatter_add(0, token_ids.unsqueeze(-1).expand(-1, h), out.view(-1, h))
        shared_out = self.shared_w2(_SwiGLUFn.apply(shared))
        return combined.view(b, s, h) + shared_out


class Block(nn.Module):
    def __init__(self, c: MLAMoEConfig):
        super().__init__()
        self.attention = MLA(c)
        self.moe = MoE(c)

    def forward(self, x):
        x = x + self.attention(x)
        return x + self.moe(x)


class MLAMoETransformer(nn.Module):
    def __init__(self, c: MLAMoEConfig):
        super().__init__()
        self.c = c
        self.tok_embeddings = nn.Embedding(c.vocab, c.hidden)
        self.layers = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.norm = RMSNorm(c.hidden)
        self.output = nn.Linear(c.hidden, c.vocab, bias=False)

    def forward(self, tokens):
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x)
        return self.output(self.norm(x))


def measure(c: MLAMoEConfig, seq_len: int, micro_batch: int, grad_accum: int = 2) -> dict[str, int]:
    """MemTracker categories (bytes) at the peak of two optimizer steps, Megatron flavour (as
    oracle_runs.measure_single_device: bf16 weights, fp32 main grads filled by fused wgrad GEMMs and
    hooks, fp32 masters + AdamW states, Megatron's cross-entropy)."""
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker

    from oracle_models import megatron_cross_entropy_loss
    from oracle_runs import _bytes, _train, megatron_main_grads_and_optimizer

    with FakeTensorMode():
        previous = torch.get_default_dtype()
        torch.set_default_dtype(torch.bfloat16)
        try:
            model = MLAMoETransformer(c)
        finally:
            torch.set_default_dtype(previous)
        tokens = torch.randint(0, c.vocab, (micro_batch, seq_len))
        labels = torch.randint(0, c.vocab, (micro_batch, seq_len))
        opt, main_grads = megatron_main_grads_and_optimizer(model)
        tracker = MemTracker()
        tracker.track_external(model, opt, tokens, labels, *main_grads)
        _train(model, opt, megatron_cross_entropy_loss, tokens, labels, grad_accum, tracker)
        return _bytes(tracker.get_tracker_snapshot("peak"))
