"""`shardwise validate`: the engine's predictions against the published, measured training runs
shipped with it — per-row error, MAPE per source, and the ranking agreement of plans."""

from __future__ import annotations

import argparse

from ..engine.calibration.report import ValidationReport, build_report
from ..engine.calibration.runs import load_runs
from ..engine.errors import ShardwiseInputError
from .common import print_json


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "validate", help="compare predictions with measured training runs",
        description="Predict every shipped calibration run (Megatron-LM/-Bridge, llm-foundry, torchtitan, the "
                    "Ultra-Scale Playbook sweep, Narayanan 2021, Korthikanti 2022) and report the errors.")
    p.add_argument("--source", help="only this source (see the summary table for names)")
    p.add_argument("--summary", action="store_true", help="omit the per-row table")
    p.add_argument("--no-memory", action="store_true", help="skip the memory comparison (faster)")
    p.add_argument("--json", action="store_true", help="print the full report as JSON")
    p.add_argument("--profile", action="store_true",
                   help="the calibration check instead: calibrate on the smallest run of each family, predict the "
                        "rest; and the 80 %% intervals' coverage of held-out runs (takes no file)")
    p.set_defaults(handler=run, extra_args_hint=_profile_file_hint)


def _profile_file_hint(args: argparse.Namespace, extra: list[str]) -> str | None:
    """--profile is a switch here, while every other command's --profile takes a file: `validate --profile
    mine.json` said only "unrecognized arguments: mine.json"."""
    if args.profile and extra:
        return (f"validate --profile is the calibration check of the shipped runs and takes no file "
                f"({' '.join(extra)}); a saved profile applies to a scenario: pass it as --profile FILE to "
                "recommend, evaluate, explain, what-if or export")
    return None


def run(args: argparse.Namespace) -> int:
    sources = sorted({r.source for r in load_runs()})
    if args.source and args.source not in sources:
        raise ShardwiseInputError(f"unknown source {args.source!r}; one of: {', '.join(sources)}")
    if args.profile:
        from .validate_profile import render_profile_check

        # the calibration check covers every family, in text: these flags were silently dropped with it
        ignored = [flag for flag, on in (("--source", args.source), ("--json", args.json),
                                         ("--no-memory", args.no_memory)) if on]
        if ignored:
            raise ShardwiseInputError(f"validate --profile reports every family as text (with --summary: without the "
                                      f"per-family table); {', '.join(ignored)} would be ignored: drop "
                                      f"{'it' if len(ignored) == 1 else 'them'}")

        print(render_profile_check(families=not args.summary))
        return 0
    report = build_report(args.source, with_memory=not args.no_memory)
    if args.json:
        print_json(report)
    else:
        print(render(report, rows=not args.summary))
    return 0


def _pct(x: float | None) -> str:
    return "   -  " if x is None else f"{100 * x:5.1f}%"


def _gap(lo: float, hi: float | None) -> str:
    return f">= {100 * lo:g}%" if hi is None else f"{100 * lo:g}-{100 * hi:g}%"


def _group_table(r: ValidationReport) -> list[str]:
    """Per group: Spearman and top-1 regret (1 − measured throughput of the plan the model ranks first
    among those it predicts to fit / the group's best measured; docs/performance.md)."""
    regret = "-" if r.weighted_top1_regret is None else f"{100 * r.weighted_top1_regret:.1f}%"
    # As wide as the longest group name: a fixed 85 characters cut "… | seq 4096 | bf16" to "… | bf1".
    width = max([len("group"), *(len(g.group) for g in r.groups)]) + 1
    out = [f"  per group (top-1 regret weighted by plans: {regret}):",
           f"    {'group':<{width}}{'plans':>6}{'Spearman':>10}{'top-1 regret':>14}  model's first -> measured best"]
    for g in r.groups:
        reg = "   -  " if g.top1_regret is None else f"{100 * g.top1_regret:5.1f}%"
        first = g.top1_plan or "(none predicted to fit)"
        out.append(f"    {g.group:<{width}}{g.plans:>6}{g.spearman:>10.2f}{reg:>14}  {first} -> {g.best_plan}")
    return out


def render(r: ValidationReport, rows: bool = True) -> str:
    out = []
    if rows:
        out.append(f"{'run':<44}{'model':<26}{'GPUs':<15}{'plan':<38}{'measured':>9}{'predicted':>10}"
                   f"{'error':>8}{'mem GiB meas/pred':>20}")
        for x in r.rows:
            mem = ""
            if x.measured_memory_gib is not None and x.predicted_memory_gib is not None:
                mem = f"{x.measured_memory_gib:7.1f}/{x.predicted_memory_gib:5.1f}"
            out.append(f"{x.key:<44}{x.model[:25]:<26}{f'{x.num_gpus}x{x.gpu}'[:14]:<15}{x.plan[:37]:<38}"
                       f"{x.measured_tokens_per_gpu:>9,.0f}{x.predicted_tokens_per_gpu:>10,.0f}{100 * x.error:>+7.1f}%"
                       f"{mem:>20}" + ("  (held out)" if x.holdout else ""))
        out.append("")
    out.append(f"{'source':<22}{'rows':>6}{'MAPE':>8}{'median':>8}{'<=15%':>8}{'memory rows':>13}{'mem MAPE':>10}")
    for s in r.sources:
        out.append(f"{s.source:<22}{s.rows:>6}{_pct(s.mape):>8}{_pct(s.median_abs_error):>8}{_pct(s.within_15pct):>8}"
                   f"{s.memory_rows:>13}{_pct(s.memory_mape):>10}")
    n = len(r.rows)
    out += ["", f"throughput over {n} runs: MAPE {_pct(r.mape).strip()} (fitted groups {_pct(r.mape_fitted).strip()}, "
                f"held-out groups {_pct(r.mape_holdout).strip()}), median |error| {_pct(r.median_abs_error).strip()}, "
                f"90th percentile {_pct(r.p90_abs_error).strip()}"]
    if r.memory_mape is not None:
        out.append(f"peak memory: MAPE {_pct(r.memory_mape).strip()} over "
                   f"{sum(s.memory_rows for s in r.sources)} runs that report it")
    if r.groups:
        out.append(f"plan ranking within {len(r.groups)} model/cluster groups of >= 4 plans: "
                   f"mean Spearman {r.mean_spearman:.2f}, mean Kendall {r.mean_kendall:.2f} "
                   f"(weighted by plans: {r.weighted_spearman:.2f} / {r.weighted_kendall:.2f})")
        worst = min(r.groups, key=lambda g: g.spearman)
        out.append(f"  weakest: {worst.group} ({worst.plans} plans, Spearman {worst.spearman:.2f})")
        out += _group_table(r)
    if r.order_by_gap:
        out.append("pairs of plans in one group ordered as measured, by predicted gap: " + ", ".join(
            f"{_gap(g.gap_from, g.gap_to)} {_pct(g.ordered_as_measured).strip()} ({g.pairs:,})" for g in r.order_by_gap))
    if r.excluded:
        out.append("not scored: " + "; ".join(f"{v} {k}" for k, v in r.excluded.items()))
    out.append("expected error for a new run on calibrated hardware: about ±"
               f"{100 * r.median_abs_error:.0f}% typical, ±{100 * r.p90_abs_error:.0f}% for 9 in 10 runs "
               "(see docs/performance.md)")
    return "\n".join(out)
