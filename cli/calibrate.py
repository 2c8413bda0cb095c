"""`shardwise calibrate`: one measured run (or a training log, or a CSV of runs) in, a
calibration profile out — before → after for the run, and what the profile changes."""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

from pydantic import ValidationError

from ..engine.calibration.fit_profile import Measurement, fit_profile
from ..engine.calibration.measured_value import tokens_from_log, tokens_from_mfu, tokens_from_step_time
from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from ..engine.evaluate import evaluate
from ..engine.mfu_unit import require_mfu_fraction
from ..engine.plan_label import plan_label
from ..engine.training_logs import LogReading, decode_log, read_log
from ..present import likely
from ..tools.figures import plan_figures
from ..tools.log_run import NO_ACCUMULATION, DerivedBatch, derived_global_batch
from ..tools.measured_peak import measured_peak_of_plan, stated_by_log, with_peak_checks
from .common import (add_plan_args, add_scenario_args, cluster_from_args, model_from_args, print_json,
                     setup_from_args, strategy_from_args)
from .flags import error_text
from .log_reading_text import reading_text

# What a log can say about the run, and the flag that says the same: a flag given beside a log that
# says otherwise is a contradiction (the log is what ran), not something to override silently.
LOG_FLAGS = {"tp": "--tp", "pp": "--pp", "vpp": "--vpp", "cp": "--cp", "ep": "--ep", "etp": "--etp", "zero": "--zero",
             "micro_batch": "--micro-batch", "recompute": "--recompute", "no_sp": "--no-sp", "hsdp": "--hsdp",
             "seq_len": "--seq-len", "global_batch": "--global-batch", "precision": "--precision",
             "framework": "--framework"}
# Scenario flags with no default of their own (None unless given): beside --measured-csv they fill a row's gaps.
CSV_SCENARIO_FLAGS = {"model": "--model", "params": "--params", "gpu": "--gpu", "gpus": "--gpus",
                      "gpus_per_node": "--gpus-per-node", "network": "--network",
                      "global_batch_tokens": "--global-batch-tokens"}
# Of those, the ones a prediction depends on most: named when a log left them to the defaults.
SAID_WHEN_DEFAULTED = ("seq_len", "global_batch", "tp", "pp", "zero", "micro_batch", "recompute", "precision",
                       "framework")
MEASURED_FLAGS = ("measured_tokens_per_s_per_gpu", "measured_step_s", "measured_mfu")


def positive_float(text: str) -> float:
    try:
        value = float(text.replace(",", "").replace("_", ""))
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def add_measured_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("what you measured (one of the first three)")
    g.add_argument("--measured-tokens-per-s-per-gpu", type=positive_float, metavar="X")
    g.add_argument("--measured-step-s", type=positive_float, metavar="S", help="seconds per optimizer step")
    g.add_argument("--measured-mfu", type=positive_float, metavar="F",
                   help="MFU as a fraction of the GPU's dense peak: 0.45 for 45 %% (a value above 1 is refused), "
                        "in shardwise's definition (README)")
    g.add_argument("--measured-peak-gib", type=positive_float, metavar="GIB", help="peak memory per GPU (compared, not fitted)")


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate", help="fit a profile of your cluster from a measured run or a training log",
        description="Fit a compute-efficiency scale (and a network scale, if the run crossed nodes) to your own "
                    "measured run(s), bounded so one noisy run cannot produce nonsense; print before -> after; "
                    "save the profile for --profile.")
    add_scenario_args(p)
    add_plan_args(p)
    add_measured_args(p)
    src = p.add_argument_group("from files")
    src.add_argument("--from-log", metavar="FILE", help="a Megatron-LM, torchtitan, DeepSpeed or HF Trainer log: "
                                                        "its throughput and whatever plan it prints")
    src.add_argument("--measured-csv", metavar="FILE",
                     help="several runs, one per row; columns are this command's flag names without dashes "
                          "(model, gpu, gpus, seq_len, global_batch, tp, pp, ..., measured_tokens_per_s_per_gpu); "
                          "scenario and plan flags given beside it fill the columns a row leaves out")
    p.add_argument("--save", metavar="FILE", help="write the profile here (JSON), for --profile")
    p.add_argument("--json", action="store_true", help="print the profile as JSON")
    p.set_defaults(handler=run, seq_len=None)
    for action in p._actions:  # a --measured-csv row names its own GPU and count: the flags are needed only without it
        if action.dest in ("gpu", "gpus"):
            action.required = False
        if action.dest == "profile":  # shared with the other commands; calibrate makes a profile, run() refuses one
            action.help = argparse.SUPPRESS
    # None = not given, so a flag can be told from a default beside --from-log; run() puts the defaults back.
    p.set_defaults(log_flag_defaults={k: p.get_default(k) for k in LOG_FLAGS}, **{k: None for k in LOG_FLAGS})


# --- measured value -> tokens/s per GPU -----------------------------------------------------

def measured_tokens(args: argparse.Namespace, m_model, cluster, setup) -> float:
    given = [n for n in ("measured_tokens_per_s_per_gpu", "measured_step_s", "measured_mfu") if getattr(args, n)]
    if len(given) != 1:
        raise ShardwiseInputError("calibrate needs exactly one of --measured-tokens-per-s-per-gpu, --measured-step-s, "
                                  f"--measured-mfu (or --from-log / --measured-csv); got {len(given)}")
    if args.measured_tokens_per_s_per_gpu:
        return args.measured_tokens_per_s_per_gpu
    if args.measured_step_s:
        return tokens_from_step_time(args.measured_step_s, setup, cluster)
    return tokens_from_mfu(require_mfu_fraction(args.measured_mfu), m_model, setup, cluster)


def apply_log(args: argparse.Namespace, reading: LogReading) -> list[str]:
    """The log's plan and setup fill the run (the log is what ran); a flag saying otherwise is an error.
    Returns what the log left to the flags' defaults (keys), for the CLI to say."""
    if reading.num_gpus is not None and args.gpus is not None and reading.num_gpus != args.gpus:
        raise ShardwiseInputError(f"the log ran on {reading.num_gpus} GPUs but --gpus is {args.gpus}")
    if args.gpus is None:
        if reading.num_gpus is None:
            raise ShardwiseInputError(f"the {reading.framework} log does not say how many GPUs ran: pass --gpus")
        args.gpus = reading.num_gpus  # the log is what ran, as for the chat and POST /api/calibrate
    given = [n for n in MEASURED_FLAGS if getattr(args, n)]
    if given:
        raise ShardwiseInputError(f"--from-log reads the throughput from the log, so --{given[0].replace('_', '-')} would "
                                  "be ignored: give one or the other")
    if args.measured_peak_gib and reading.peak_gib is not None and abs(args.measured_peak_gib - reading.peak_gib) > 0.05:
        raise ShardwiseInputError(f"the {reading.framework} log says peak memory {reading.peak_gib:.2f} GiB but "
                                  f"--measured-peak-gib is {args.measured_peak_gib:g}: give one or the other")
    said = {k: v for k, v in reading.facts().items() if k != "gpus"}  # the GPU count: checked above
    if args.framework is None and reading.default_framework is not None:
        args.framework = reading.default_framework  # the log cannot say which backend ran: measurement_from_args says so
    for key, value in said.items():
        flag = getattr(args, key, None)
        if flag is not None and flag != value:
            shown = LOG_FLAGS[key] if isinstance(flag, bool) else f"{LOG_FLAGS[key]} {flag}"
            raise ShardwiseInputError(f"the {reading.framework} log says {key}={value} but {shown} was given: the log "
                                      "is what ran (drop the flag, or give the log of the run the flags describe)")
        setattr(args, key, value)
    if "global_batch" in said:
        if args.global_batch_tokens:
            raise ShardwiseInputError(f"the {reading.framework} log says global_batch={said['global_batch']} sequences, "
                                      "so --global-batch-tokens would be ignored: drop it")
    return [k for k in SAID_WHEN_DEFAULTED
            if getattr(args, k, None) is None and not (k == "global_batch" and args.global_batch_tokens)]


def fill_flag_defaults(args: argparse.Namespace) -> None:
    for key, default in getattr(args, "log_flag_defaults", {}).items():
        if getattr(args, key) is None:
            setattr(args, key, default)


def _read_text(path: str, flag: str) -> str:
    """A log or CSV as saved: UTF-8, or UTF-16 / UTF-8 with a BOM (a PowerShell `>` redirect), decoded alike."""
    try:
        return decode_log(Path(path).read_bytes())
    except FileNotFoundError:
        raise ShardwiseInputError(f"{flag} {path!r} does not exist") from None
    except OSError as exc:
        raise ShardwiseInputError(f"{flag} {path!r} cannot be read ({exc.strerror})") from None


def _derive_batch(args: argparse.Namespace, reading: LogReading) -> DerivedBatch | None:
    """A log's global batch the chat derives (torchtitan: local batch x data-parallel degree), set on the args
    when neither --global-batch nor --global-batch-tokens was given: one rule for CLI, REST and chat."""
    if args.global_batch is not None or args.global_batch_tokens:
        return None
    derived = derived_global_batch(reading, args.gpus, args.micro_batch, args.tp, args.pp, args.cp)
    if derived is not None:
        args.global_batch = derived.global_batch
    return derived


def measurement_from_args(args: argparse.Namespace) -> tuple[Measurement, str, frozenset[str]]:
    """The measured run, what to say about how it was read, and the memory settings its log printed."""
    note = ""
    reading, defaulted = None, []
    if args.from_log:
        reading = read_log(_read_text(args.from_log, "--from-log"), f"--from-log {args.from_log!r}")
        assumed = args.framework is None and reading.default_framework is not None
        defaulted = apply_log(args, reading)
        if reading.tokens_per_s_per_gpu is None and reading.step_s is None and args.seq_len is None:
            raise ShardwiseInputError(f"the {reading.framework} log gives samples/s; pass --seq-len to turn it "
                                      "into tokens/s")
        note = reading_text(reading)
        derived = _derive_batch(args, reading)
        if derived is not None:
            note += f"\nderived    {derived.said}"
            defaulted = [k for k in defaulted if k != "global_batch"]
        if assumed:
            note += (f"\nframework  {args.framework} assumed: the {reading.framework} log does not say which backend ran; "
                     "the PyTorch-native stack (DDP/FSDP) is the default (pass --framework deepspeed if it ran DeepSpeed)")
    fill_flag_defaults(args)  # seq_len stays None when unsaid: training_setup's default (4096; grpo/ppo: prompt + response)
    model, cluster, setup, strategy = model_from_args(args), cluster_from_args(args), setup_from_args(args), \
        strategy_from_args(args)
    if defaulted:
        used = {"seq_len": setup.seq_len, "global_batch": setup.global_batch, "precision": setup.precision,
                "framework": setup.framework}
        note += ("\nnot in log  " + ", ".join(f"{k}={used.get(k, getattr(args, k))}" for k in defaulted)
                 + " (defaults: pass the flags if the run differed)")
        if "global_batch" in defaulted and reading.framework in NO_ACCUMULATION:
            note += (f"; the {reading.framework} global batch is local batch x data-parallel degree: pass --micro-batch "
                     "(its local_batch_size) to derive it")
    tokens = tokens_from_log(reading, setup, cluster) if reading else measured_tokens(args, model, cluster, setup)
    peak = args.measured_peak_gib or (reading.peak_gib if reading else None)
    return Measurement(model=model, cluster=cluster, setup=setup, strategy=strategy, tokens_per_s_per_gpu=tokens,
                       peak_gib=peak), note, stated_by_log(reading)


class RowError(Exception):
    """A CSV row that does not parse as calibrate's flags."""


class RowParser(argparse.ArgumentParser):
    """calibrate's flags for one CSV row: errors raise (with the reason) instead of exiting."""

    def __init__(self) -> None:
        super().__init__(add_help=False, exit_on_error=False)
        add_scenario_args(self)
        add_plan_args(self)
        add_measured_args(self)
        self.set_defaults(seq_len=None, from_log=None, measured_csv=None)

    def error(self, message: str):
        raise RowError(message)


def flags_given(args: argparse.Namespace) -> list[str]:
    """The scenario and plan flags given beside --measured-csv, as argv: they fill the columns a row leaves out
    (they were ignored, so `--seq-len 8k` beside rows without seq_len fitted the runs at 4,096 tokens)."""
    argv: list[str] = []
    for dest, flag in {**CSV_SCENARIO_FLAGS, **LOG_FLAGS}.items():
        value = getattr(args, dest, None)  # LOG_FLAGS are None unless given (register)
        if value is None or value is False:
            continue
        argv += [flag] if value is True else [flag, ",".join(value) if isinstance(value, (list, tuple)) else str(value)]
    for dest, flag, default in (("mode", "--mode", "full"), ("lora_rank", "--lora-rank", None)):
        if getattr(args, dest, default) not in (default, None):
            argv += [flag, str(getattr(args, dest))]
    return argv


# Flags that name one setting two ways: a row giving one drops the command line's other (argparse refuses both).
SAME_SETTING = (("--global-batch", "--global-batch-tokens"), ("--model", "--params"))


def _without(argv: list[str], flags: set[str]) -> list[str]:
    out, skip = [], False
    for i, token in enumerate(argv):
        if skip:
            skip = False
            continue
        if token in flags:
            skip = i + 1 < len(argv) and not argv[i + 1].startswith("--")
            continue
        out.append(token)
    return out


def measurements_from_csv(path: str, parser: argparse.ArgumentParser, given: list[str] = ()) -> list[Measurement]:
    text = _read_text(path, "--measured-csv")
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        raise ShardwiseInputError(f"--measured-csv {path!r} has no rows (a header line, then one run per line)")
    out = []
    columns = len(csv.DictReader(text.splitlines()).fieldnames or [])
    for line, row in enumerate(rows, start=2):
        # csv.DictReader keeps a row's extra values under the key None and fills a short row with None: either
        # way the values no longer sit under their columns (an unquoted "7,000" is 7 and a stray "000").
        extra, missing = len(row.get(None) or []), sum(v is None for k, v in row.items() if k is not None)
        if extra or missing:
            hint = ("a number written with a thousands comma? write 7000, not 7,000, or quote it" if extra
                    else "give every column a value, or leave it empty between its commas")
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line} has {columns + extra - missing} values but "
                                      f"the header has {columns} columns ({hint})")
        argv = []
        for key, value in row.items():
            if key is None or value is None or not value.strip():
                continue
            flag = "--" + key.strip().replace("_", "-")
            argv += [flag] if value.strip().lower() in ("true", "yes") and key.strip() == "no_sp" else [flag, value.strip()]
        named = {token for token in argv if token.startswith("--")}
        clashing = {other for pair in SAME_SETTING for flag in pair if flag in named for other in pair}
        try:
            ns = parser.parse_args(_without(list(given), clashing) + argv)  # the row's own values come last and win
        except (argparse.ArgumentError, RowError) as exc:
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line}: {exc} (columns are calibrate's flag "
                                      "names without dashes, e.g. model, gpus, tp, measured_tokens_per_s_per_gpu)") from None
        ns.from_log = ns.measured_csv = None
        refuse_profile(ns, f"--measured-csv {path!r} line {line}: ")
        try:
            out.append(measurement_from_args(ns)[0])
        except ShardwiseInputError as exc:
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line}: {error_text(exc)}") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line}: "
                                      f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}") from None
    return out


# --- output ---------------------------------------------------------------------------------

def peak_lines(run_: Measurement, stated: frozenset[str] = frozenset()) -> list[str]:
    """A measured peak the plan as given does not explain: what recompute or the ZeRO stage, changed alone,
    predicts (engine/peak_settings.py), so a misdescribed run shows before its profile is used."""
    e = evaluate(run_.model, run_.cluster, run_.setup, run_.strategy)
    m = measured_peak_of_plan(run_.peak_gib, run_, run_.strategy, plan_figures(e), stated)
    if m.explained:
        return []
    why = (f"the plan as given does not fit in the {run_.cluster.gpu.id}'s {run_.cluster.gpu.memory_gib:g} GiB, yet the "
           "run ran" if not m.plan_fits else "the measured peak is outside the predicted band")
    if not m.alternatives:
        return [f"  {why}; the log states {' and '.join(m.stated_by_log) or 'the settings that move memory most'}, so "
                "the difference is in what the model counts or in the figure (reserved vs allocated, GB vs GiB)"]
    lines = [f"  {why}: the run probably differs from its description (the profile below is fitted to the plan as "
             "given: calibrate again with the setting the run used); changed alone:"]
    for a in m.alternatives:
        name = f"--recompute {a.value}" if a.setting == "recompute" else f"--zero {a.value}"
        band = f" (likely {a.likely_gib[0]:.1f}-{a.likely_gib[1]:.1f})" if a.likely_gib else ""
        lines.append(f"    {name:<22} {a.predicted_gib:6.1f} GiB{band}{'  <- holds the measured peak' if a.holds_measured else ''}")
    if not any(a.holds_measured for a in m.alternatives):
        lines.append(f"    none holds {m.measured_gib:.1f} GiB: the difference is elsewhere (a setting shardwise does not "
                     "model, such as checkpointing some layers or CPU offload, or the figure: reserved vs allocated, GB vs GiB)")
    return lines


def unfit_lines(run_: Measurement) -> list[str]:
    """A run that ran, described by a plan predicted not to fit: without a measured peak nothing else says so,
    and the profile would be fitted to a plan that cannot be the one that ran (70B, TP1 ZeRO-1 on 8 GPUs)."""
    e = evaluate(run_.model, run_.cluster, run_.setup, run_.strategy)
    if e.memory.fits:
        return []
    return [f"  the plan as given does not fit in the {run_.cluster.gpu.id}'s {run_.cluster.gpu.memory_gib:g} GiB "
            f"(predicted peak {e.memory.total_gib:.1f} GiB per GPU), yet the run ran: it probably differs from its "
            "description (the profile below is fitted to the plan as given: calibrate again with the settings the "
            "run used, e.g. --tp, --pp, --zero, --recompute, --micro-batch)"]


def _run_label(run_: Measurement) -> str:
    """The measured plan named as every other CLI line names plans (TP=4 PP=4 DP=4 ZeRO-1 mb=1 …); the profile
    keeps the engine's file-name style (TP4 PP4 ZeRO1 mb1 rc-selective), which read as a different notation."""
    return plan_label(evaluate(run_.model, run_.cluster, run_.setup, run_.strategy).strategy, "cli")


def render(profile: CalibrationProfile, note: str, runs: list[Measurement] = (), stated: frozenset[str] = frozenset()) -> str:
    lines = [note] if note else []
    for i, r in enumerate(profile.runs):
        before, after = r.predicted_before, r.predicted_after
        m = r.measured_tokens_per_s_per_gpu
        lines.append(f"run        {r.model}, {r.gpus} GPUs, seq {r.seq_len:,}, global batch {r.global_batch:,}, "
                     f"{_run_label(runs[i]) if len(runs) == len(profile.runs) else r.plan}")
        lines.append(f"  measured   {m:,.0f} tokens/s/GPU")
        lines.append(f"  predicted  {before:,.0f} before -> {after:,.0f} after  "
                     f"(error {before / m - 1:+.1%} -> {after / m - 1:+.1%})")
        if r.measured_peak_gib is not None and r.predicted_peak_gib is not None:
            lines.append(f"  peak memory measured {r.measured_peak_gib:.1f} GiB, predicted {r.predicted_peak_gib:.1f} GiB "
                         f"({r.predicted_peak_gib / r.measured_peak_gib - 1:+.1%}; compared, not fitted)")
            if i < len(runs):
                lines += peak_lines(runs[i], stated)
        elif i < len(runs):
            lines += unfit_lines(runs[i])
    lines.append(f"profile    compute ×{profile.compute_scale:.3f} for {profile.gpu}, {profile.precision}, {profile.framework}")
    if profile.network:
        lines.append(f"           network ×{profile.comm_scale:.3f} for {profile.network} (cross-node traffic)")
    else:
        lines.append("           network unchanged (the run stayed in one node: nothing to learn about it)")
    for name in profile.at_bound:
        lines.append(f"warning: {name} hit its bound (engine/assumptions/calibration_bounds.py): the measured run is "
                     "further from the model than a cluster difference explains; check the run (warm-up steps, "
                     "stragglers, the flags describing it)")
    network = ", and on this network across nodes (network)" if profile.network else ""
    lines.append(f"changes    every prediction with --profile on this GPU, precision and framework (compute){network}; "
                 "the 80 % band narrows only where the transfer check supports it (docs/performance.md)")
    return "\n".join(lines)


def best_plan_lines(run_: Measurement, profile: CalibrationProfile) -> list[str]:
    """What the profile changes for this scenario's recommendation: the best plan without and with it."""
    from ..engine.search import recommend

    lines = []
    for label, p in (("without", None), ("with", profile)):
        rec = recommend(run_.model, run_.cluster, run_.setup, top_k=1, profile=p)
        if not rec.plans:
            return []
        best = rec.plans[0]
        lines.append(f"  {label + ' the profile':<21}{plan_label(best.strategy, 'cli')}: "
                     f"{best.throughput.tokens_per_s_per_gpu:,.0f} tokens/s/GPU, "
                     f"likely {likely(best.throughput.tokens_per_s_per_gpu_range)}")
    return ["best plan for this scenario (recommend):", *lines]


def refuse_profile(args: argparse.Namespace, where: str = "") -> None:
    """calibrate fits from the measured runs alone: a --profile beside them was read by nothing (a starting
    point is not how the fit works), so it is refused rather than ignored."""
    if getattr(args, "profile", None):
        raise ShardwiseInputError(f"{where}calibrate fits a profile from the measured run(s) and does not take "
                                  "--profile; to fit several runs together, put them in --measured-csv")


def run(args: argparse.Namespace) -> int:
    refuse_profile(args)
    if args.measured_csv:
        beside = [f"--{n.replace('_', '-')}" for n in ("from_log", *MEASURED_FLAGS, "measured_peak_gib") if getattr(args, n)]
        if beside:
            raise ShardwiseInputError(f"--measured-csv holds the measured runs, so {', '.join(beside)} would be "
                                      "ignored: give one or the other (or add the run as a row)")
        given = flags_given(args)
        runs = measurements_from_csv(args.measured_csv, RowParser(), given)
        note = f"{args.measured_csv}: runs read from CSV" + (
            f" (a column a row leaves out comes from {' '.join(given)})" if given else "")
        stated = frozenset()
    elif not args.gpu or not (args.gpus or args.from_log):
        raise ShardwiseInputError("calibrate needs --gpu and --gpus (the measured run's; a log that prints its GPU count "
                                  "gives --gpus), or --measured-csv FILE whose rows name them")
    else:
        run_, note, stated = measurement_from_args(args)
        runs = [run_]
    profile = with_peak_checks(fit_profile(runs), runs, stated)
    best = best_plan_lines(runs[0], profile) if len(runs) == 1 and not args.json else []
    if args.save:
        try:
            Path(args.save).write_text(profile.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise ShardwiseInputError(f"--save {args.save!r} cannot be written ({exc.strerror})") from None
    if args.json:
        print_json(profile)
    else:
        print("\n".join([render(profile, note, runs, stated), *best]))
        if args.save:
            print(f"saved      {args.save} (use it with --profile {args.save})")
    return 0

