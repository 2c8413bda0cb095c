"""`shardwise evaluate`: one plan -> validity, memory per GPU, step time and throughput."""

from __future__ import annotations

import argparse
import inspect

from ..engine.evaluate import evaluate
from ..engine.plan_label import plan_label
from ..engine.results import Evaluation
from ..engine.search import recommend
from ..engine.training import TrainingSetup
from ..engine.validity.whole_mesh import require_whole_mesh
from ..present import likely, memory_band_note, mfu_basis, seconds, tokens_text
from .common import (add_cost_args, add_plan_args, add_scenario_args, cluster_from_args, cost_args_from, model_from_args,
                     print_json, setup_from_args, strategy_from_args)
from ..engine.post_training.modes import mode_name
from .post_training_text import memory_detail_lines, peak_phase_lines, post_training_lines, time_rows
from .profile_file import profile_from_args
from .flags import flag_for

# recommend's default headroom, read from its signature so the two never disagree
RECOMMEND_HEADROOM = inspect.signature(recommend).parameters["headroom"].default


def register(subparsers) -> None:
    p = subparsers.add_parser("evaluate", help="evaluate one parallelism plan",
                              description="Predict memory per GPU, step time and throughput for one plan.")
    add_scenario_args(p)
    add_cost_args(p)
    add_plan_args(p)
    p.add_argument("--json", action="store_true", help="print the result as JSON (stable contract, see README)")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    setup = setup_from_args(args)
    model, cluster, strategy = model_from_args(args), cluster_from_args(args), strategy_from_args(args)
    require_whole_mesh(model, cluster, setup, strategy)  # no rounded-down DP for degrees that do not divide
    result = evaluate(model, cluster, setup, strategy, **cost_args_from(args, setup.global_batch_tokens),
                      profile=profile_from_args(args))
    if args.json:
        print_json(result)
    else:
        print(render_evaluation(result, setup))
    return 0


def setup_line(setup: TrainingSetup) -> str:
    mode = mode_name(setup) + (f" (rank {setup.lora_rank})" if setup.mode != "full" else "")
    return (f"setup    seq {setup.seq_len:,}, global batch {setup.global_batch:,} ({setup.global_batch_tokens:,} "
            f"tokens), {mode}, {setup.precision}, {setup.framework}{moe_dispatch_words(setup)}"
            + packed_note(setup.mean_doc_len))


def moe_dispatch_words(setup) -> str:
    """', deepep dispatcher + EP A2A overlap' when not Megatron-Core's default (alltoall, no overlap)."""
    words = [] if setup.moe_dispatcher == "alltoall" else [f"{setup.moe_dispatcher} dispatcher"]
    if setup.moe_a2a_overlap:
        words.append("EP A2A overlap")
    return (", " + " + ".join(words) if words else "") + cuda_graph_words(setup)


def cuda_graph_words(setup) -> str:
    """', full-iteration CUDA graphs' when the step is replayed as graphs."""
    return ("" if setup.cuda_graphs == "none" else f", {setup.cuda_graphs} CUDA graphs") + megatron_option_words(setup)


def megatron_option_words(setup) -> str:
    """', recompute modules core_attn+layernorm, BF16 gradients, FP8 weights' for the options a user set."""
    words = []
    modules = getattr(setup, "recompute_modules", None)
    if modules is not None:
        words.append("recompute modules " + "+".join(modules))
    if getattr(setup, "grad_reduce_dtype", "fp32") == "bf16":
        words.append("BF16 gradients")
    if getattr(setup, "fp8_param_gather", False):
        words.append("FP8 weights")
    return "".join(", " + w for w in words)


def packed_note(mean_doc_len: int | None) -> str:
    return "" if mean_doc_len is None else f", packed documents of ~{mean_doc_len:,} tokens"


def _precision(e: Evaluation, setup: TrainingSetup | None) -> str | None:
    return setup.precision if setup is not None else (e.setup.precision if e.setup is not None else None)


def render_evaluation(e: Evaluation, setup: TrainingSetup | None = None) -> str:
    s, m = e.strategy, e.memory
    lines = [
        f"model    {e.model.name}: {e.model.params / 1e9:.2f} B params"
        + (f" ({e.model.active_params / 1e9:.2f} B active)" if e.model.active_params != e.model.params else "")
        + (" [approximate shape]" if e.model.approximate else ""),
        f"cluster  {e.cluster.num_gpus:,} x {e.cluster.gpu} ({e.cluster.gpu_memory_gib:g} GiB), "
        f"{e.cluster.gpus_per_node} per node, {e.cluster.network}",
        *([setup_line(setup)] if setup is not None else []),
        # every degree (the only line that shows VPP/ETP of 1), in the notation of every other CLI plan name
        f"plan     {plan_label(s, 'cli-full')}, grad-accum {s.grad_accum:,}",
        *post_training_lines(e),
        "",
    ]
    if e.violations:
        lines.append("INVALID plan:")
        lines += [f"  - [{v.rule}] {v.spelled(flag_for)}" for v in e.violations]
        lines.append("")
    for w in e.warnings:
        lines.append(f"warning: [{w.rule}] {w.spelled(flag_for)}")
    if e.warnings:
        lines.append("")
    lines.append("memory per GPU (most loaded rank)        GiB")
    for label, value, category in [
            ("weights", m.weights_gib, "weights"), ("gradients", m.gradients_gib, "gradients"),
            ("optimizer states", m.optimizer_gib, "optimizer"),
            ("activations (incl. logits)", m.activations_gib, "activations"),
            ("other (context, NCCL, fragmentation)", m.other_gib, "other")]:
        lines.append(f"  {label:<38}{value:>8.2f}")
        lines += memory_detail_lines(e, category)
    verdict = "fits" if m.fits else "DOES NOT FIT"
    if e.violations:
        verdict += " (but the plan is invalid)" if m.fits else " (and the plan is invalid)"
    elif m.fits and m.total_gib > m.capacity_gib * (1 - RECOMMEND_HEADROOM):
        verdict += f" (above the {RECOMMEND_HEADROOM:.0%} headroom `recommend` keeps free)"
    lines += peak_phase_lines(e)
    lines.append(f"  {'total (peak)':<38}{m.total_gib:>8.2f}  of {m.capacity_gib:g} GiB -> {verdict}")
    if m.total_gib_range:
        lines.append(f"  {'likely peak (80 % band)':<38}{m.total_gib_range[0]:>8.1f}–{m.total_gib_range[1]:.1f}")
        note = memory_band_note(m)  # the page's line, same threshold
        if note:
            lines.append(f"    note: {note}")
    if e.time is not None and e.throughput is not None:
        t, tp = e.time, e.throughput
        lines += ["", "time per step (exposed)"]
        for label, value in [("compute", t.compute_s), ("TP communication", t.tp_comm_s), ("CP communication", t.cp_comm_s),
                             ("EP communication", t.ep_comm_s), ("pipeline bubble", t.pp_bubble_s),
                             ("PP communication", t.pp_comm_s), ("DP communication", t.dp_comm_s),
                             ("optimizer step", t.optimizer_s), ("optimizer phase", t.optimizer_phase_s),
                             *time_rows(e)]:
            if value > 0 or label == "compute":
                lines.append(f"  {label:<38}{seconds(value):>11}")
        lines.append(f"  {'step':<38}{seconds(t.step_s):>11}" + (
            f"   likely {seconds(t.step_s_range[0])}–{seconds(t.step_s_range[1])}" if t.step_s_range else ""))
        lines += ["", f"throughput  {tp.tokens_per_s:,.0f} tokens/s ({tp.tokens_per_s_per_gpu:,.0f} per GPU"
                      + (f", likely {likely(tp.tokens_per_s_per_gpu_range)}" if tp.tokens_per_s_per_gpu_range else "")
                      + f"), MFU {tp.mfu * 100:.1f}%, HFU {tp.hfu * 100:.1f}%{mfu_basis(_precision(e, setup), e.warnings)}, "
                        f"{tp.model_tflops_per_gpu:.0f} model "
                        "TFLOP/s per GPU"]
        if tp.range_basis:
            lines.append(f"            likely = {tp.range_basis}")
    if e.calibration:
        lines.append(f"            {e.calibration}")
    if e.cost is not None:
        c = e.cost
        lines.append(f"cost        ${c.price_per_gpu_hour:.2f}/GPU-hour ({c.price_source}): "
                     f"${c.cluster_cost_per_hour:,.0f}/hour, ${c.cost_per_billion_tokens:,.0f} per billion tokens")
        if c.train_tokens is not None:
            lines.append(f"            {tokens_text(c.train_tokens)} tokens: {c.time_to_train_days:,.1f} days, "
                         f"{c.gpu_hours:,.0f} GPU-hours, ${c.total_cost:,.0f}")
    return "\n".join(lines)
