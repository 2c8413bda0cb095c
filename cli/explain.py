"""`shardwise explain`: two plans term by term, the winner's binding constraint, and what
one-knob changes would do. Without --a/--b it compares the winner of `recommend` with its runner-up."""

from __future__ import annotations

import argparse

from ..engine.errors import ShardwiseInputError
from ..engine.explain import Explanation, explain
from ..engine.explain_pair import winner_and_runner_up
from ..engine.plan_text import parse_plan
from ..engine.plan_label import plan_label
from ..engine.validity.whole_mesh import require_whole_mesh
from ..present import TERM_LABELS, calibration_lines, knob_change, plan_line, seconds, signed
from .common import add_scenario_args, cluster_from_args, model_from_args, print_json, setup_from_args
from .profile_file import profile_from_args
from .flags import flag_for


def register(subparsers) -> None:
    p = subparsers.add_parser("explain", help="compare two plans term by term and explain the winner",
                              description="Compare two plans term by term (time and memory), name what decides, "
                                          "the winner's binding constraint and one-knob counterfactuals.")
    add_scenario_args(p)
    p.add_argument("--a", metavar="PLAN", help="first plan, e.g. \"tp=4,pp=2,zero=1,mb=1,recompute=selective\"")
    p.add_argument("--b", metavar="PLAN", help="second plan; without --a and --b: the top two recommended plans")
    p.add_argument("--headroom", type=float, default=0.1, help="share of GPU memory kept free (default 0.1)")
    p.add_argument("--json", action="store_true", help="print the explanation as JSON")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    model, cluster, setup = model_from_args(args), cluster_from_args(args), setup_from_args(args)
    profile = profile_from_args(args)
    if args.b is not None and args.a is None:
        raise ShardwiseInputError("--b needs --a (the plan to compare it with)")
    if args.a is not None:
        a = parse_plan(args.a)
        b = parse_plan(args.b) if args.b is not None else None
        require_whole_mesh(model, cluster, setup, a, "--a")
        if b is not None:
            require_whole_mesh(model, cluster, setup, b, "--b")
    else:
        pair = winner_and_runner_up(model, cluster, setup, headroom=args.headroom, profile=profile)
        if pair is None:
            raise ShardwiseInputError("no plan fits, so there is nothing to compare; run `shardwise recommend` "
                                      "to see what would fit, or pass --a PLAN")
        a, b = pair
    result = explain(model, cluster, setup, a, b, headroom=args.headroom, profile=profile)
    if args.json:
        print_json(result)
    else:
        print(render_explanation(result))
    return 0


def render_explanation(x: Explanation) -> str:
    lines: list[str] = []
    c = x.comparison
    if c is not None:
        lines += [f"A  {plan_label(c.a.strategy, 'cli')}", f"   {plan_line(c.a)}",
                  f"B  {plan_label(c.b.strategy, 'cli')}", f"   {plan_line(c.b)}", *calibration_lines(c.a, "   "), ""]
        if c.time:
            lines.append(f"  {'time per step':<24}{'A':>12}{'B':>12}{'B − A':>13}")
            lines += [f"  {TERM_LABELS[t.term]:<24}{seconds(t.a):>12}{seconds(t.b):>12}{signed(t.delta, 's'):>13}"
                      for t in c.time if t.a or t.b]
        lines.append(f"  {'memory per GPU (GiB)':<24}{'A':>12}{'B':>12}{'B − A':>13}")
        lines += [f"  {TERM_LABELS[t.term]:<24}{t.a:>12.2f}{t.b:>12.2f}{signed(t.delta, 'GiB'):>13}" for t in c.memory]
        lines.append("")
        lines.append(_verdict(c))
    else:  # one plan: say which, and what it predicts, before explaining it
        w = x.winner
        lines += [f"plan  {plan_label(w.strategy, 'cli')}",
                  f"      {plan_line(w)}" if w.time is not None else
                  f"      memory {w.memory.total_gib:.1f} of {w.memory.capacity_gib:g} GiB; no step time: INVALID plan"]
    for v in x.winner.violations:
        lines.append(f"  [{v.rule}] {v.spelled(flag_for)}")
    lines += ["", _binding(x)]
    if x.expert_parallel is not None:
        lines += ["", *_expert_parallel(x.expert_parallel)]
    if x.counterfactuals:
        lines += ["", "one-knob changes to the winner:" if c is not None else "one-knob changes to this plan:"]
        for cf in x.counterfactuals:
            change = knob_change(cf.knob, cf.before, cf.after)
            if cf.outcome == "invalid":
                detail = "; ".join(f"[{v.rule}]" for v in cf.violations)
            elif cf.step_delta_s is not None:
                detail = (f"step {signed(cf.step_delta_s, 's')}, tokens/s x{cf.throughput_ratio:.3f}, "
                          f"memory {signed(cf.memory_delta_gib, 'GiB')}")
            else:
                detail = f"memory {cf.memory_total_gib:.1f} GiB"
            lines.append(f"  {change:<28}{cf.outcome.replace('_', ' '):<14}{detail}")
    return "\n".join(lines)


def _expert_parallel(e) -> list[str]:
    where = "across nodes" if e.crosses_nodes else "inside one node"
    how = f"{e.dispatcher} dispatcher" + (", EP A2A overlap" if e.a2a_overlap else "")
    comm = f", EP communication {seconds(e.ep_comm_s)} per step" if e.ep_comm_s is not None else ""
    lines = [f"expert parallelism: EP={e.ep} {where} ({how}){comm}"]
    for a in e.alternatives:
        side = "across nodes" if a.crosses_nodes else "inside one node"
        if a.outcome == "invalid":
            why = "invalid here (" + ", ".join(a.rules) + ")"
        elif a.outcome == "does_not_fit":
            why = f"does not fit ({a.memory_total_gib:.1f} GiB)"
        else:
            why = (f"{a.outcome}: step {signed(a.step_delta_s, 's')} (EP communication {signed(a.ep_comm_delta_s, 's')}), "
                   f"memory {signed(a.memory_delta_gib, 'GiB')}")
        lines.append(f"  EP={a.ep} {side}: {why}")
    if not e.alternatives:
        lines.append("  no EP on the other side of the node boundary to compare (experts or GPUs too few)")
    return lines


def _verdict(c) -> str:
    if c.winner == "neither":
        why = "is valid" if c.decided_by == "validity" else "fits in memory"
        return f"neither plan {why}" + (f" ({', '.join(c.rules)})" if c.decided_by == "validity" else "")
    if c.decided_by == "validity":
        return f"winner: {c.winner.upper()} — the other plan is invalid ({', '.join(c.rules)})"
    if c.decided_by == "memory":
        return f"winner: {c.winner.upper()} — decided by memory: the other plan does not fit"
    if c.decided_by == "tie":
        return "tie: the same predicted step time"
    who = "A" if c.winner == "a" else "B"
    top = c.decisive[0]
    line = (f"winner: {who}, {c.speedup - 1:+.2%} tokens/s; decided by {TERM_LABELS[top.term]} "
            f"({seconds(top.a)} vs {seconds(top.b)})")
    if c.within_ranking_resolution:
        line += ("\n  a near-tie: closer than the model can rank (measured runs order plans this close little "
                 "better than chance)")
    return line


def _grows(label: str) -> str:
    """'activations grow', 'total memory grows': the memory categories are named in the plural but one."""
    return f"{label} {'grow' if label.endswith('s') else 'grows'}"


def _binding(x: Explanation) -> str:
    b = x.binding
    n = b.numbers
    if b.kind == "memory" and "over_gib" in n:
        fix = f"; fastest fix: {knob_change(b.knob, b.before, b.after)}" if b.knob else ""
        return (f"binding constraint: memory — {n['memory_gib']:.1f} GiB needed, {n['usable_gib']:.1f} usable "
                f"(largest: {TERM_LABELS[b.term]}){fix}")
    if b.kind == "memory":
        return (f"binding constraint: memory — {knob_change(b.knob, b.before, b.after)} would be "
                f"{signed(n['step_delta_s'], 's')} per step but needs {n['memory_gib']:.1f} GiB "
                f"({n['usable_gib']:.1f} usable; {_grows(TERM_LABELS.get(b.term, b.term))})")
    if b.kind == "improvable":
        return (f"not optimal: {knob_change(b.knob, b.before, b.after)} fits and is {signed(n['step_delta_s'], 's')} per step "
                f"(tokens/s x{n['throughput_ratio']:.3f})")
    if b.kind == "time_term":
        grows = (f"{TERM_LABELS.get(b.term, b.term)} {seconds(n['a'])} → {seconds(n['b'])}" if "a" in n else b.term)
        memory = (f"{TERM_LABELS[b.memory_term]} {n['memory_a']:.1f} → {n['memory_b']:.1f} GiB" if b.memory_term
                  else f"memory {signed(n['memory_delta_gib'], 'GiB')}")
        return (f"binding constraint: time — every one-knob change is slower; the closest, "
                f"{knob_change(b.knob, b.before, b.after)}, would take {memory} but adds {seconds(n['step_delta_s'])} per step ({grows})")
    if b.kind == "validity":
        return f"binding constraint: validity rule {b.rule}"
    return "binding constraint: none found"
