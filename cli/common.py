"""Arguments shared by evaluate, recommend, explain and export, and turning them into specs."""

from __future__ import annotations

import argparse
import json
import math
import re
import sys

from ..engine.cluster import Cluster
from ..engine.errors import ShardwiseInputError
from ..engine.inputs import build_cluster, parse_count, parse_seq_len, resolve_model
from ..engine.model_spec import ModelSpec
from ..engine.strategy import Strategy
from ..engine.post_training.modes import TRAINING_MODES, training_setup
from ..engine.training import (CUDA_GRAPH_MODES, DEFAULT_FINE_TUNE_GLOBAL_BATCH, DEFAULT_GLOBAL_BATCH, MOE_DISPATCHERS,
                               RECOMPUTE_MODULE_NAMES, TrainingSetup)
from .profile_file import add_profile_arg


def _whole_number(text: str) -> int | None:
    """'8', '1e3', '1_024', '1,024', '8.0' -> int; '8.5', 'nan', 'inf', 'abc', '2,4' -> None (never truncated).
    A thousands comma is read only in groups of three ('16,384'), as the page's form reads counts (web/pages._whole);
    '2,4' stays an error, not 24."""
    s = text.strip().replace("_", "")
    if re.fullmatch(r"\d{1,3}(,\d{3})+", s):
        s = s.replace(",", "")
    try:
        value = float(s) if any(c in s.lower() for c in ".e") else int(s)
    except ValueError:
        return None
    if not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def positive_int(text: str) -> int:
    value = _whole_number(text)
    if value is None or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def seq_len_arg(text: str) -> int:
    """'8192', '8k', '32K', '128k' -> tokens (k = 1024): the engine's reading (parse_seq_len), which REST and the
    page share; argparse names the flag, so the message drops the setting's name."""
    try:
        return parse_seq_len(text)
    except ShardwiseInputError:
        raise argparse.ArgumentTypeError(f"expected a sequence length such as 8192 or 8k "
                                         f"(a positive whole number of tokens), got {text!r}") from None


def module_list(text: str) -> tuple[str, ...]:
    """'core_attn,layernorm' or 'core_attn layernorm' -> ('core_attn', 'layernorm'); names are checked by
    TrainingSetup, so a wrong one gets the engine's message."""
    names = tuple(n for n in text.replace(",", " ").split() if n)
    if not names:
        raise argparse.ArgumentTypeError(f"expected module names separated by commas "
                                         f"({', '.join(RECOMPUTE_MODULE_NAMES)}), got {text!r}")
    return names


def add_model_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--model", help="catalog name (see `shardwise models`), path to a Hugging Face config.json, or its JSON text")
    g.add_argument("--params", help="bare parameter count, e.g. 70e9 or 70B (synthesises an approximate shape)")


def add_cluster_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cluster")
    g.add_argument("--gpu", required=True, help="GPU id or alias (see `shardwise gpus`), e.g. h100-sxm")
    g.add_argument("--gpus", type=positive_int, required=True, help="total GPUs")
    g.add_argument("--gpus-per-node", type=positive_int, help="GPUs sharing the fast intra-node link (8 on HGX, 72 on NVL72)")
    g.add_argument("--network", help="scale-out network id, e.g. ib-ndr, roce-400g, eth-100g (default: the GPU's usual one)")


def add_setup_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("training setup")
    g.add_argument("--seq-len", type=seq_len_arg, help="tokens per sequence (default 4096; 8k accepted; "
                   "grpo/ppo: prompt + response)")
    b = g.add_mutually_exclusive_group()
    b.add_argument("--global-batch", type=positive_int, help=f"sequences per optimizer step (default {DEFAULT_GLOBAL_BATCH}; "
                        f"lora/qlora {DEFAULT_FINE_TUNE_GLOBAL_BATCH}; grpo/ppo 1024 prompts x the group size)")
    b.add_argument("--global-batch-tokens", help="tokens per optimizer step, e.g. 4M or 4194304")
    g.add_argument("--mode", choices=TRAINING_MODES, default="full", metavar="MODE",
                   help="full, lora, qlora, or post-training dpo, grpo, ppo (policy trained fully) and "
                        "dpo-lora, grpo-qlora, … (policy through adapters); default full")
    g.add_argument("--prompt-len", type=seq_len_arg, help="grpo/ppo: prompt tokens (default 512, verl)")
    g.add_argument("--response-len", type=seq_len_arg, help="grpo/ppo: generated tokens (default 512, verl)")
    g.add_argument("--group-size", type=positive_int,
                   help="grpo/ppo: samples per prompt (default 5 for grpo, 1 for ppo, verl)")
    g.add_argument("--inference-tp", type=positive_int, help="grpo/ppo: GPUs per rollout engine (default 2, verl)")
    g.add_argument("--reference-dtype", choices=["bf16", "fp32"],
                   help="dpo/grpo/ppo: the frozen reference's weights (default bf16, as TRL and verl load it)")
    g.add_argument("--lora-rank", type=positive_int, help="adapter rank with --mode lora/qlora (default 16)")
    g.add_argument("--precision", choices=["bf16", "fp8"], default="bf16",
                   help="compute precision of the linear layers (default bf16)")
    g.add_argument("--mean-doc-len", type=positive_int, metavar="N",
                   help="packed sequences: mean length of the documents packed into one sequence, attended with "
                        "intra-document masking (varlen flash attention); attention cost by document length "
                        "(default: one document per sequence)")
    g.add_argument("--framework", choices=["megatron", "deepspeed", "fsdp", "nanotron"],
                   help="whose memory layout and kernels to model; fsdp = PyTorch FSDP2 as torchtitan; nanotron = "
                        "Hugging Face nanotron (ZeRO-0/1, no interleaving; calibrated on the Ultra-Scale Playbook) "
                        "(default megatron; fsdp for qlora, which Megatron cannot run)")
    g.add_argument("--moe-dispatcher", choices=list(MOE_DISPATCHERS), default="alltoall",
                   help="MoE token dispatcher (Megatron-Core --moe-token-dispatcher-type): alltoall (default), "
                        "allgather, or deepep (flex + DeepEP: one copy per node, node-limited routing, FP8 dispatch)")
    g.add_argument("--moe-a2a-overlap", action="store_true",
                   help="hide the expert all-to-all behind the other micro-batch (Megatron-Core "
                        "--overlap-moe-expert-parallel-comm; megatron only; needs EP > 1, not allgather, no full recompute, "
                        "VPP > 1 with PP)")
    g.add_argument("--cuda-graphs", choices=list(CUDA_GRAPH_MODES), default="none",
                   help="CUDA graphs the step is replayed with (Megatron-Core --cuda-graph-impl; megatron only): none "
                        "(default), per-layer (transformer_engine; dropless MoE experts stay eager), or full-iteration "
                        "(the whole forward-backward as one graph: no host launch time; MoE needs --moe-dispatcher deepep)")
    g.add_argument("--recompute-modules", type=module_list, metavar="M,M,...",
                   help="what --recompute selective recomputes (Megatron-Core --recompute-modules; megatron only): "
                        f"comma-separated subset of {', '.join(RECOMPUTE_MODULE_NAMES)} (default: core_attn for dense "
                        "models; core_attn, layernorm and mla_up_proj/moe_act where the model has them)")
    g.add_argument("--grad-reduce-in-bf16", action="store_true",
                   help="keep and reduce gradients in BF16 instead of FP32 (Megatron-Core --grad-reduce-in-bf16, as "
                        "Megatron-Bridge's performance recipes run; megatron only): half the gradient memory and DP "
                        "gradient bytes")
    g.add_argument("--fp8-param-gather", action="store_true",
                   help="FP8 primary weights (Megatron-Core --fp8-param-gather; megatron with --precision fp8 only): "
                        "no BF16 weight copy, weights gathered in FP8")


def add_cost_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cost")
    g.add_argument("--train-tokens", help="token budget for time-to-train and cost, e.g. 15T or 2e12")
    g.add_argument("--price-per-gpu-hour", type=float,
                   help="USD per GPU-hour for the cost estimate (default: a listed price per GPU, see docs/performance.md)")


def add_plan_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("plan (DP is what is left: GPUs / (TP·CP·PP))")
    g.add_argument("--tp", type=positive_int, default=1, metavar="N", help="tensor parallel size (default 1)")
    g.add_argument("--pp", type=positive_int, default=1, metavar="N", help="pipeline stages (default 1)")
    g.add_argument("--vpp", type=positive_int, default=1, metavar="N",
                   help="virtual pipeline stages per rank, interleaved 1F1B (default 1)")
    g.add_argument("--cp", type=positive_int, default=1, metavar="N", help="context parallel size (default 1)")
    g.add_argument("--ep", type=positive_int, default=1, metavar="N", help="expert parallel size, MoE only (default 1)")
    g.add_argument("--etp", type=positive_int, default=1, metavar="N",
                   help="tensor parallel size inside the experts, MoE only (default 1)")
    g.add_argument("--zero", type=int, choices=[0, 1, 2, 3], default=1,
                   help="ZeRO stage: 1 optimizer states, 2 + gradients, 3 + parameters = FSDP full shard (default 1)")
    g.add_argument("--hsdp", type=positive_int, default=1, metavar="R",
                   help="HSDP: shard within DP/R ranks, replicate across R replicas; needs ZeRO 2 or 3 (default 1)")
    g.add_argument("--micro-batch", type=positive_int, default=1, metavar="N",
                   help="sequences per micro-batch per data-parallel rank (default 1)")
    g.add_argument("--recompute", choices=["none", "selective", "full"], default="selective",
                   help="activation recompute (default selective: attention core only; for MoE/MLA models under "
                        "megatron, Megatron-Core's MoE set core_attn, layernorm, mla_up_proj, moe_act)")
    g.add_argument("--no-sp", action="store_true", help="disable sequence parallelism (on by default when TP > 1)")


def add_scenario_args(p: argparse.ArgumentParser) -> None:
    add_model_args(p)
    add_cluster_args(p)
    add_setup_args(p)
    add_profile_arg(p)


def model_from_args(args: argparse.Namespace) -> ModelSpec:
    return resolve_model(args.model, args.params)


def cluster_from_args(args: argparse.Namespace) -> Cluster:
    return build_cluster(args.gpu, args.gpus, args.gpus_per_node, args.network)


def setup_warnings(args: argparse.Namespace) -> list[str]:
    """Flags that are read but cannot do what they say; warnings (the answer is still right), printed by
    cli/main.py after the command succeeded, so an error stays one line:
    - --lora-rank with full training sized nothing and said nothing: full training has no adapters;
    - --framework megatron with QLoRA: Megatron-LM and Megatron-Bridge have no 4-bit QLoRA (their formats refuse
      the plan), which is why a QLoRA mode's default is fsdp (engine/post_training/modes.py DEFAULT_FRAMEWORK)."""
    from ..engine.post_training.modes import split_mode

    rank, mode, framework = (getattr(args, k, None) for k in ("lora_rank", "mode", "framework"))
    if mode is None:
        return []
    weights, out = split_mode(mode)[0], []
    if rank is not None and weights == "full":
        out.append(f"--lora-rank {rank} is ignored: --mode {mode} trains every weight; the rank sizes the adapters "
                   "of --mode lora or qlora")
    if weights == "qlora" and framework == "megatron":
        out.append(f"Megatron has no 4-bit QLoRA (Megatron-LM and Megatron-Bridge refuse --mode {mode}): these "
                   "plans are priced as Megatron but run elsewhere; without --framework, QLoRA is modelled as fsdp")
    return out


def setup_from_args(args: argparse.Namespace) -> TrainingSetup:
    rank = {} if args.lora_rank is None else {"lora_rank": args.lora_rank}  # None: TrainingSetup's default, 16
    return training_setup(args.mode, seq_len=args.seq_len, global_batch=args.global_batch,
                          global_batch_tokens=args.global_batch_tokens or None,
                          prompt_len=args.prompt_len, response_len=args.response_len,
                          group_size=args.group_size, inference_tp=args.inference_tp,
                          reference_dtype=getattr(args, "reference_dtype", None), **rank,
                          precision=args.precision, framework=args.framework,
                          moe_dispatcher=getattr(args, "moe_dispatcher", "alltoall"),
                          moe_a2a_overlap=bool(getattr(args, "moe_a2a_overlap", False)),
                          cuda_graphs=getattr(args, "cuda_graphs", None) or "none",
                          recompute_modules=getattr(args, "recompute_modules", None),
                          grad_reduce_dtype="bf16" if getattr(args, "grad_reduce_in_bf16", False) else "fp32",
                          fp8_param_gather=bool(getattr(args, "fp8_param_gather", False)),
                          mean_doc_len=getattr(args, "mean_doc_len", None))


def cost_args_from(args: argparse.Namespace, step_tokens: int) -> dict:
    """train_tokens / price_per_gpu_hour keyword arguments for evaluate(); a budget below one step of
    `step_tokens` tokens is refused (tools/cost_facts.check_budget)."""
    from ..tools.cost_facts import check_budget

    given = getattr(args, "train_tokens", None)
    tokens = parse_count(given, "train_tokens") if given else None
    check_budget(tokens, step_tokens, "--train-tokens", given)
    return {"train_tokens": tokens, "price_per_gpu_hour": getattr(args, "price_per_gpu_hour", None)}


def strategy_from_args(args: argparse.Namespace) -> Strategy:
    return Strategy(tp=args.tp, pp=args.pp, vpp=args.vpp, cp=args.cp, ep=args.ep, etp=args.etp,
                    zero_stage=args.zero, hsdp_replicas=args.hsdp, micro_batch=args.micro_batch,
                    recompute=args.recompute, sequence_parallel=not args.no_sp)


def print_json(obj) -> None:
    if hasattr(obj, "model_dump"):
        obj = obj.model_dump(mode="json")
    json.dump(obj, sys.stdout, indent=2)
    sys.stdout.write("\n")


__all__ = ["ShardwiseInputError"]
