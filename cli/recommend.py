"""`shardwise recommend`: the fastest plans that fit, why the winner wins, what else was close.

Extension hook (used by the export subcommand): if cli/export.py defines
`add_recommend_args(parser)` and/or `extend_recommend(args, recommendation, payload)`,
they are called here — the first adds flags such as `--export-dir`, the second may add keys
to the JSON payload (e.g. `plans[i]["exports"]`) or write files. No edit here is needed.
"""

from __future__ import annotations

import argparse
import importlib

from ..engine.cost import cost_report
from ..engine.errors import ShardwiseInputError
from ..engine.explain import compare
from ..engine.nothing_fits import CONSTRAINTS_EXCLUDE_ALL
from ..engine.recommendation import NothingFits, Recommendation
from ..engine.search import recommend
from ..engine.plan_label import plan_label
from ..present import (TERM_LABELS, calibration_lines, count_noun, memory_risk_lines, plan_line, plans_table, seconds,
                       signed, tokens_text)
from .common import (add_cost_args, add_scenario_args, cluster_from_args, cost_args_from, model_from_args,
                     positive_int, print_json, setup_from_args)
from .evaluate import moe_dispatch_words, packed_note
from .post_training_text import post_training_lines
from .profile_file import profile_from_args
from .recommend_exports import carried_lines, nothing_exportable, set_aside_lines
from .flags import flag_for

INT_KNOBS = (("tp", "tp"), ("pp", "pp"), ("vpp", "vpp"), ("cp", "cp"), ("ep", "ep"), ("etp", "etp"),
             ("micro-batch", "micro_batch"))


def _export_hooks():
    try:
        return importlib.import_module(f"{__package__}.export")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__package__}.export":
            return None
        raise


def add_search_args(p: argparse.ArgumentParser, top: int = 5) -> None:
    p.add_argument("--top", type=positive_int, default=top, metavar="K",  # 0 was refused as "top_k must be …"
                   help=f"how many plans to return (default {top})")
    p.add_argument("--headroom", type=float, default=0.1,
                   help="share of GPU memory kept free, 0..1 (default 0.1: plans must fit in 90%%)")
    g = p.add_argument_group("constraints (pin a knob to a value or a comma list; bound it with --max-/--min-)")
    for flag, _ in INT_KNOBS:
        g.add_argument(f"--{flag}", metavar="N[,N]", help=f"allowed {flag.upper() if len(flag) < 4 else flag}")
        g.add_argument(f"--max-{flag}", type=int, metavar="N", help=argparse.SUPPRESS)
        g.add_argument(f"--min-{flag}", type=int, metavar="N", help=argparse.SUPPRESS)
    g.add_argument("--zero", metavar="Z[,Z]", help="allowed ZeRO stages, e.g. 1 or 1,3")
    g.add_argument("--hsdp", metavar="R[,R]", help="HSDP replica counts to try (the search tries 1 unless given)")
    g.add_argument("--recompute", metavar="MODE[,MODE]", help="allowed recompute modes: none, selective, full")
    g.add_argument("--sp", choices=["on", "off"], help="force sequence parallelism on or off")
    g.add_argument("--max", dest="max_any", metavar="KNOB=N[,KNOB=N]",
                   help="upper bounds, e.g. --max pp=4,tp=8 (also --max-pp 4)")


def constraints_from_args(args: argparse.Namespace) -> dict:
    out: dict = {}
    for flag, name in INT_KNOBS:
        attr = flag.replace("-", "_")
        if getattr(args, attr, None) is not None:
            out[name] = getattr(args, attr)
        for bound in ("max", "min"):
            value = getattr(args, f"{bound}_{attr}", None)
            if value is not None:
                out[f"{bound}_{name}"] = value
    for flag, name in (("zero", "zero_stage"), ("hsdp", "hsdp_replicas"), ("recompute", "recompute"),
                       ("sp", "sequence_parallel")):
        if getattr(args, flag, None) is not None:
            out[name] = getattr(args, flag)
    if getattr(args, "max_any", None):
        for part in args.max_any.split(","):
            key, eq, value = part.partition("=")
            if not eq or not value.strip():
                raise ShardwiseInputError(f"--max {part.strip()}: give each bound as KNOB=N, e.g. --max pp=4,tp=8")
            out[f"max_{_max_knob(key.strip(), part.strip())}"] = value.strip()
    return out


# The knobs `--max` bounds, as they are typed (the --max-KNOB flags above, and --zero's stage).
MAX_KNOBS = tuple(flag for flag, _ in INT_KNOBS) + ("zero",)


def _max_knob(typed: str, part: str) -> str:
    """`--max pp=4` -> 'pp'; an unknown knob is refused as typed (not as the engine's max_foo)."""
    name = typed.lower().replace("_", "-")
    if name not in MAX_KNOBS and name != "mb":
        raise ShardwiseInputError(f"--max {part}: unknown knob {typed!r}; --max bounds {', '.join(MAX_KNOBS)} "
                                  f"(e.g. --max pp=4,tp=8)")
    return name.replace("-", "_")


def register(subparsers) -> None:
    p = subparsers.add_parser("recommend", help="search every valid plan and rank those that fit",
                              description="Enumerate every valid parallelism plan, drop those that do not fit, "
                                          "rank the rest by predicted throughput.")
    add_scenario_args(p)
    add_cost_args(p)
    add_search_args(p)
    p.add_argument("--json", action="store_true",
                   help="print {plans: [...], searched, excluded, nothing_fits, ...} as JSON")
    hooks = _export_hooks()
    if hooks is not None and hasattr(hooks, "add_recommend_args"):
        hooks.add_recommend_args(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    result = recommend(model_from_args(args), cluster_from_args(args), setup_from_args(args), top_k=args.top,
                       headroom=args.headroom, profile=profile_from_args(args),
                       export_format=getattr(args, "export", None), list_exports=True, **constraints_from_args(args))
    result = with_cost(result, **cost_args_from(args, result.setup.global_batch_tokens))
    payload = result.model_dump(mode="json")
    hooks = _export_hooks()
    if hooks is not None and hasattr(hooks, "extend_recommend"):
        hooks.extend_recommend(args, result, payload)
    if args.json:
        print_json(payload)
    else:
        print(render_recommendation(result))
    return 0


def with_cost(r: Recommendation, train_tokens: float | None, price_per_gpu_hour: float | None) -> Recommendation:
    """Each plan's cost for the user's token budget and price (recommend ranks without them)."""
    if train_tokens is None and price_per_gpu_hour is None:
        return r
    plans = [p.model_copy(update={"cost": cost_report(p.throughput.tokens_per_s, p.cluster.num_gpus, p.cluster.gpu,
                                                      train_tokens, price_per_gpu_hour)}) for p in r.plans]
    return r.model_copy(update={"plans": plans})


def _header(r: Recommendation) -> list[str]:
    m, c, s = r.model, r.cluster, r.setup
    usable = c.gpu_memory_gib * (1 - r.headroom)
    lines = [
        f"model    {m.name}: {m.params / 1e9:.2f} B params"
        + (f" ({m.active_params / 1e9:.2f} B active)" if m.active_params != m.params else "")
        + (" [approximate shape]" if m.approximate else ""),
        f"cluster  {c.num_gpus:,} x {c.gpu} ({c.gpu_memory_gib:g} GiB), {c.gpus_per_node} per node, {c.network}",
        f"setup    seq {s.seq_len:,}, global batch {s.global_batch:,} ({s.global_batch_tokens:,} tokens), "
        f"{s.mode}, {s.precision}, {s.framework}{moe_dispatch_words(s)}" + packed_note(s.mean_doc_len),
        f"searched {r.searched:,} plans: {r.valid:,} valid, {r.fitting:,} fit in {usable:.1f} GiB "
        f"({c.gpu_memory_gib:g} GiB − {r.headroom:.0%} headroom)",
    ]
    if r.plans:
        lines += post_training_lines(r.plans[0])
    if r.constraints:
        lines.append("pinned   " + ", ".join(f"{k}={v}" for k, v in r.constraints.items()))
    if r.excluded:
        lines.append("excluded " + " · ".join(f"{k} {v:,}" for k, v in r.excluded.items()))
    return lines + set_aside_lines(r)


def _why(r: Recommendation) -> list[str]:
    """Against the first alternative that is predicted slower (ties say nothing about why)."""
    if len(r.plans) < 2:
        return []
    best = r.plans[0]
    for other in r.plans[1:]:
        cmp = compare(best, other)
        if cmp.decided_by != "tie":
            break
    else:
        tied = count_noun(len(r.plans) - 1, "plan")
        return ["", f"the next {tied} predict{'s' if len(r.plans) == 2 else ''} the same step time; the winner is first by "
                    f"memory, then the simpler layout"]
    lines = ["", f"why it beats {plan_label(other.strategy, 'cli')} ({gain_percent(cmp.speedup)} tokens/s):"]
    for t in cmp.decisive[:3]:
        lines.append(f"  {TERM_LABELS[t.term]:<20} {seconds(t.a)} vs {seconds(t.b)} ({signed(t.a - t.b, 's')})")
    for t in cmp.offsetting[:2]:
        lines.append(f"  but {TERM_LABELS[t.term]:<16} {seconds(t.a)} vs {seconds(t.b)} ({signed(t.a - t.b, 's')})")
    return lines


def gain_percent(speedup: float) -> str:
    """1.0057 -> '+0.57%'; 1.000043 -> '+0.004%' (it read '+0.00%', a win by nothing): as many digits as it takes
    to be non-zero, the page's rule (web/view.speed_words)."""
    percent = (speedup - 1.0) * 100
    digits = 2 if abs(percent) >= 0.01 else 3
    return f"{percent:+.{digits}f}%"


def _near_ties(r: Recommendation) -> list[str]:
    if not r.near_best:
        return []
    # With --top already that large they are in the table: pointing at --top N again read as if they were not.
    rows = "#2" if r.near_best == 1 else f"#2–#{r.near_best + 1}"
    where = (f"{rows} in the alternatives below" if len(r.plans) > r.near_best
             else f"--top {r.near_best + 1} lists {'it' if r.near_best == 1 else 'them'}")
    verb = "is" if r.near_best == 1 else "are"
    return ["", f"near-ties: {count_noun(r.near_best, 'other plan')} {verb} predicted within "
                f"{r.ranking_resolution:.0%} of the best ({where}).",
            "  That is closer than the model can rank: measured runs order such pairs little better than",
            "  chance. Choose among them on what you trust (fewer parallel dimensions, a layout you have run)."]


def render_nothing_fits(n: NothingFits) -> list[str]:
    if n.reason == "no_valid_plan":
        if n.blocking and all(v.rule == CONSTRAINTS_EXCLUDE_ALL for v in n.blocking):
            lines = ["NOTHING TO SEARCH: the constraints rule out every value of a knob:"]
        else:
            lines = ["NO VALID PLAN: every combination breaks a rule. Examples:"]
        lines += [f"  [{v.rule}] {v.spelled(flag_for)}" for v in n.blocking]
        return lines
    lines = [f"NOTHING FITS: the leanest valid plan needs {n.lowest_memory_gib:,.1f} GiB per GPU, "
             f"{n.usable_gib:,.1f} GiB usable ({plan_label(n.lowest_memory_plan, 'cli')})",
             "what would fit (each with its leanest plan, the least memory, not the fastest: "
             "`what-if --change …` ranks them):"]
    for o in n.options:
        # The flags that make the change (--gpus 128, --zero 3), as the user would type them; they read as the
        # engine's fields ("num_gpus=128", "zero_stage=3", "larger_gpu").
        change = " ".join(f"{flag_for(k)} {v}" for k, v in o.change.items() if v is not None) \
            or RULE_WORDS.get(o.rule, o.rule)
        if not o.applicable:
            lines.append(f"  {change:<22} n/a — {o.note}")
            continue
        verdict = "fits" if o.fits else "does not fit"
        need = f", needs {o.lowest_memory_gib:,.1f} GiB" if o.lowest_memory_gib is not None else ""
        plan = f" ({plan_label(o.plan, 'cli')})" if (o.fits and o.plan) else ""
        lines.append(f"  {change:<22} {verdict}{need}{plan}" + (f" ({o.note})" if o.note else ""))
    return lines


RULE_WORDS = {"larger_gpu": "a larger GPU", "more_gpus": "more GPUs"}  # a fix with no single value to name


def render_recommendation(r: Recommendation) -> str:
    lines = _header(r) + [""]
    if not r.plans:
        return "\n".join(lines + (render_nothing_fits(r.nothing_fits) if r.nothing_fits else nothing_exportable(r)))
    best = r.plans[0]
    lines += [f"BEST     {plan_label(best.strategy, 'cli')}", f"         {plan_line(best, r.setup.precision)}",
              *calibration_lines(best, "         ")]
    band = best.memory.total_gib_range
    if band and r.memory_risk is not None:  # the chat and the tools say it (engine/memory_risk.py), as `evaluate` does
        lines.append(f"         memory likely {band[0]:.1f}–{band[1]:.1f} GiB")
        lines += [f"         {line}" for line in memory_risk_lines(r.memory_risk, "cli")]
    if best.cost is not None and best.cost.train_tokens is not None:
        c = best.cost
        lines.append(f"         {tokens_text(c.train_tokens)} tokens: {c.time_to_train_days:,.1f} days, "
                     f"{c.gpu_hours:,.0f} GPU-hours, ${c.total_cost:,.0f} at ${c.price_per_gpu_hour:.2f}/GPU-hour")
    lines += _why(r) + _near_ties(r)
    if len(r.plans) > 1:
        lines += ["", "alternatives (fastest first):"] + plans_table(r.plans)
    lines += carried_lines(r)
    if best.warnings:
        lines += [""] + [f"warning: [{w.rule}] {w.spelled(flag_for)}" for w in best.warnings]
    return "\n".join(lines)
