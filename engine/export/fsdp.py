"""A short, runnable PyTorch FSDP2 (`torch.distributed.fsdp.fully_shard`) training script.

For plans that are data-parallel only: ZeRO-3 = fully_shard(reshard_after_forward=True),
ZeRO-2 = reshard_after_forward=False, ZeRO-0 = DistributedDataParallel, HSDP = a 2-D
(replicate, shard) device mesh. TP/PP/CP/EP and FP8 are refused here (torchtitan composes them
with FSDP2: export --format torchtitan). The script runs as written under torchrun, on GPUs
with NCCL or on CPUs with gloo; tests/engine/export/test_fsdp.py runs it on two CPU processes.
"""

from __future__ import annotations

from . import defaults
from .common import SELECTIVE_AS_FLASH_ATTENTION, result
from .plan import ExportPlan
from ..setting_text import settings_text
from .result import ExportRefused, ExportResult

FORMAT = "fsdp"
FAMILY = "fsdp"

SCRIPT = '''\
import itertools
import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
from torch.distributed.algorithms._checkpoint.checkpoint_wrapper import checkpoint_wrapper
from torch.nn.parallel import DistributedDataParallel

MODEL = {model_id!r}  # a Hugging Face causal LM (any model whose blocks are model.model.layers)
DATA_PARALLEL = {dp}  # ranks = GPUs: this plan is data-parallel only
HSDP_REPLICAS = {replicas}  # replicate across this many groups, shard within each
ZERO_STAGE = {zero}  # 3: reshard params after forward; 2: keep them; 0: DDP
MICRO_BATCH = {micro_batch}  # sequences per rank per forward/backward
GRAD_ACCUM = {grad_accum}  # micro-batches per optimizer step
SEQ_LEN = {seq_len}
GLOBAL_BATCH = MICRO_BATCH * GRAD_ACCUM * DATA_PARALLEL  # = {global_batch} sequences per step
RECOMPUTE = {recompute!r}  # "full": checkpoint every block; "none"/"selective": flash/SDPA attention only
STEPS = {steps}  # placeholder
LR = {lr}  # placeholder


def build_model():
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(MODEL)
    config._attn_implementation = "sdpa"
    return AutoModelForCausalLM.from_config(config)


def blocks(model):
    return model.model.layers


def apply_parallelism(model, mesh):
    if RECOMPUTE == "full":
        for i, block in enumerate(blocks(model)):
            blocks(model)[i] = checkpoint_wrapper(block)
    if ZERO_STAGE == 0:
        return DistributedDataParallel(model)
    policy = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    reshard = ZERO_STAGE == 3
    for block in blocks(model):
        fully_shard(block, mesh=mesh, mp_policy=policy, reshard_after_forward=reshard)
    fully_shard(model, mesh=mesh, mp_policy=policy, reshard_after_forward=reshard)
    return model


def batches(vocab_size, device):
    # replace with your data: each rank reads its own MICRO_BATCH x SEQ_LEN token ids
    while True:
        tokens = torch.randint(vocab_size, (MICRO_BATCH, SEQ_LEN), device=device)
        yield tokens, tokens


def main(model_fn=build_model, steps=STEPS):
    cuda = torch.cuda.is_available()
    dist.init_process_group("nccl" if cuda else "gloo")
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"])) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    assert dist.get_world_size() == DATA_PARALLEL, f"launch {{DATA_PARALLEL}} ranks, not {{dist.get_world_size()}}"
    if HSDP_REPLICAS > 1:
        mesh = init_device_mesh(device.type, (HSDP_REPLICAS, DATA_PARALLEL // HSDP_REPLICAS),
                                mesh_dim_names=("replicate", "shard"))
    else:
        mesh = init_device_mesh(device.type, (DATA_PARALLEL,), mesh_dim_names=("shard",))
    model = apply_parallelism(model_fn().to(device), mesh)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, betas={betas}, weight_decay={weight_decay})
    data = batches(model.config.vocab_size if hasattr(model, "config") else model.module.config.vocab_size, device)
    for step in range(steps):
        for input_ids, labels in itertools.islice(data, GRAD_ACCUM):
            with torch.autocast(device.type, torch.bfloat16, enabled=ZERO_STAGE == 0):
                loss = model(input_ids=input_ids, labels=labels).loss / GRAD_ACCUM
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), {clip})
        optimizer.step()
        optimizer.zero_grad()
        if dist.get_rank() == 0:
            print(f"step {{step}} loss {{loss.item() * GRAD_ACCUM:.4f}}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
'''


def hf_model_id(plan: ExportPlan) -> str:
    """The Hugging Face id, when the catalog's source names one; else a placeholder."""
    for part in plan.model.source.split():
        if part.startswith("https://huggingface.co/"):
            path = part.removeprefix("https://huggingface.co/").split("/")
            if len(path) >= 2:
                return "/".join(path[:2]).rstrip(";,")
    return f"<hugging-face-id-of-{plan.model.name}>"


def refuse_unexpressible(plan: ExportPlan) -> None:
    s = plan.strategy
    used = [f"{n}={v}" for n, v in (("TP", s.tp), ("PP", s.pp), ("CP", s.cp), ("EP", s.ep)) if v > 1]
    if used:
        raise ExportRefused(FORMAT, f"the FSDP2 snippet is data-parallel only and this plan uses {', '.join(used)}",
                            settings_text("export {format} torchtitan, which composes FSDP2 with TP/PP/CP/EP", "format"))
    if plan.setup.precision == "fp8":
        raise ExportRefused(FORMAT, "the FSDP2 snippet trains in bf16; FP8 needs torchao float8 conversion",
                            settings_text("export {format} torchtitan (quantize.linear.float8)", "format"))


def script(plan: ExportPlan) -> str:
    refuse_unexpressible(plan)
    s = plan.strategy
    zero = 2 if s.zero_stage == 1 else s.zero_stage  # FSDP2 has no optimizer-only sharding: ZeRO-1 runs as 2
    return SCRIPT.format(model_id=hf_model_id(plan), dp=plan.dp, replicas=s.hsdp_replicas, zero=zero,
                         micro_batch=s.micro_batch, grad_accum=plan.grad_accum, seq_len=plan.setup.seq_len,
                         global_batch=plan.global_batch, recompute=s.recompute,
                         steps=defaults.PLACEHOLDER_TRAIN_STEPS, lr=defaults.PLACEHOLDER_LEARNING_RATE,
                         betas=defaults.ADAM_BETAS, weight_decay=defaults.WEIGHT_DECAY,
                         clip=defaults.GRADIENT_CLIP_NORM)


def export(plan: ExportPlan, notes: list[str]) -> ExportResult:
    body = script(plan)
    own = [f"launch with {plan.dp} processes (torchrun; see the launch export)"]
    if plan.strategy.recompute == "selective":
        own.append(SELECTIVE_AS_FLASH_ATTENTION)
    if plan.setup.mode != "full":
        own.append(f"{plan.setup.mode}: wrap the model with PEFT (rank {plan.setup.lora_rank}) in build_model(), "
                   f"before apply_parallelism()")
    return result(FORMAT, "train_fsdp2.py", plan, "PyTorch FSDP2 training script (fully_shard)", body, notes + own)
