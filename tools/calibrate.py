"""calibrate_to_measurement: the user says what their run measured (tokens/s per GPU, a step time, an
MFU, or a pasted training log read by engine/training_logs); the tool fits the profile that run implies (engine/calibration/fit_profile.py) and says what it would change, with the command
that saves it. The chat offers it; applying it to later answers is `--profile` (the model cannot
store files)."""

from __future__ import annotations

import shlex

from pydantic import Field

from ..engine.calibration.fit_profile import Measurement, fit_profile
from ..engine.calibration.measured_value import (mfu_fraction, tokens_from_log, tokens_from_mfu,
                                                      tokens_from_step_time)
from ..engine.training_logs import read_log
from ..engine.calibration.intervals import memory_band
from ..engine.calibration.profile import CalibrationProfile
from ..engine.errors import ShardwiseInputError
from ..engine.evaluate import evaluate
from ..engine.mfu_unit import require_mfu_fraction
from .base import Result, Tool
from .figures import ScenarioFacts, plan_figures, r, scenario_facts
from .log_run import DerivedBatch, apply_reading, derived_global_batch
from .measured_peak import MeasuredPeak, measured_peak_of_plan, stated_by_log
from .scenario import Args, Plan, Scenario

SCENARIO_FLAGS = (("model", "--model"), ("params", "--params"), ("gpu", "--gpu"), ("gpus", "--gpus"),
                  ("gpus_per_node", "--gpus-per-node"), ("network", "--network"), ("seq_len", "--seq-len"),
                  ("global_batch", "--global-batch"), ("global_batch_tokens", "--global-batch-tokens"),
                  ("mode", "--mode"), ("lora_rank", "--lora-rank"), ("precision", "--precision"),
                  ("framework", "--framework"))
PLAN_FLAGS = (("tp", "--tp"), ("pp", "--pp"), ("vpp", "--vpp"), ("cp", "--cp"), ("ep", "--ep"), ("etp", "--etp"),
              ("zero", "--zero"), ("micro_batch", "--micro-batch"), ("recompute", "--recompute"))
PROFILE_FILE = "my-cluster.json"


class CalibrateArgs(Args):
    scenario: Scenario
    plan: Plan
    measured_tokens_per_s_per_gpu: float | None = None
    measured_step_s: float | None = None
    measured_mfu: float | None = Field(None, description="a fraction of the GPU's dense peak: 0.45 for 45 % MFU")
    log: str | None = None


MEASURED = ("measured_tokens_per_s_per_gpu", "measured_step_s", "measured_mfu", "log")


class CalibrateResult(Result):
    scenario: ScenarioFacts
    plan_label: str
    measured_tokens_per_s_per_gpu: float
    measured_from: str = Field(description="what the user gave: tokens/s per GPU, step time, MFU or a log")
    log_read: str | None = Field(None, description="what was read from the log (format, values)")
    measured_step_s: float | None = Field(None, description="the run's seconds per step, when given or logged")
    measured_mfu_percent: float | None = None
    predicted_before: float = Field(description="tokens/s per GPU the shipped calibration predicts for this run")
    predicted_after: float = Field(description="... with the profile this run implies")
    error_before_percent: float
    error_after_percent: float
    compute_scale: float
    comm_scale: float
    network: str | None = Field(description="network the comm scale applies to (null: the run stayed in one node)")
    at_bound: list[str] = Field(description="scales clipped to their bound: the run is further off than a cluster")
    command: str = Field(description="the command that saves this profile; then pass --profile to any command")
    predicted_peak_gib: float | None = Field(None, description="the plan's predicted peak memory per GPU, when the log "
                                             "printed a measured peak (a peak is compared, not fitted)")
    peak_gib_likely: list[float] | None = Field(None, description="[low, high]: 80 % interval of that peak, GiB")
    peak_likely_basis: str | None = Field(None, description="what that interval comes from")
    measured_peak: MeasuredPeak | None = None
    profile: CalibrationProfile = Field(description="the profile itself (what the command saves)")

    def hidden_from_model(self) -> set[str]:
        return {"profile"}

    def summary(self) -> str:
        return (f"calibrated on {self.plan_label}: compute ×{self.compute_scale:.3f}, "
                f"{self.predicted_before:,.0f} -> {self.predicted_after:,.0f} tokens/s/GPU [{self.id}]")


def logged_fields(reading) -> set[str]:
    """The scenario and plan fields a log gives `calibrate --from-log` itself (its GPU count, layout, batch …);
    the framework too where the log implies a default, which the CLI applies alike."""
    if reading is None:
        return set()
    return set(reading.facts()) | ({"framework"} if reading.default_framework else set())


def command_line(scenario: Scenario, plan: Plan, args: CalibrateArgs, from_log: set[str] = frozenset()) -> str:
    """The CLI command that fits the same profile; with a log, the flags the log gives itself are left out."""
    words = ["shardwise", "calibrate"]
    for field, flag in SCENARIO_FLAGS:
        value = getattr(scenario, field)
        if value is not None and field not in from_log:
            words += [flag, str(value)]
    for field, flag in PLAN_FLAGS:
        value = getattr(plan, field)
        if value is not None and field not in from_log:
            words += [flag, str(value)]
    if scenario.moe_dispatcher not in (None, "alltoall"):
        words += ["--moe-dispatcher", scenario.moe_dispatcher]
    if scenario.moe_a2a_overlap:
        words.append("--moe-a2a-overlap")
    if scenario.cuda_graphs not in (None, "none"):
        words += ["--cuda-graphs", scenario.cuda_graphs]
    if plan.sequence_parallel is False:
        words.append("--no-sp")
    if args.log is not None:
        words += ["--from-log", "train.log"]
    elif args.measured_tokens_per_s_per_gpu is not None:
        words += ["--measured-tokens-per-s-per-gpu", f"{args.measured_tokens_per_s_per_gpu:g}"]
    elif args.measured_mfu is not None:
        words += ["--measured-mfu", f"{args.measured_mfu:g}"]
    else:
        words += ["--measured-step-s", f"{args.measured_step_s:g}"]
    words += ["--save", PROFILE_FILE]
    return shlex.join(words)


def log_summary(reading, framework_assumed: str | None = None, derived: DerivedBatch | None = None) -> str:
    entries = f"{reading.entries} throughput {'entry' if reading.entries == 1 else 'entries'}"
    assumed = (f"; framework {framework_assumed} assumed: the log does not say which backend ran, so the PyTorch-native "
               "stack (DDP/FSDP) is the default — say if it ran DeepSpeed") if framework_assumed else ""
    batch = f"; {derived.said}" if derived is not None else ""
    return f"{reading.framework} log ({entries}; read: {reading.said()}{batch}{assumed})"


def calibrate(args: CalibrateArgs) -> CalibrateResult:
    given = [name for name in MEASURED if getattr(args, name) is not None]
    if len(given) != 1:
        raise ShardwiseInputError("give exactly one of " + ", ".join(MEASURED))
    scenario, plan, reading, derived = args.scenario, args.plan, None, None
    if args.log is not None:
        reading = read_log(args.log, "the pasted log")
        if reading.tokens_per_s_per_gpu is None and reading.step_s is None and reading.seq_len is None \
                and scenario.seq_len is None:
            raise ShardwiseInputError(f"the {reading.framework} log gives samples/s; give the sequence length to turn "
                                      "it into tokens/s")
        scenario, plan = apply_reading(scenario, plan, reading)
        if args.scenario.global_batch is None and not args.scenario.global_batch_tokens:  # derived, not the user's
            derived = derived_global_batch(reading, scenario.gpus, plan.micro_batch, plan.tp, plan.pp, plan.cp)
    elif not getattr(args, given[0]) > 0:
        raise ShardwiseInputError("the measured value must be a positive number")
    resolved = scenario.resolve()
    setup, cluster = resolved.setup, resolved.cluster
    if reading is not None:
        m, step_s = tokens_from_log(reading, setup, cluster), reading.step_s
    elif args.measured_mfu is not None:
        m, step_s = tokens_from_mfu(require_mfu_fraction(args.measured_mfu), resolved.model, setup, cluster), None
    elif args.measured_step_s is not None:
        m, step_s = tokens_from_step_time(args.measured_step_s, setup, cluster), args.measured_step_s
    else:
        m, step_s = args.measured_tokens_per_s_per_gpu, None
    run = Measurement(resolved.model, resolved.cluster, resolved.setup, plan.strategy(), m)
    p = fit_profile([run], with_memory=False)
    s = p.runs[0]
    peak = _peak_against_prediction(reading.peak_gib if reading else None, resolved, plan, stated_by_log(reading))
    return CalibrateResult(
        scenario=scenario_facts(scenario, resolved), plan_label=plan.label(), measured_tokens_per_s_per_gpu=r(m, 1),
        measured_from="log" if reading else given[0].removeprefix("measured_"),
        log_read=log_summary(reading, scenario.framework if args.scenario.framework is None
                             and reading.setup_framework is None else None, derived) if reading else None,
        measured_step_s=r(step_s, 3), measured_mfu_percent=r(100 * mfu_fraction(args.measured_mfu), 1)
        if args.measured_mfu is not None else None,
        predicted_before=r(s.predicted_before, 0), predicted_after=r(s.predicted_after, 0),
        error_before_percent=r(100 * (s.predicted_before / m - 1), 1),
        error_after_percent=r(100 * (s.predicted_after / m - 1), 1), compute_scale=r(p.compute_scale),
        comm_scale=r(p.comm_scale), network=p.network, at_bound=p.at_bound,
        command=command_line(scenario, plan, args, logged_fields(reading)), profile=p, **peak)


def _peak_against_prediction(peak_gib: float | None, resolved, plan: Plan, stated: frozenset[str]) -> dict:
    """A log's measured peak set against the plan's predicted peak and its band, uncalibrated: the profile
    scales time, not memory (engine/calibration/fit_profile.py, with_memory=False)."""
    if peak_gib is None:
        return {}
    f = plan_figures(evaluate(resolved.model, resolved.cluster, resolved.setup, plan.strategy()))
    return {"predicted_peak_gib": f.memory_gib, "peak_gib_likely": f.memory_gib_likely,
            "peak_likely_basis": memory_band(resolved.setup).basis if f.memory_gib_likely else None,
            "measured_peak": measured_peak_of_plan(peak_gib, resolved, plan.strategy(), f, stated)}


CALIBRATE = Tool(
    "calibrate_to_measurement", "Calibrate to the user's measured run or pasted log.",
    CalibrateArgs, CalibrateResult, calibrate, scenario_of=lambda a: run_scenario(a))


def measured_setup(args: CalibrateArgs) -> tuple[Scenario, Plan]:
    """The scenario and plan the measured run had: a pasted log's values over the arguments'."""
    if args.log is None:
        return args.scenario, args.plan
    try:
        return apply_reading(args.scenario, args.plan, read_log(args.log))
    except ShardwiseInputError:
        return args.scenario, args.plan


def run_scenario(args: CalibrateArgs) -> Scenario:
    return measured_setup(args)[0]
