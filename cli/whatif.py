"""`shardwise what-if`: re-run the recommendation with one input changed and say what moved."""

from __future__ import annotations

import argparse

from ..engine.whatif import WhatIf, what_if
from ..engine.plan_label import plan_label
from ..present import TERM_LABELS, calibration_lines, knob_change, plan_line, seconds, signed
from .common import add_scenario_args, cluster_from_args, model_from_args, print_json, setup_from_args
from .profile_file import profile_from_args
from .recommend import add_search_args, constraints_from_args, render_nothing_fits
from .whatif_reasons import reason_text


def register(subparsers) -> None:
    p = subparsers.add_parser("what-if", aliases=["whatif"], help="re-run the recommendation with one input changed",
                              description="Re-run the recommendation with an input changed (gpu, gpus, "
                                          "gpus_per_node, network, seq_len, global_batch, global_batch_tokens, "
                                          "mode, lora_rank, precision, framework, moe_dispatcher, moe_a2a_overlap, cuda_graphs, "
                                          "mean_doc_len, recompute_modules, grad_reduce_dtype, fp8_param_gather) and report what changed and why.")
    add_scenario_args(p)
    p.add_argument("--change", action="append", required=True, metavar="INPUT=VALUE",
                   help="e.g. gpu=h200, gpus=128, seq_len=16k, mode=lora, network=ib-xdr (repeatable)")
    add_search_args(p, top=3)
    p.add_argument("--json", action="store_true", help="print the what-if result as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    result = what_if(model_from_args(args), cluster_from_args(args), setup_from_args(args), ",".join(args.change),
                     top_k=args.top, headroom=args.headroom, profile=profile_from_args(args),
                     batch_set=args.global_batch is not None or bool(args.global_batch_tokens),
                     **constraints_from_args(args))
    if args.json:
        print_json(result)
    else:
        print(render_whatif(result))
    return 0


def _applies_differently(before: str | None, after: str | None) -> bool:
    """The profile changes numbers on one side and not (or not alike) on the other: a profile applied on neither
    side ("profile not applied: …" both, naming different GPUs) leaves both on the shipped calibration."""
    unapplied = [c is None or c.startswith("profile not applied") for c in (before, after)]
    return before != after and not all(unapplied)


# The engine's input names that --change spells otherwise (`--change gpus=128` printed "num_gpus: 64 → 128").
CHANGE_NAMES = {"num_gpus": "gpus"}


def render_whatif(w: WhatIf) -> str:
    lines = ["change   " + ", ".join(f"{CHANGE_NAMES.get(c.input, c.input)}: {c.before} → {c.after}" for c in w.changes)]
    followed = next((r for r in w.reasons if r.rule == "global_batch" and "why" in r.numbers), None)
    if followed:  # the user never set a batch: say it moved with the scenario, and how to keep one
        lines.append(f"batch    {followed.numbers['why']} ({followed.numbers['after']:,} sequences); "
                     f"--global-batch N keeps a batch of your own")
    lines.append("")
    for label, rec in (("before", w.before), ("after", w.after)):
        if rec.plans:
            lines += [f"{label:<8} {plan_label(rec.plans[0].strategy, 'cli')}", f"         {plan_line(rec.plans[0], rec.setup.precision)}",
                      *calibration_lines(rec.plans[0], "         ")]
        else:
            lines += [f"{label:<8} nothing fits"] + ["  " + x for x in render_nothing_fits(rec.nothing_fits)]
    if w.throughput_ratio is not None:
        lines += ["", f"tokens/s x{w.throughput_ratio:.3f} (per GPU x{w.tokens_per_s_per_gpu_ratio:.3f})"]
        if _applies_differently(w.before.plans[0].calibration, w.after.plans[0].calibration):
            lines.append("         note: the profile applies differently before and after (see above), so this "
                         "ratio compares your measured cluster with the shipped calibration")
    if w.plan_changes:
        lines.append("plan     " + ", ".join(knob_change(k.knob, k.before, k.after) for k in w.plan_changes))
    moved = [t for t in w.time if t.term != "step_s" and t.delta]
    if moved:
        lines.append("time     " + ", ".join(f"{TERM_LABELS[t.term]} {signed(t.delta, 's')}"
                                             for t in sorted(moved, key=lambda t: -abs(t.delta))[:4]))
        step = next(t for t in w.time if t.term == "step_s")
        lines.append(f"step     {seconds(step.a)} → {seconds(step.b)}")
    if w.reasons:
        lines += ["", "why:"] + [f"  {reason_text(r, w)}" for r in w.reasons]
    else:  # an empty "why:" heading read as output cut short: say why there is no reason
        lines += ["", "why:     " + _no_reason(w)]
    return "\n".join(lines)


def _no_reason(w: WhatIf) -> str:
    if not w.fits_before and not w.fits_after:
        return "nothing fits before or after the change (what would fit is listed above)"
    unmoved = not w.plan_changes and all(not t.delta for t in w.time) and all(not m.delta for m in w.memory)
    if w.fits_before and w.fits_after and unmoved:
        return ("nothing the engine weighs moved: the change does not affect this scenario's recommendation "
                "(the same plan, step time and memory on both sides)")
    return "no single input explains the difference; the plan, time and memory lines above show what moved"
