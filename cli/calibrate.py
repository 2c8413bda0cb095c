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
from ..engine.training_logs import LogReading, read_log
from ..present import likely
from .common import (add_plan_args, add_scenario_args, cluster_from_args, model_from_args, print_json,
                     setup_from_args, strategy_from_args)

DEFAULT_SEQ_LEN = 4096  # the scenario default, when neither flag nor log gives one


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
                   help="MFU as a fraction (0.45) or percent (45), in shardwise's definition (README)")
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
                          "(model, gpu, gpus, seq_len, global_batch, tp, pp, ..., measured_tokens_per_s_per_gpu)")
    p.add_argument("--save", metavar="FILE", help="write the profile here (JSON), for --profile")
    p.add_argument("--json", action="store_true", help="print the profile as JSON")
    p.set_defaults(handler=run, seq_len=None)


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
    return tokens_from_mfu(args.measured_mfu, m_model, setup, cluster)


def apply_log(args: argparse.Namespace, reading: LogReading) -> None:
    """The log's plan and setup replace the flags' (the log is what ran)."""
    if reading.num_gpus is not None and reading.num_gpus != args.gpus:
        raise ShardwiseInputError(f"the log ran on {reading.num_gpus} GPUs but --gpus is {args.gpus}")
    for key, value in reading.plan.items():
        setattr(args, key, value)
    for key in ("seq_len", "global_batch", "precision"):
        if getattr(reading, key) is not None:
            setattr(args, key, getattr(reading, key))
            if key == "global_batch":
                args.global_batch_tokens = None
    if reading.setup_framework:
        args.framework = reading.setup_framework


def _read_text(path: str, flag: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except FileNotFoundError:
        raise ShardwiseInputError(f"{flag} {path!r} does not exist") from None
    except OSError as exc:
        raise ShardwiseInputError(f"{flag} {path!r} cannot be read ({exc.strerror})") from None


def measurement_from_args(args: argparse.Namespace) -> tuple[Measurement, str]:
    note = ""
    reading = None
    if args.from_log:
        reading = read_log(_read_text(args.from_log, "--from-log"), f"--from-log {args.from_log!r}")
        apply_log(args, reading)
        if reading.tokens_per_s_per_gpu is None and reading.step_s is None and args.seq_len is None:
            raise ShardwiseInputError(f"the {reading.framework} log gives samples/s; pass --seq-len to turn it "
                                      "into tokens/s")
        note = f"read from {reading.framework} log ({reading.entries} entries): " + ", ".join(reading.found())
    if args.seq_len is None:
        args.seq_len = DEFAULT_SEQ_LEN
    model, cluster, setup, strategy = model_from_args(args), cluster_from_args(args), setup_from_args(args), \
        strategy_from_args(args)
    tokens = tokens_from_log(reading, setup, cluster) if reading else measured_tokens(args, model, cluster, setup)
    peak = args.measured_peak_gib or (reading.peak_gib if reading else None)
    return Measurement(model=model, cluster=cluster, setup=setup, strategy=strategy, tokens_per_s_per_gpu=tokens,
                       peak_gib=peak), note


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


def measurements_from_csv(path: str, parser: argparse.ArgumentParser) -> list[Measurement]:
    text = _read_text(path, "--measured-csv")
    rows = list(csv.DictReader(text.splitlines()))
    if not rows:
        raise ShardwiseInputError(f"--measured-csv {path!r} has no rows (a header line, then one run per line)")
    out = []
    for line, row in enumerate(rows, start=2):
        argv = []
        for key, value in row.items():
            if key is None or value is None or not value.strip():
                continue
            flag = "--" + key.strip().replace("_", "-")
            argv += [flag] if value.strip().lower() in ("true", "yes") and key.strip() == "no_sp" else [flag, value.strip()]
        try:
            ns = parser.parse_args(argv)
        except (argparse.ArgumentError, RowError) as exc:
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line}: {exc} (columns are calibrate's flag "
                                      "names without dashes, e.g. model, gpus, tp, measured_tokens_per_s_per_gpu)") from None
        ns.from_log = ns.measured_csv = None
        try:
            out.append(measurement_from_args(ns)[0])
        except ShardwiseInputError as exc:
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line}: {exc}") from None
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ShardwiseInputError(f"--measured-csv {path!r} line {line}: "
                                      f"{'.'.join(str(x) for x in first['loc'])}: {first['msg']}") from None
    return out


# --- output ---------------------------------------------------------------------------------

def render(profile: CalibrationProfile, note: str) -> str:
    lines = [note] if note else []
    for r in profile.runs:
        before, after = r.predicted_before, r.predicted_after
        m = r.measured_tokens_per_s_per_gpu
        lines.append(f"run        {r.model}, {r.gpus} GPUs, seq {r.seq_len:,}, global batch {r.global_batch:,}, {r.plan}")
        lines.append(f"  measured   {m:,.0f} tokens/s/GPU")
        lines.append(f"  predicted  {before:,.0f} before -> {after:,.0f} after  "
                     f"(error {before / m - 1:+.1%} -> {after / m - 1:+.1%})")
        if r.measured_peak_gib is not None and r.predicted_peak_gib is not None:
            lines.append(f"  peak memory measured {r.measured_peak_gib:.1f} GiB, predicted {r.predicted_peak_gib:.1f} GiB "
                         f"({r.predicted_peak_gib / r.measured_peak_gib - 1:+.1%}; compared, not fitted)")
    lines.append(f"profile    compute ×{profile.compute_scale:.3f} for {profile.gpu}, {profile.precision}, {profile.framework}")
    if profile.network:
        lines.append(f"           network ×{profile.comm_scale:.3f} for {profile.network} (cross-node traffic)")
    else:
        lines.append("           network unchanged (the run stayed in one node: nothing to learn about it)")
    for name in profile.at_bound:
        lines.append(f"warning: {name} hit its bound (engine/assumptions/calibration_bounds.py): the measured run is "
                     "further from the model than a cluster difference explains; check the run (warm-up steps, "
                     "stragglers, the flags describing it)")
    lines.append("changes    every prediction with --profile on this GPU, precision and framework (compute), and on "
                 "this network across nodes (network); the 80 % band narrows only where the transfer check supports it "
                 "(docs/performance.md)")
    return "\n".join(lines)


def best_plan_lines(run_: Measurement, profile: CalibrationProfile) -> list[str]:
    """What the profile changes for this scenario's recommendation: the best plan without and with it."""
    from ..engine.plan_label import plan_label
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


def run(args: argparse.Namespace) -> int:
    if args.measured_csv:
        runs, note = measurements_from_csv(args.measured_csv, RowParser()), f"{args.measured_csv}: runs read from CSV"
    else:
        run_, note = measurement_from_args(args)
        runs = [run_]
    profile = fit_profile(runs)
    best = best_plan_lines(runs[0], profile) if len(runs) == 1 and not args.json else []
    if args.save:
        try:
            Path(args.save).write_text(profile.model_dump_json(indent=2) + "\n")
        except OSError as exc:
            raise ShardwiseInputError(f"--save {args.save!r} cannot be written ({exc.strerror})") from None
    if args.json:
        print_json(profile)
    else:
        print("\n".join([render(profile, note), *best]))
        if args.save:
            print(f"saved      {args.save} (use it with --profile {args.save})")
    return 0

