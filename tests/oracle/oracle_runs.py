"""Run the oracle models for real (forward, backward, AdamW step) on fake tensors and read PyTorch's
own memory trackers. Every run takes two optimizer steps of `grad_accum` micro-batches each, so the
optimizer states exist and gradients are being accumulated — the steady state the engine models.

Flavours, each laid out as the framework does (see engine/memory/layouts.py for the engine side):
- "deepspeed": bf16 parameters and gradients, the optimizer owns fp32 master weights and fused AdamW
  m, v (DeepSpeed's bf16 optimizers, unsharded); eager SwiGLU, eager fp32 cross-entropy.
- "megatron": bf16 parameters, a persistent fp32 main-grad buffer filled by a post-accumulate hook,
  fp32 master weights whose .grad is the main-grad buffer itself, fused SwiGLU (Megatron's
  bias_swiglu), Megatron's in-place vocab-parallel cross-entropy.
- "fsdp": FSDP2 `fully_shard` as torchtitan 0.2.2 applies it (embedding, each block, [norm, output]
  without resharding after forward, root), MixedPrecisionPolicy(bf16, fp32), fused AdamW on the local
  shards, optionally torchtitan's TP plan with sequence parallelism and loss_parallel; under a fake
  process group of `world_size` ranks, measured with FSDPMemTracker.
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager, nullcontext
from dataclasses import replace

import torch
import torch.distributed as dist
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.distributed._tools.mem_tracker import MemTracker

from oracle_models import (OracleConfig, Transformer, cross_entropy_loss, megatron_cross_entropy_loss,
                           use_fused_wgrad_linears)


class MasterWeightAdamW(torch.optim.Optimizer):
    """bf16 parameters; the optimizer owns fp32 master weights and fused AdamW m, v.

    grad_source "copy": the step upcasts each bf16 .grad into an fp32 .grad of the master (DeepSpeed);
    "main_grad": the master's .grad is the parameter's fp32 main_grad buffer (Megatron).
    """

    def __init__(self, params, grad_source: str = "copy"):
        super().__init__(params, {"lr": 1e-4})
        self.grad_source = grad_source
        self.inner: torch.optim.Optimizer | None = None

    def _params(self):
        return [p for g in self.param_groups for p in g["params"]]

    @torch.no_grad()
    def step(self, closure=None):
        params = self._params()
        if self.inner is None:
            for p in params:
                self.state[p]["master"] = p.detach().float()
            self.inner = torch.optim.AdamW([self.state[p]["master"] for p in params], lr=1e-4, fused=True)
        for p in params:
            master = self.state[p]["master"]
            master.grad = p.main_grad if self.grad_source == "main_grad" else p.grad.float()
        self.inner.step()
        for p in params:
            master = self.state[p]["master"]
            master.grad = None
            p.copy_(master)
            if self.grad_source == "main_grad":
                p.main_grad.zero_()


def build(cfg: OracleConfig, seq_len: int, dtype: torch.dtype) -> Transformer:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        return Transformer(cfg, seq_len)
    finally:
        torch.set_default_dtype(previous)


def _bytes(snapshot: dict) -> dict[str, int]:
    (dev_snap,) = snapshot.values()
    return {getattr(k, "value", k): v for k, v in dev_snap.items()}


def _train(model, opt, loss_fn, tokens, labels, grad_accum: int, tracker) -> None:
    with tracker:
        for _ in range(2):
            for _ in range(grad_accum):
                loss = loss_fn(model(tokens), labels) / grad_accum
                loss.backward()
                tracker.reset_mod_stats()  # module stats are per forward; the global peak is kept
            opt.step()
            opt.zero_grad()


def measure_single_device(cfg: OracleConfig, seq_len: int, micro_batch: int, *, flavour: str = "deepspeed",
                          recompute: str = "none", grad_accum: int = 2) -> dict[str, int]:
    """MemTracker categories (bytes) at the peak, one GPU, no parallelism."""
    assert flavour in ("deepspeed", "megatron")
    cfg = replace(cfg, fused_swiglu=flavour == "megatron")
    with FakeTensorMode():
        model = build(cfg, seq_len, torch.bfloat16)
        model.checkpoint_blocks = recompute == "full"
        tokens = torch.randint(0, cfg.vocab, (micro_batch, seq_len))
        labels = torch.randint(0, cfg.vocab, (micro_batch, seq_len))
        tracker = MemTracker()
        if flavour == "megatron":
            opt, main_grads = megatron_main_grads_and_optimizer(model)
            tracker.track_external(model, opt, tokens, labels, *main_grads)  # main grads: "Other"
            loss_fn = megatron_cross_entropy_loss
        else:
            opt = MasterWeightAdamW(model.parameters())
            tracker.track_external(model, opt, tokens, labels)
            loss_fn = cross_entropy_loss
        _train(model, opt, loss_fn, tokens, labels, grad_accum, tracker)
        return _bytes(tracker.get_tracker_snapshot("peak"))


def megatron_main_grads_and_optimizer(model: torch.nn.Module):
    """Megatron's layout: fp32 main grads beside bf16 weights, filled by fused wgrad GEMMs (linears) or
    the DDP hook (the rest), and Adam over fp32 master weights reading them. Returns (optimizer, main grads)."""
    use_fused_wgrad_linears(model)
    main_grads = []
    for p in model.parameters():
        p.main_grad = torch.zeros_like(p, dtype=torch.float32)
        main_grads.append(p.main_grad)
        p.register_post_accumulate_grad_hook(_accumulate_into_main_grad)
    return MasterWeightAdamW(model.parameters(), grad_source="main_grad"), main_grads


def _accumulate_into_main_grad(p: torch.Tensor) -> None:
    """Megatron's DDP hook for weights without fused wgrad (embedding, norms)."""
    if p.grad is None:  # linears accumulate into main_grad themselves
        return
    p.main_grad.add_(p.grad)
    p.grad = None


class LocalShardAdamW(torch.optim.Optimizer):
    """Fused AdamW on each rank's local shards of FSDP2's DTensor parameters.

    What fused AdamW does on GPU under FSDP2: DTensor dispatches the update to the local shards. On
    fake CPU tensors DTensor's sharding propagation for the optimizer ops builds global-shape fake
    tensors that the tracker would count (an artefact of the tracker, not of training), so we step
    the local shards directly.
    """

    def __init__(self, params):
        super().__init__(params, {"lr": 1e-4})
        self.inner: torch.optim.Optimizer | None = None

    @torch.no_grad()
    def step(self, closure=None):
        params = [p for g in self.param_groups for p in g["params"]]
        if self.inner is None:  # local views share the sharded parameters' storage
            self.local = [p.to_local() for p in params]
            self.inner = torch.optim.AdamW(self.local, lr=1e-4, fused=True)
        local = self.local
        for p, shard in zip(params, local):
            shard.grad = p.grad.to_local()
        self.inner.step()
        for shard in local:
            shard.grad = None


def _torchtitan_op_sac(block: torch.nn.Module) -> torch.nn.Module:
    """torchtitan's per-op selective activation checkpointing (distributed/activation_checkpoint.py
    `_apply_op_sac` with llama3's `_op_sac_save_list`): save the outputs of SDPA and of every other
    mm, recompute the rest. On CPU, SDPA is `_scaled_dot_product_flash_attention_for_cpu`, which we add
    to the list in place of the CUDA flash kernel."""
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.utils.checkpoint import CheckpointPolicy, create_selective_checkpoint_contexts

    save = {torch.ops.aten.mm.default, torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default}

    def context():
        counts = defaultdict(int)

        def policy(ctx, func, *args, **kwargs):
            key = "recompute" if ctx.is_recompute else "forward"
            if func == torch.ops.aten.mm.default:
                counts[key] += 1
            keep = func in save and not (func == torch.ops.aten.mm.default and counts[key] % 2 == 0)
            return CheckpointPolicy.MUST_SAVE if keep else CheckpointPolicy.PREFER_RECOMPUTE

        return create_selective_checkpoint_contexts(policy)

    return checkpoint_wrapper(block, context_fn=context)


@contextmanager
def _label_unsharded_grads_on_arrival(tracker):
    """FSDPMemTracker files a block's unsharded gradients as "Unsharded Grad" only in the block's
    post-backward; while the block's backward runs they count as "Temp". We file each one as a
    gradient as soon as autograd produces it (a post-accumulate-grad hook on FSDP2's unsharded
    parameter), so gradients and activation temporaries are compared category by category. The peak
    itself is unchanged."""
    from torch.distributed._tools.fsdp2_mem_tracker import _FSDPRefType
    from torch.distributed.fsdp._fully_shard._fsdp_param import FSDPParam

    original = FSDPParam.init_unsharded_param

    def label(param):
        if param.grad is not None:
            tracker._update_and_maybe_create_winfos(param.grad, _FSDPRefType.UNSHARDED_GRAD)

    def init_unsharded_param(self):
        fresh = not hasattr(self, "_unsharded_param")
        original(self)
        if fresh:
            self._unsharded_param.register_post_accumulate_grad_hook(label)

    FSDPParam.init_unsharded_param = init_unsharded_param
    try:
        yield
    finally:
        FSDPParam.init_unsharded_param = original


def _torchtitan_tp_plan(model: Transformer, tp_mesh) -> None:
    """torchtitan's Llama TP plan (models/llama3/infra/parallelize.py `apply_tp`) with sequence
    parallelism and a vocabulary-sharded output for loss_parallel."""
    from torch.distributed.tensor import Replicate, Shard
    from torch.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                   SequenceParallel, parallelize_module)

    parallelize_module(model, tp_mesh, {
        "tok_embeddings": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(),
        "output": ColwiseParallel(input_layouts=Shard(1), output_layouts=Shard(-1), use_local_output=False),
    })
    for block in model.layers:
        parallelize_module(block, tp_mesh, {
            "attention_norm": SequenceParallel(),
            "attention": PrepareModuleInput(input_layouts=(Shard(1), None, None),
                                            desired_input_layouts=(Replicate(), None, None)),
            "attention.wq": ColwiseParallel(), "attention.wk": ColwiseParallel(), "attention.wv": ColwiseParallel(),
            "attention.wo": RowwiseParallel(output_layouts=Shard(1)),
            "ffn_norm": SequenceParallel(),
            "feed_forward": PrepareModuleInput(input_layouts=(Shard(1),), desired_input_layouts=(Replicate(),)),
            "feed_forward.w1": ColwiseParallel(), "feed_forward.w3": ColwiseParallel(),
            "feed_forward.w2": RowwiseParallel(output_layouts=Shard(1)),
        })


@contextmanager
def _no_tracking_of_shape_inference():
    """DTensor infers some ops' output shapes by running them on global-shape fake tensors
    (ShardingPropagator._propagate_tensor_meta_non_cached); under FakeTensorMode the tracker would count
    those (e.g. a full-vocabulary fp32 copy of the logits in loss_parallel). On a GPU they do not exist.
    Yields a predicate: "are we inside such shape inference?"."""
    from torch.distributed.tensor._sharding_prop import ShardingPropagator

    depth = [0]
    original = ShardingPropagator._propagate_tensor_meta_non_cached

    def counted(self, *args, **kwargs):
        depth[0] += 1
        try:
            return original(self, *args, **kwargs)
        finally:
            depth[0] -= 1

    ShardingPropagator._propagate_tensor_meta_non_cached = counted
    try:
        yield lambda: depth[0] > 0
    finally:
        ShardingPropagator._propagate_tensor_meta_non_cached = original


def measure_fsdp(cfg: OracleConfig, seq_len: int, micro_batch: int, world_size: int, *, tp: int = 1,
                 reshard_after_forward: bool = True, recompute: str = "none", grad_accum: int = 2) -> dict[str, int]:
    """FSDPMemTracker categories (bytes) at the peak of one rank: FSDP2 over world_size/tp ranks and,
    with tp > 1, torchtitan's tensor + sequence parallelism and loss_parallel; fake process group."""
    from torch.distributed._tools.fsdp2_mem_tracker import FSDPMemTracker
    from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
    from torch.distributed.tensor.parallel import loss_parallel
    from torch.testing._internal.distributed.fake_pg import FakeStore

    if dist.is_initialized():
        raise RuntimeError("a process group is already initialised in this process")
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=world_size)
    try:
        mesh = init_device_mesh("cpu", (world_size // tp, tp), mesh_dim_names=("dp", "tp"))
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
        fake = FakeTensorMode(allow_non_fake_inputs=tp > 1)
        # With TP, FSDP's 2-D sharding works out device-mesh coordinates with real tensors, so the model
        # is laid out on the meta device first (torchtitan's flow) and materialised as fake tensors.
        with (torch.device("meta") if tp > 1 else fake):
            model = build(cfg, seq_len, torch.float32)
        if tp > 1:
            _torchtitan_tp_plan(model, mesh["tp"])
        for i, block in enumerate(model.layers):
            if recompute == "full":
                model.layers[i] = checkpoint_wrapper(block)
            elif recompute == "selective":
                model.layers[i] = _torchtitan_op_sac(block)
        shard = {"mesh": mesh["dp"], "mp_policy": mp}
        fully_shard(model.tok_embeddings, reshard_after_forward=reshard_after_forward, **shard)
        for block in model.layers:
            fully_shard(block, reshard_after_forward=reshard_after_forward, **shard)
        fully_shard([model.norm, model.output], reshard_after_forward=False, **shard)
        fully_shard(model, **shard)
        with fake, _no_tracking_of_shape_inference() as in_shape_inference:
            if tp > 1:
                model.to_empty(device="cpu")
            opt = LocalShardAdamW(list(model.parameters()))
            tokens = torch.randint(0, cfg.vocab, (micro_batch, seq_len))
            labels = torch.randint(0, cfg.vocab, (micro_batch, seq_len))

            class Tracker(FSDPMemTracker):
                def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                    if in_shape_inference():
                        return func(*args, **(kwargs or {}))
                    return super().__torch_dispatch__(func, types, args, kwargs)

            tracker = Tracker(model, opt)
            tracker.track_inputs((tokens, labels))
            # torchtitan runs forward and backward inside loss_parallel when TP is on
            with _label_unsharded_grads_on_arrival(tracker), (loss_parallel() if tp > 1 else nullcontext()):
                _train(model, opt, cross_entropy_loss, tokens, labels, grad_accum, tracker)
            return _bytes(tracker.get_tracker_snapshot("peak"))
    finally:
        dist.destroy_process_group()
