"""`shardwise export`: one plan as a file a framework loads; and recommend's export hooks.

    shardwise export --format deepspeed --model llama-3-70b --gpu h100-sxm --gpus 64 --tp 8 --pp 2 [-o FILE]
    shardwise export --format megatron --from-plan recommend.json [--plan-index 0]

--from-plan reads a plan from `recommend --json` output (the whole output, whose model, cluster
and setup it uses, or one of its `plans[]` / an `evaluate --json` object, with the scenario
flags for what that lacks); scenario flags given on the command line win over the file's. A framework that cannot express the plan refuses: one line, exit 2.
The file goes to stdout or -o; the header (for JSON, which has no comments) and the notes go
to stderr.

Hooks read by cli/recommend.py: `recommend --export FORMAT` ranks only plans FORMAT writes;
`recommend --export-dir DIR` writes every format (or only --export's) for the top plan (plus
README.txt with headers, notes and refusals); `recommend --json --exports` adds
`exports` to each plan: {format: {filename, text, header, warnings} | {refused: reason}}.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

from ..engine.calibration.profile import NOT_IN_EXPORTS
from ..engine.errors import ShardwiseInputError
from ..engine.export import FORMATS, ExportRefused, ExportResult, export_all, export_plan
from ..engine.inputs import build_cluster, resolve_model
from ..engine.plan_label import plan_label
from ..engine.strategy import Strategy
from ..engine.training import TrainingSetup
from .common import (add_plan_args, add_scenario_args, cluster_from_args, model_from_args, setup_from_args,
                     strategy_from_args)
from .files import read_json_file
from .profile_file import profile_from_args
from .flags import error_text, flag_for

SETUP_DESTS = ("seq_len", "global_batch", "global_batch_tokens", "mode", "lora_rank", "precision", "framework",
               "moe_dispatcher", "moe_a2a_overlap", "cuda_graphs", "recompute_modules", "grad_reduce_in_bf16",
               "fp8_param_gather", "prompt_len", "response_len", "group_size", "inference_tp",
               "reference_dtype", "mean_doc_len")
CLUSTER_DESTS = ("gpu", "gpus", "gpus_per_node", "network")
PLAN_DESTS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero", "hsdp", "micro_batch", "recompute", "no_sp")
STRATEGY_KEYS = ("tp", "pp", "vpp", "cp", "ep", "etp", "zero_stage", "hsdp_replicas", "sequence_parallel",
                 "micro_batch", "recompute")


def register(subparsers) -> None:
    p = subparsers.add_parser("export", help="write a plan as a DeepSpeed/torchtitan/FSDP/Accelerate/Megatron/"
                                             "Nanotron config or a launch script",
                              description="Export one plan as a file the framework loads. Refuses (exit 2) when "
                                          "the framework cannot express the plan.")
    p.add_argument("--format", required=True, choices=FORMATS, help="what to write")
    p.add_argument("-o", "--output", metavar="FILE", help="write here instead of stdout")
    p.add_argument("--from-plan", metavar="FILE",
                   help="a plan from `recommend --json` output (the whole output or one plan), `evaluate --json`, or "
                        "`what-if --json` (its 'after' recommendation)")
    p.add_argument("--plan-index", type=int, default=0, metavar="N",
                   help="with --from-plan on recommend output: which plan, counted from 0 (default 0 = #1, the best; "
                        "1 = #2 of recommend's table, …)")
    add_scenario_args(p)
    add_plan_args(p)
    setup_defaults = {}
    for action in p._actions:
        if action.dest in ("gpu", "gpus"):  # with --from-plan the file may carry the cluster
            action.required = False
        if action.dest in SETUP_DESTS + PLAN_DESTS:  # None = not given, so --from-plan can tell flags from defaults
            setup_defaults[action.dest], action.default = action.default, None
    p.set_defaults(handler=run, setup_defaults=setup_defaults)


def _fill_setup_defaults(args: argparse.Namespace) -> set[str]:
    """Put back the setup and plan flags' defaults; the setup flags given (empty: none).
    With --from-plan the plan comes from the file, so a plan flag beside it is a contradiction."""
    given = {dest for dest in SETUP_DESTS if getattr(args, dest) is not None}
    plan_flags = [dest for dest in PLAN_DESTS if getattr(args, dest) is not None]
    if args.from_plan and plan_flags:
        flags = ", ".join("--" + d.replace("_", "-") for d in plan_flags)
        raise ShardwiseInputError(f"--from-plan takes the plan from the file, so {flags} would be ignored; "
                                  f"drop {flags}, or export without --from-plan")
    for dest, default in args.setup_defaults.items():
        if getattr(args, dest) is None:
            setattr(args, dest, default)
    return given


def run(args: argparse.Namespace) -> int:
    # A profile changes predicted times only; the exported config holds none, so it is read
    # and checked (a bad file is an error here as everywhere) but changes nothing in the output.
    profile = profile_from_args(args)
    setup_given = _fill_setup_defaults(args)
    if args.from_plan:
        model, cluster, setup, strategy = scenario_from_plan_file(args, setup_given)
    else:
        if not args.gpu or not args.gpus:
            raise ShardwiseInputError("export needs --gpu and --gpus (or --from-plan FILE)")
        model, cluster, setup, strategy = (model_from_args(args), cluster_from_args(args), setup_from_args(args),
                                           strategy_from_args(args))
    result = export_plan(args.format, model, cluster, setup, strategy)
    if args.output:
        Path(args.output).write_text(result.text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(result.text)
    if getattr(args, "picked_note", None):
        print(args.picked_note, file=sys.stderr)
    if profile is not None:
        sys.stderr.write(f"note: {NOT_IN_EXPORTS}\n")
    if not result.header_in_text:
        sys.stderr.write("".join(f"// {line}\n" for line in result.header.splitlines()))
    elif result.warnings:
        sys.stderr.write("".join(f"note: {w}\n" for w in result.spelled_warnings(flag_for)))
    return 0


# --- --from-plan ----------------------------------------------------------------------

def _load(path: str) -> dict:
    data = read_json_file(path, "--from-plan")
    if not isinstance(data, dict):
        raise ShardwiseInputError(f"--from-plan {path!r} holds no plan: expected recommend --json output or a plan object")
    return data


def _which_plan(plan: dict, index: int, count: int, where: str = "the file") -> str:
    """The plan taken from a recommend file, named for stderr once it is exported: --plan-index counts from 0
    while recommend's table numbers from #1, so `--plan-index 2` meant for "#2" would export #3 without a word."""
    summary = plan.get("strategy") if isinstance(plan, dict) else None
    try:  # the summary as recommend's table labels it (with DP, which a bare Strategy does not know)
        strategy = strategy_from_summary(summary)
        label = plan_label(SimpleNamespace(**{**strategy.model_dump(), "dp": summary.get("dp")}), "cli")
    except (TypeError, ValueError, AttributeError):  # a malformed strategy is refused later, with its own message
        label = None
    return (f"note: exported plan #{index + 1} of {count} in {where} ({label or 'no strategy'}): "
            f"--plan-index {index} (counted from 0)")


def strategy_from_summary(summary: dict) -> Strategy:
    if not isinstance(summary, dict):
        raise ShardwiseInputError("the plan's 'strategy' is not an object with tp, pp, ... keys")
    return Strategy(**{k: summary[k] for k in STRATEGY_KEYS if k in summary})


def setup_values_from_summary(s: dict) -> dict:
    """A recommend --json `setup` object as the values of export's setup flags (dest -> value), post-training
    rollout shape included, so flags given beside --from-plan can replace some and keep the rest."""
    post = s.get("post_training") or {}
    values = {"seq_len": s["seq_len"], "global_batch": s["global_batch"], "mode": s["mode"],
              "lora_rank": s.get("lora_rank", 16), "precision": s["precision"], "framework": s["framework"],
              "moe_dispatcher": s.get("moe_dispatcher", "alltoall"),
              "moe_a2a_overlap": bool(s.get("moe_a2a_overlap", False)), "mean_doc_len": s.get("mean_doc_len"),
              "cuda_graphs": s.get("cuda_graphs", "none"),
              "recompute_modules": None if s.get("recompute_modules") is None else tuple(s["recompute_modules"]),
              "grad_reduce_in_bf16": s.get("grad_reduce_dtype", "fp32") == "bf16",
              "fp8_param_gather": bool(s.get("fp8_param_gather", False))}
    if s["mode"].split("-")[0] in ("grpo", "ppo"):
        values.update({k: v for k, v in post.items() if k in ("prompt_len", "response_len", "group_size", "inference_tp")})
    if post.get("reference_dtype") is not None:
        values["reference_dtype"] = post["reference_dtype"]
    return values


def setup_from_summary(s: dict, args: argparse.Namespace | None = None, given: set[str] = frozenset()) -> TrainingSetup:
    """A recommend --json `setup` object back into a TrainingSetup; the setup flags in `given` (read from `args`)
    replace the file's values and every other value stays the file's (was: one flag dropped them all to defaults)."""
    if not isinstance(s, dict):
        raise TypeError("not an object")
    values = setup_values_from_summary(s)
    if "mode" in given:  # the file's rollout shape and reference belong to its mode, not to the one given
        algorithm = args.mode.split("-")[0]
        if algorithm not in ("grpo", "ppo"):
            for key in ("prompt_len", "response_len", "group_size", "inference_tp"):
                values.pop(key, None)
        if algorithm not in ("dpo", "grpo", "ppo"):
            values.pop("reference_dtype", None)
    if given & {"prompt_len", "response_len"} and "seq_len" not in given and "prompt_len" in values:
        values.pop("seq_len")  # GRPO/PPO: the sequence is prompt + response, so it follows the lengths given
    if "global_batch_tokens" in given:  # the batch given in tokens replaces the file's batch in sequences
        values.pop("global_batch")
    merged = argparse.Namespace(**{**vars(args or argparse.Namespace()), "global_batch_tokens": None,
                                   "prompt_len": None, "response_len": None, "group_size": None,
                                   "inference_tp": None, "reference_dtype": None, **values,
                                   **{dest: getattr(args, dest) for dest in given}})
    return setup_from_args(merged)


def scenario_from_plan_file(args: argparse.Namespace, setup_given: bool):
    data = _load(args.from_plan)
    if isinstance(data.get("after"), dict) and "plans" in data["after"] and "changes" in data:
        data = data["after"]  # what-if --json: the recommendation after the change, the one a user goes on to run
        args.picked_from = "the what-if's 'after' recommendation"  # said in the note
    top = data
    if "plans" in data:
        plans = data["plans"]
        if not isinstance(plans, list):
            raise ShardwiseInputError(f"--from-plan {args.from_plan!r}: 'plans' is not a list (expected recommend "
                                      f"--json output)")
        if not plans:
            raise ShardwiseInputError(f"--from-plan {args.from_plan!r} has no plans (nothing fits?)")
        if not 0 <= args.plan_index < len(plans):
            raise ShardwiseInputError(f"--plan-index {args.plan_index} is out of range: the file has "
                                      f"{len(plans)} plans, --plan-index 0..{len(plans) - 1} (counted from 0: "
                                      f"0 is #1 of recommend's table)")
        plan = plans[args.plan_index]
        args.picked_note = _which_plan(plan, args.plan_index, len(plans), getattr(args, "picked_from", "the file"))
    elif "strategy" in data:
        plan = data
    else:
        raise ShardwiseInputError(f"--from-plan {args.from_plan!r} has neither 'plans' (recommend --json) nor "
                                  f"'strategy' (one plan, evaluate --json), nor a what-if --json's 'after'")
    if not isinstance(plan, dict):
        raise ShardwiseInputError(f"--from-plan {args.from_plan!r}: plan {args.plan_index} is not an object with "
                                  f"'strategy' (expected recommend --json or evaluate --json output)")
    strategy = strategy_from_summary(plan.get("strategy"))

    if args.model or args.params:
        model = model_from_args(args)
    else:
        name = (plan.get("model") or top.get("model") or {}).get("name")
        if not name:
            raise ShardwiseInputError("the plan names no model: pass --model")
        try:
            model = resolve_model(name)
        except ShardwiseInputError as exc:
            raise ShardwiseInputError(f"the plan's model {name!r} is not in the catalog ({error_text(exc)}); pass --model "
                                      f"with its config.json") from None
    cluster = _cluster(args, plan.get("cluster") or top.get("cluster"))
    s = top.get("setup")
    if s:
        try:
            setup = setup_from_summary(s, args, setup_given)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ShardwiseInputError(f"--from-plan {args.from_plan!r}: its 'setup' is not recommend --json's "
                                      f"({type(exc).__name__}: {exc}); pass the setup flags, or use the file "
                                      f"recommend wrote") from None
    else:
        setup = setup_from_args(args)

    summary = plan["strategy"]
    implied = _implied_seq_len(plan)
    if implied is not None and implied != setup.seq_len:
        raise ShardwiseInputError(f"the plan was evaluated at sequence length {implied:,} but this scenario has "
                                  f"{setup.seq_len:,}: pass --seq-len {implied}")
    dp = strategy.dp(cluster.num_gpus)
    if "dp" in summary and summary["dp"] != dp:
        raise ShardwiseInputError(f"the plan has DP={summary['dp']} but this scenario gives DP={dp} "
                                  f"({cluster.num_gpus} GPUs / TP·CP·PP): export it with the scenario it was made for")
    if "grad_accum" in summary and summary["grad_accum"] != max(setup.global_batch // (dp * strategy.micro_batch), 1):
        raise ShardwiseInputError(f"the plan has grad-accum {summary['grad_accum']} but global batch "
                                  f"{setup.global_batch} gives {setup.global_batch // (dp * strategy.micro_batch)}: "
                                  f"pass the plan's --seq-len/--global-batch")
    return model, cluster, setup, strategy


def _cluster(args: argparse.Namespace, c: dict | None):
    """The file's cluster with the cluster flags given replacing its values (--gpus-per-node 4 was ignored
    without --gpu, and a launch script then had the file's hosts); with --gpu, the flags, and the file's GPU
    count when --gpus is not given (it was "--gpus must be a positive whole number, got None")."""
    if args.gpu:
        gpus = args.gpus or (c.get("num_gpus") if isinstance(c, dict) else None)
        if not gpus:
            raise ShardwiseInputError("the plan names no GPU count: pass --gpus with --gpu")
        return build_cluster(args.gpu, gpus, args.gpus_per_node, args.network)
    if not isinstance(c, dict) or not c.get("gpu") or not c.get("num_gpus"):
        raise ShardwiseInputError("the plan names no cluster: pass --gpu and --gpus")
    gpus = args.gpus or c["num_gpus"]
    per_node = args.gpus_per_node or (c.get("gpus_per_node") if gpus == c["num_gpus"] else None)
    return build_cluster(c["gpu"], gpus, per_node, args.network or c.get("network"))


def _implied_seq_len(plan: dict) -> int | None:
    """An evaluate --json object carries no setup, but its tokens per step (tokens/s × step time)
    over the sequences per step (DP × micro-batch × grad-accum) is the sequence length it used."""
    try:
        s, t, tp = plan["strategy"], plan["time"], plan["throughput"]
        sequences = s["dp"] * s["micro_batch"] * s["grad_accum"]
        return round(tp["tokens_per_s"] * t["step_s"] / sequences)
    except (KeyError, TypeError, ZeroDivisionError):
        return None


# --- recommend hooks ------------------------------------------------------------------

def add_recommend_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("export")
    g.add_argument("--export", metavar="FORMAT", choices=FORMATS,
                   help="the format you will export to: rank only plans it can write, and say how many faster "
                        f"ones it refuses and why ({', '.join(FORMATS)}); with --export-dir, write only it")
    g.add_argument("--export-dir", metavar="DIR", help="write every export format for the top plan into DIR")
    g.add_argument("--exports", action="store_true",
                   help="with --json: add each plan's exports ({format: file or refusal}) under plans[i].exports")


def _as_json(result: ExportResult | ExportRefused) -> dict:
    if isinstance(result, ExportRefused):
        return {"refused": str(result)}
    return {"filename": result.filename, "text": result.text, "header": result.header,
            "warnings": list(result.warnings)}


def extend_recommend(args: argparse.Namespace, recommendation, payload: dict) -> None:
    if getattr(args, "exports", False) and not args.json:
        raise ShardwiseInputError("--exports adds each plan's configs to the JSON output: use it with --json "
                                  "(or --export-dir DIR to write the files)")
    if not (getattr(args, "export_dir", None) or getattr(args, "exports", False)):
        return
    if not recommendation.plans:
        why = (f"{recommendation.export_format} writes none of the plans that fit" if recommendation.fitting
               else "no plan fits")
        print(f"{why}, so there is nothing to export", file=sys.stderr)
        return
    model, cluster, setup = model_from_args(args), cluster_from_args(args), setup_from_args(args)
    if args.exports and args.json:
        for plan, out in zip(recommendation.plans, payload["plans"]):
            exports = export_all(model, cluster, setup, strategy_from_summary(plan.strategy.model_dump()))
            out["exports"] = {fmt: _as_json(r) for fmt, r in exports.items()}
    if args.export_dir:
        exports = export_all(model, cluster, setup, strategy_from_summary(recommendation.plans[0].strategy.model_dump()))
        if getattr(args, "export", None):
            exports = {args.export: exports[args.export]}
        write_export_dir(Path(args.export_dir), exports)


def write_export_dir(directory: Path, exports: dict[str, ExportResult | ExportRefused]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    readme = []
    for fmt, result in exports.items():
        if isinstance(result, ExportRefused):
            readme.append(f"{fmt}: refused — {error_text(result)}\n")
            continue
        (directory / result.filename).write_text(result.text)
        readme.append(f"{fmt}: {result.filename}\n" + "".join(f"    {line}\n" for line in result.header.splitlines()))
    (directory / "README.txt").write_text("Exports of the top plan (shardwise recommend --export-dir)\n\n"
                                          + "\n".join(readme))
    written = sum(not isinstance(r, ExportRefused) for r in exports.values())
    print(f"wrote {written} export files and README.txt to {directory}", file=sys.stderr)
