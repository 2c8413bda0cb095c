"""`shardwise eval`: run the eval suite against the offline planner, scripted transcripts or a
live model, and print a summary by family and grader (or `--json`)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..engine.errors import ShardwiseInputError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "eval", help="check the advisor's answers against the engine (eval suite)",
        description="Run the eval cases against a target and grade every answer against the engine's ground truth: "
                    "tools and arguments, the recommended plan, every number, required facts.")
    p.add_argument("--target", choices=["offline", "scripted", "live", "recorded"], default="offline",
                   help="offline planner (default), scripted model replies replayed through the agent, the live "
                        "endpoint (OPENAI_BASE_URL, OPENAI_API_KEY, SHARDWISE_MODEL), or recorded replies")
    p.add_argument("--cases", action="append", type=Path, metavar="PATH",
                   help="case file or directory (default: the bundled evals/cases)")
    p.add_argument("--family", action="append", metavar="NAME", help="only this family (repeatable)")
    p.add_argument("--case", action="append", metavar="ID", help="only this case id or id prefix (repeatable)")
    p.add_argument("--repeats", type=int, default=1, metavar="N", help="run each case N times (live models vary)")
    p.add_argument("--scripts", action="append", type=Path, metavar="PATH",
                   help="scripted model replies for --target scripted (default: the bundled evals/scripts)")
    p.add_argument("--transcripts", action="append", type=Path, metavar="FILE",
                   help="recorded replies for --target recorded (YAML or JSONL)")
    p.add_argument("--judge", action="store_true",
                   help="also ask the configured LLM to rate clarity (reported separately, never gating)")
    p.add_argument("--min-pass-rate", type=float, metavar="X", help="exit 1 when the pass rate is below X (0..1)")
    p.add_argument("--report", type=Path, metavar="FILE", help="write a .json or .html report with failing transcripts")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--list", action="store_true", help="list the selected cases and exit")
    p.add_argument("--no-progress", action="store_true", help="no progress on stderr")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from ..evals.loader import load_cases, select
    from ..evals.report import Progress, summary_json, summary_table, write_report
    from ..evals.runner import run_suite
    from ..evals.targets import make_target

    if args.repeats < 1:
        raise ShardwiseInputError(f"--repeats must be at least 1, got {args.repeats}")
    if args.min_pass_rate is not None and not 0 <= args.min_pass_rate <= 1:
        raise ShardwiseInputError(f"--min-pass-rate is a fraction between 0 and 1, got {args.min_pass_rate}")
    if args.report and args.report.suffix.lower() not in (".json", ".html", ".htm"):
        raise ShardwiseInputError(f"--report must end in .json or .html, got {args.report}")
    cases = select(load_cases(args.cases), args.family, args.case)
    if not cases:
        raise ShardwiseInputError("no cases selected")
    if args.list:
        for c in cases:
            print(f"{c.id:<44}{c.family:<15}{c.turns[0].user[:70]}")
        return 0
    target = make_target(args.target, scripts=args.scripts, transcripts=args.transcripts)
    recorded = getattr(target, "scripts", None) or getattr(target, "recordings", None)
    if args.target in ("scripted", "recorded"):  # grade the cases there is something for
        cases = [c for c in cases if c.id in (recorded or {})]
        if not cases:
            raise ShardwiseInputError(f"none of the selected cases has a {args.target} reply")
    judge = _judge() if args.judge else None
    result = run_suite(cases, target, repeats=args.repeats, judge=judge, progress=Progress(enabled=not args.no_progress))
    if args.report:
        write_report(result, args.report)
    if args.json:
        json.dump(summary_json(result), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(summary_table(result))
        if args.report:
            print(f"report: {args.report}")
    if args.min_pass_rate is not None and result.pass_rate < args.min_pass_rate:
        print(f"shardwise: pass rate {result.pass_rate:.1%} is below --min-pass-rate {args.min_pass_rate:.1%}",
              file=sys.stderr)
        return 1
    return 0


def _judge():
    from ..agent.config import load_config
    from ..evals.graders.judge import openai_complete

    config = load_config()
    if not config.llm_enabled:
        raise ShardwiseInputError("--judge needs an LLM: set SHARDWISE_MODEL (and OPENAI_BASE_URL / OPENAI_API_KEY)")
    return openai_complete(config.model, config.base_url, config.key())
